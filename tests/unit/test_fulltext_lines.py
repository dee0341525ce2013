"""What a paper's full text adds where members read, in its pure parts: a gist from the introduction's contribution
sentences (or the conclusion) when the abstract is missing or poor, on the real papers of ``tests/data/fulltext/``;
the post's section line, found from a member's recent replies, checked (the section stored, the words in both the
passage and the replies, the member the one who replied, nothing else stated) and hostile text made data; the
check of an answer written from a passage."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

from socialrag.knowledge.fulltext import parse_fulltext, passages
from socialrag.recommender.explain.passage_answer import check_passage_answer, given, names_in, parse_answer
from socialrag.recommender.explain.section_line import check_section_line, render_section_line
from socialrag.recommender.explain.summary import body_source, poor_abstract, summarize
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper
from socialrag.recommender.retrieve.section_links import link_section, phrases_in, recent_replies
from socialrag.rows import MemberInfo, PaperInfo, Reply, Share

DATA = Path(__file__).resolve().parents[1] / "data" / "fulltext"
NOW = datetime(2024, 3, 14, 9, 0, tzinfo=UTC)


@cache
def body(name: str) -> tuple[tuple[str, str], ...]:
    read = parse_fulltext((DATA / name).read_bytes(), "pdf" if name.endswith(".pdf") else "jats")
    return tuple((p.section, p.text) for p in passages(read))


def test_a_poor_abstracts_gist_comes_from_the_introductions_contribution_sentences() -> None:
    lysis = body("1471-2180-11-174.nxml")
    assert poor_abstract(None) and poor_abstract("Abstract not available.") and not poor_abstract("word " * 30)
    assert summarize(None, body=lysis) == (
        "The authors used a simple experimental setup to assess how lysis time stochasticity is affected by allelic "
        "variation in the S protein, late promoter pR' activity, host growth rate, and the timing of energy poison "
        "KCN addition."
    )
    rvf = summarize("", body=body("pntd.0002065.nxml"))
    assert rvf is not None and rvf.startswith("The objective of the present study was to detect circulation of RVFV")
    # a PDF's licence and correspondence lines, run into its introduction, are never a gist
    fes = body_source(body("jner-13-2016-de-marchis.pdf"))
    assert fes is not None and fes.startswith("The present study is based on the hypothesis")
    assert "Creative Commons" not in fes
    # the abstract, when it says enough, and the tldr before both
    abstract = "We measure how long lysis takes in single cells and find that it varies widely across hosts. " * 2
    assert summarize(abstract, body=lysis, limit=120) == summarize(abstract, limit=120)
    assert summarize(None, "A tldr.", body=lysis) == "A tldr."


def test_without_an_introduction_the_conclusion_gives_the_gist() -> None:
    closing = [(s, t) for s, t in body("1471-2180-11-174.nxml") if not s.startswith("Background")]
    said = summarize(None, body=closing)
    assert said is not None and said.startswith("Even in a seemingly uniform environment, the lysis time can vary")
    discussion = [(s, t) for s, t in body("pntd.0002065.nxml") if s == "Discussion"]
    assert (summarize(None, body=discussion) or "").startswith("In summary, the presence of antibodies to RVFV")


@dataclass(frozen=True)
class Stored:
    paper_id: int
    n: int
    section: str
    text: str


PAPER = (
    Stored(9, 0, "1 Introduction", "Neural translation models are trained on parallel data with cross-entropy."),
    Stored(9, 1, "4 Decoding strategies", "We compare beam search with nucleus sampling on long outputs."),
    Stored(9, 2, "5 Results", "Nucleus sampling gives more diverse outputs than greedy decoding."),
    Stored(9, 3, "6 Conclusion", "Translation quality depends on the data."),
)


def channel(replies: list[tuple[str, str, datetime]], *, mentions_off: frozenset[str] = frozenset()) -> ChannelContext:
    earlier = SharedPaper(PaperInfo(5, "Sampling <!here> from language models", None, None, 2023, ()))
    earlier.shares.append(Share(1, "1.0", "U2", NOW - timedelta(days=30), "https://lab.slack.com/p1", None))
    earlier.replies.extend(Reply(k + 2, 1, uid, at, text, None) for k, (uid, text, at) in enumerate(replies))
    members = {uid: MemberInfo(uid, name, mentions_enabled=uid not in mentions_off) for uid, name in
               (("U1", "amara"), ("U2", "ben"), ("U3", "chen"))}  # fmt: skip
    return ChannelContext("T1", "C1", NOW, {5: earlier}, members, {}, {}, {})


def test_a_section_meets_a_members_recent_replies_by_the_words_both_hold() -> None:
    ctx = channel([
        ("U1", "Does beam search beat nucleus sampling for long outputs?", NOW - timedelta(days=2)),
        ("U3", "nice paper", NOW - timedelta(days=1)),
        ("U2", "beam search and nucleus sampling again", NOW - timedelta(days=40)),  # not recent
    ])  # fmt: skip
    replies = recent_replies(ctx)
    assert [(r.user_id, r.title) for r in replies] == [
        ("U3", ctx.papers[5].info.title),
        ("U1", ctx.papers[5].info.title),
    ]
    link = link_section(PAPER, replies)
    assert link is not None and link.n == 1 and link.reply.user_id == "U1"
    assert link.phrases == ("beam search", "nucleus sampling")
    line = render_section_line(link)
    assert line == (
        "Its section *4 Decoding strategies* speaks of “beam search” and “nucleus sampling”, which {@U1} raised on "
        "12 Mar in the thread on “Sampling from language models”."
    )
    headings = {p.section for p in PAPER}
    assert check_section_line(line, link, headings) == []
    assert check_section_line(line, link, headings - {"4 Decoding strategies"}), "a section the paper lacks"
    assert check_section_line(line, replace(link, phrases=("greedy decoding",)), headings), "words nobody wrote"
    assert check_section_line(line + " <!channel>", link, headings), "markup"
    assert check_section_line(line.replace("{@U1}", "{@U2}"), link, headings), "another member"
    # a member who turned mentions off is never named; a reply sharing one common word links nothing
    assert (
        link_section(
            PAPER,
            recent_replies(channel([("U1", "beam search, nucleus sampling", NOW)], mentions_off=frozenset({"U1"}))),
        )
        is None
    )
    assert link_section(PAPER, recent_replies(channel([("U1", "the outputs look long", NOW)]))) is None


def test_a_long_heading_and_thread_title_still_fit_the_line() -> None:
    ctx = channel([("U1", "Does beam search beat nucleus sampling for long outputs?", NOW - timedelta(days=2))])
    long_title = "Lipase inhibitors of the hormone-sensitive family alter mycobacterial growth in culture and cells"
    ctx.papers[5].info = replace(ctx.papers[5].info, title=long_title)
    heading = "Materials and Methods › Assessment of inter-epidemic transmission of the virus in young sheep"
    paper = tuple(replace(p, section=heading) if p.n == 1 else p for p in PAPER)
    link = link_section(paper, recent_replies(ctx))
    assert link is not None
    line = render_section_line(link)
    assert len(line) <= 260 and "the thread on “Lipase inhibitors" in line and line.endswith("…”.")
    assert check_section_line(line, link, {p.section for p in paper}) == []
    crowded = replace(link, phrases=("beam search with nucleus sampling on long outputs, compared " * 2, "nucleus"))
    assert render_section_line(crowded).endswith("in a thread here.")  # no room left for the title


def test_the_words_shown_are_the_passages_own() -> None:
    text = "Label smoothing (LS) and label-smoothing variants; we smooth labels."
    assert phrases_in(text, {"label", "smooth"}, most=3) == ("Label smoothing",)  # the same words once
    again = "A virus neutralization test; virus neutralization again, and virus titres"
    assert phrases_in(again, {"virus", "neutraliz", "test", "titr"}) == ("virus neutralization test", "virus titres")


def test_an_answer_from_a_passage_is_checked_word_for_word() -> None:
    passage = given("2.4 Laboratory <!here> tests", "Sera were tested in 96-well plates using Vero cells [21].")
    assert passage.section == "2.4 Laboratory tests"
    assert parse_answer("[2]\nIt used Vero cells.", 3) == (1, "It used Vero cells.")
    assert parse_answer("It used Vero cells.", 3) is None and parse_answer("[4] x", 3) is None
    assert check_passage_answer("They used “Vero cells”.", passage, ["A title"]) == []
    assert check_passage_answer("They used “Vero cells”, as in [21].", passage, []) == []
    assert check_passage_answer("They used “Vero cells” in 48-well plates.", passage, [])
    assert check_passage_answer("They used “BHK cells”.", passage, [])
    assert check_passage_answer("They used Vero cells.", passage, []) == ["quotes nothing from the passage"]
    assert check_passage_answer("The Smith lab used “Vero cells”.", passage, []), "a name from nowhere"
    assert check_passage_answer("The Smith lab used “Vero cells”.", passage, ["thanks to the Smith lab"]) == []
    assert names_in("The paper used Vero cells. They cite GPT-3 and BERT.") == ["Vero", "GPT-3", "BERT"]
