"""A stored post's reasons stand only on messages the channel still keeps; a post deleted in Slack keeps only its
paper. Pure, no database."""

from __future__ import annotations

import json
from typing import Any

from socialrag.models import (
    AuthorDiscussedHere,
    Draft,
    EarlierReception,
    PaperMeta,
    RelatedToEarlierPaper,
    SocialSignal,
    digest_from_json,
    draft_from_json,
    draft_json,
)
from socialrag.reasons import blank_draft, draft_links, first_reply_ids, keep_standing

SHARE = "https://lab.slack.com/archives/C1/p1604311200000000"
REPLY = "https://lab.slack.com/archives/C1/p1604314800000000?thread_ts=1604311200.000000&cid=C1"
OTHER = "https://lab.slack.com/archives/C1/p1604400000000000"


def _draft() -> dict[str, Any]:
    """A post with an earlier thread (h5, two shares of it), its reception (h6, the first reply) and an author the
    group discussed (h2, no message behind it)."""
    signals = (
        SocialSignal(
            RelatedToEarlierPaper("Weight Poisoning", "cites", 0.7, sharer="U3"), 3.0, ("U3",), (SHARE, OTHER)
        ),
        SocialSignal(
            EarlierReception("Weight Poisoning", 3, 2, 2, repliers=("U3",), first_reply_id=41), 2.0, (), (REPLY,)
        ),
        SocialSignal(AuthorDiscussedHere("Ann Lee", 2), 1.0),
    )
    paper = PaperMeta(9, "A new paper", "https://arxiv.org/abs/2101.00001", ("Ann Lee",), "ACL", 2021, None)
    draft = Draft(
        "T0LAB",
        "C1",
        paper,
        "template",
        "It builds on <@U3>'s thread.",
        signals,
        thread_link=SHARE,
        thread_title="Weight Poisoning",
        mentions=("U3",),
        named={"U3": "chen"},
    )
    return json.loads(json.dumps(draft_json(draft)))  # as the database gives it back


def test_a_draft_names_the_messages_it_rests_on_and_never_quotes_them() -> None:
    draft = _draft()
    assert draft_links(draft) == {SHARE, OTHER, REPLY}
    assert first_reply_ids(draft) == {41}
    assert "first_reply" not in draft["signals"][1]["fact"], "the reply is kept by its row, not by its words"


def test_reasons_fall_with_their_messages() -> None:
    draft = _draft()
    same, fallen = keep_standing(draft, {SHARE, OTHER, REPLY})
    assert (same, fallen) == (draft, 0)
    standing, fallen = keep_standing(draft, {OTHER})  # the first share and the reply were deleted in Slack
    assert fallen == 1
    kinds = [s["kind"] for s in standing["signals"]]
    assert kinds == ["h5", "h2"], "the reception rested on the deleted reply only; the author rests on no message"
    assert standing["signals"][0]["permalinks"] == [OTHER]
    assert standing["thread_link"] is None and standing["thread_title"] is None, "the earlier thread's post is gone"
    assert draft["signals"][0]["permalinks"] == [SHARE, OTHER], "the stored draft given in is not changed"
    assert draft_from_json(standing).signals[0].permalinks == (OTHER,)


def test_a_digest_keeps_each_papers_standing_reasons() -> None:
    digest = {"digest": [_draft(), _draft()], "kind": "weekly"}
    standing, fallen = keep_standing(digest, set())
    assert fallen == 4
    assert [[s["kind"] for s in d["signals"]] for d in standing["digest"]] == [["h2"], ["h2"]]
    assert digest_from_json(standing) is not None


def test_a_deleted_post_keeps_its_paper_and_nothing_it_said() -> None:
    for stored in (_draft(), {"digest": [_draft()], "kind": "weekly"}):
        blank = blank_draft(stored)
        one = blank["digest"][0] if "digest" in blank else blank
        assert one["paper"]["title"] == "A new paper" and one["style"] == "template"
        assert "U3" not in str(blank) and "chen" not in str(blank) and "lab.slack.com" not in str(blank)
        assert one["explanation"] == "" and one["signals"] == []
