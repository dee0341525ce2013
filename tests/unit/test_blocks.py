from __future__ import annotations

from bot.views.post_blocks import build_blocks, build_fallback_text
from socialrag.models import Draft, MemberMayCare, PaperMeta, SocialSignal

META = PaperMeta(
    7, "Attention <Is> All", "https://arxiv.org/abs/1706.03762", ("A. V", "N. S", "et al."), "NeurIPS", 2017, None
)


def draft(**kw: object) -> Draft:
    base = dict(
        team_id="T",
        channel_id="C",
        paper=META,
        style="template",
        explanation="For {@U1} and {@U2}: *key idea* & more.",
        signals=(SocialSignal(MemberMayCare("U1", 0.6), 1.0, members=("U1",)),),
        thread_link="https://lab.slack.com/archives/C/p1",
        thread_title="Earlier paper",
        mentions=("U1",),
        named={"U1": "ana", "U2": "ben"},
    )
    base.update(kw)
    return Draft(**base)  # type: ignore[arg-type]


def test_the_title_is_the_headline_and_mentions_go_only_to_who_may_be_notified() -> None:
    blocks = build_blocks(draft())
    assert [b["type"] for b in blocks] == ["section", "context", "section", "context", "actions"]
    assert blocks[0]["text"]["text"] == "*<https://arxiv.org/abs/1706.03762|Attention &lt;Is&gt; All>*"
    assert blocks[1]["elements"][0]["text"] == "A. V, N. S, et al. · NeurIPS 2017"
    assert blocks[2]["text"]["text"] == "For <@U1> and ben: *key idea* &amp; more."
    assert blocks[3]["elements"][0]["text"] == "<https://lab.slack.com/archives/C/p1|Earlier thread: Earlier paper>"
    assert all(b.get("text", {}).get("verbatim", True) for b in blocks)


def test_fallback_text_starts_with_the_title() -> None:
    assert (
        build_fallback_text(draft())
        == "<https://arxiv.org/abs/1706.03762|Attention &lt;Is&gt; All>: For <@U1> and ben: key idea &amp; more."
    )


def test_no_thread_no_authors_no_venue_fewer_blocks() -> None:
    bare = PaperMeta(7, "A title", "https://arxiv.org/abs/1706.03762", (), None, None, None)
    assert [b["type"] for b in build_blocks(draft(thread_link=None, paper=bare))] == ["section", "section", "actions"]


def test_a_long_title_is_cut_at_a_word() -> None:
    long = PaperMeta(7, "word " * 80, "https://arxiv.org/abs/1", (), None, None, None)
    head = build_blocks(draft(paper=long))[0]["text"]["text"]
    assert len(head) < 260 and head.endswith("…>*")


def test_the_demo_lists_the_passed_over_papers_by_score_and_says_when_variety_reordered() -> None:
    from bot.demo.workflow import passed_over
    from socialrag.models import Candidate

    ranked = [Candidate(1, "Pick", 0.30, "catalog"), Candidate(2, "Close to last post", 0.35, "catalog")]
    ranked += [Candidate(3, "Lower", 0.10, "catalog"), Candidate(4, "Middle", 0.20, "catalog")]
    lines = passed_over(ranked)
    assert lines[0] == (
        "  Picked at score 0.300; variety put it ahead of 1 paper that scored higher but is close to a recent post "
        "or to a paper ranked above"
    )
    assert [line.split()[1] for line in lines[2:]] == ["Close", "Middle", "Lower"]
    assert lines[2].endswith("[moved down for variety]") and not lines[3].endswith("]")
    assert passed_over(ranked[:1]) == ["  Picked at score 0.300", "  Passed over (highest score first):"]


def test_each_post_carries_three_feedback_buttons_with_their_counts() -> None:
    from bot.views.post_blocks import FEEDBACK_BLOCK

    buttons = build_blocks(draft(), {"relevant": 2, "save": 1})[-1]
    assert buttons["block_id"] == FEEDBACK_BLOCK
    labels = [e["text"]["text"] for e in buttons["elements"]]
    assert labels == ["Relevant · 2", "Not for us", "Save · 1"]
    assert [e["action_id"] for e in buttons["elements"]] == [
        "feedback_relevant",
        "feedback_not_for_us",
        "feedback_save",
    ]


def test_how_a_post_was_received_reads_clicks_as_words_and_drops_names_no_emoji_has() -> None:
    from bot.views.post_blocks import describe_received

    shown = describe_received({"button:not-for-us": 1, "+1": 2, "<!here>": 5, "button:save": 1}, 1)
    assert shown == ":+1: 2, not for us 1, saved 1, 1 reply"
    assert describe_received({}, 0) == "no reactions yet"


def test_a_digest_has_a_line_and_a_row_of_buttons_per_paper() -> None:
    from dataclasses import replace

    from bot.views.post_blocks import build_digest_blocks, build_digest_text, digest_paper
    from socialrag.models import Digest

    papers = [replace(META, paper_id=i, title=f"Paper <{i}> @here") for i in (7, 8, 9)]
    d = Digest(
        "T",
        "C",
        tuple(draft(paper=p, thread_link=None if p.paper_id == 8 else f"https://x/p{p.paper_id}") for p in papers),
    )
    blocks = build_digest_blocks(d, {8: {"relevant": 2}})
    rows = [b for b in blocks if b["type"] == "actions"]
    assert [digest_paper(b["block_id"]) for b in rows] == [7, 8, 9]
    assert [e["value"] for e in rows[1]["elements"]] == ["relevant:8", "not_for_us:8", "save:8"]
    assert (
        rows[1]["elements"][0]["text"]["text"] == "Relevant · 2"
        and rows[0]["elements"][0]["text"]["text"] == "Relevant"
    )
    assert sum(1 for b in blocks if b["type"] == "context") == 2, "a thread link where a paper has one"
    text = str(blocks)
    assert "<7>" not in text and "&lt;7&gt;" in text, "titles are escaped"
    assert all(b.get("text", {}).get("verbatim", True) for b in blocks if b["type"] == "section")
    assert build_digest_text(d).startswith("This week's 3 papers: <https://arxiv.org/abs/1706.03762|Paper &lt;7&gt;")
    assert digest_paper("paperping_feedback") is None and digest_paper("paperping_feedback:x") is None


def test_a_linked_label_keeps_no_invisible_character() -> None:
    """A source's title with a right-to-left override (U+202E) turned the rest of the line around wherever it was
    linked: in `/paperping list`, "saved by ..." after it read backwards. Its letters stay; the override goes."""
    from bot.views.post_blocks import link

    shown = link("https://arxiv.org/abs/2401.00001", "Attention\u202e is all\u200b you need\u2066")
    assert shown == "<https://arxiv.org/abs/2401.00001|Attention is all you need>", shown
    assert link("", "a\u202eb") == "ab"
