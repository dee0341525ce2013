"""Each channel's reading of its emoji, learnt from what the group does after a reaction."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from socialrag.recommender.retrieve import emoji_readings
from socialrag.recommender.retrieve.context import SharedPaper
from socialrag.recommender.retrieve.emoji_readings import channel_readings, learn_emoji_readings
from socialrag.rows import PaperInfo, ReactionEvent, Reply, Share

START = datetime(2024, 1, 1, tzinfo=UTC)
MEMBERS = ("U1", "U2", "U3", "U4")


def paper(pid: int, emoji: tuple[str, ...], followed: bool, *, saved: bool = False) -> SharedPaper:
    """A paper shared by U1 on day ``pid``; others react with ``emoji``; a follow-up is a reply by U3."""
    at = START + timedelta(days=pid)
    mid = pid * 10
    p = SharedPaper(PaperInfo(pid, f"Paper {pid}", None, None, None, ()), [Share(mid, str(mid), "U1", at, None, None)])
    p.reactions = [ReactionEvent(mid, MEMBERS[1 + i % 3], e, at + timedelta(hours=1)) for i, e in enumerate(emoji)]
    if saved:
        p.reactions.append(ReactionEvent(mid, "U4", "bookmark", at + timedelta(hours=2)))
    if followed:
        p.replies = [Reply(mid + 1, mid, "U3", at + timedelta(hours=3), "Reading this for Thursday", None)]
    return p


def channel(groups: list[tuple[tuple[str, ...], int, int]]) -> dict[int, SharedPaper]:
    """Papers in groups of (emoji, how many, how many of them followed up)."""
    papers: dict[int, SharedPaper] = {}
    for emoji, n, followed in groups:
        for k in range(n):
            pid = len(papers) + 1
            papers[pid] = paper(pid, emoji, k < followed)
    return papers


def test_a_thumbs_up_used_as_seen_reads_as_neutral() -> None:
    # :+1: papers are followed up like the papers nobody reacted to; :fire: papers much more often
    papers = channel([(("+1",), 20, 4), ((), 20, 4), (("fire",), 10, 8)])
    (reading,) = learn_emoji_readings(papers, {})
    assert (reading.emoji, reading.default, reading.learnt) == ("+1", "positive", "neutral")
    assert (reading.followed, reading.papers, reading.unreacted, reading.liked) == (4, 20, (4, 20), (8, 10))
    assert "reads as neutral here, not positive: 4 of 20 papers" in reading.describe()
    assert "`/paperping emoji +1 positive`" in reading.describe()
    assert channel_readings([reading], {}) == {"+1": "neutral"}


def test_a_neutral_emoji_the_group_follows_up_reads_as_positive() -> None:
    papers = channel([(("eyes",), 10, 8), ((), 20, 3), (("fire",), 10, 8)])
    (reading,) = learn_emoji_readings(papers, {})
    assert (reading.emoji, reading.default, reading.learnt) == ("eyes", "neutral", "positive")


def test_nothing_is_learnt_without_evidence_that_tells_papers_apart() -> None:
    # every paper is followed up alike: liked and unreacted papers cannot be told apart
    assert learn_emoji_readings(channel([(("+1",), 20, 15), ((), 20, 15), (("fire",), 10, 8)]), {}) == []
    # too few papers with the emoji
    assert learn_emoji_readings(channel([(("+1",), 4, 0), ((), 20, 4), (("fire",), 10, 8)]), {}) == []
    # no other positive emoji to compare with
    assert learn_emoji_readings(channel([(("+1",), 20, 4), ((), 20, 4)]), {}) == []
    # a :+1: used as a like keeps its default reading
    assert learn_emoji_readings(channel([(("+1",), 20, 15), ((), 20, 4), (("fire",), 10, 8)]), {}) == []


def test_a_reading_set_by_hand_wins_and_negative_emoji_are_never_reread() -> None:
    papers = channel([(("+1",), 20, 4), ((), 20, 4), (("fire",), 10, 8), (("-1",), 10, 9)])
    assert learn_emoji_readings(papers, {}, {"+1": "positive"}) == []
    assert channel_readings([], {"+1": "positive"}) == {"+1": "positive"}
    learnt = learn_emoji_readings(papers, {})
    assert [r.emoji for r in learnt] == ["+1"], "the :-1: papers drew replies, which is no reason to read it as a like"
    # a name out of a hostile export file, on papers the group follows up, is never learnt (status would show it)
    assert [
        r.emoji for r in learn_emoji_readings(channel([(("eyes",), 10, 8), ((), 20, 3), (("fire",), 10, 8)]), {})
    ] == ["eyes"]
    hostile = channel([(("<!channel> |x",), 10, 8), ((), 20, 3), (("fire",), 10, 8)])
    assert learn_emoji_readings(hostile, {}) == []


def test_follow_ups_are_replies_by_others_saves_reshares_and_shares_on_the_topic() -> None:
    base = channel([(("+1",), 20, 0), ((), 20, 4), (("fire",), 10, 8)])
    assert [r.learnt for r in learn_emoji_readings(base, {})] == ["neutral"]
    # the same :+1: papers, each saved by a member: the group keeps them, so :+1: is a like here
    saved = {pid: paper(pid, ("+1",), False, saved=True) if pid <= 20 else p for pid, p in base.items()}
    assert learn_emoji_readings(saved, {}) == []
    # each :+1: paper followed within days by another member's share of a paper on the same topic
    vectors: dict[int, np.ndarray] = {}
    topical = dict(base)
    for pid in range(1, 21):
        v = np.zeros(64)
        v[pid] = 1.0
        vectors[pid] = v
        follow = SharedPaper(
            PaperInfo(1000 + pid, f"Follow-up {pid}", None, None, None, ()),
            [Share(10_000 + pid, "x", "U2", START + timedelta(days=pid, hours=12), None, None)],
        )
        topical[1000 + pid] = follow
        vectors[1000 + pid] = v
    assert learn_emoji_readings(topical, vectors) == []
    # or shared again by another member
    again = dict(base)
    for pid in range(1, 21):
        again[pid].shares.append(Share(pid * 10 + 5, "y", "U4", START + timedelta(days=pid + 2), None, None))
    assert learn_emoji_readings(again, {}) == []
    # a reply by the sharer is no follow-up
    own = channel([(("+1",), 20, 0), ((), 20, 4), (("fire",), 10, 8)])
    for pid in range(1, 21):
        own[pid].replies = [Reply(pid * 10 + 1, pid * 10, "U1", START + timedelta(days=pid, hours=1), "Also see", None)]
    assert [r.learnt for r in learn_emoji_readings(own, {})] == ["neutral"]


def test_shares_on_the_topic_are_found_pair_by_pair_whatever_the_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The on-topic check works on blocks of papers against the band of shares their windows span: small blocks
    or one block, it finds what comparing every pair finds (shares by nobody known, the sharer's own later
    shares, papers with no vector, shares at the same moment, a window that ends exactly at a share)."""
    rng = np.random.default_rng(3)
    centers = rng.normal(size=(5, 16))
    papers: dict[int, SharedPaper] = {}
    vectors: dict[int, np.ndarray] = {}
    for pid in range(1, 301):
        at = START + timedelta(days=int(rng.integers(0, 200)), hours=int(rng.choice([0, 12])))
        who = [None, "U1", "U2", "U3", "U4"][int(rng.integers(0, 5))]
        papers[pid] = SharedPaper(
            PaperInfo(pid, "t", None, None, None, ()), [Share(pid, str(pid), who, at, None, None)]
        )
        if rng.random() > 0.1:
            v = centers[pid % 5] + 0.6 * rng.normal(size=16)
            vectors[pid] = v / np.linalg.norm(v)
    papers[300].shares[0] = replace(papers[1].shares[0], message_id=300, at=papers[1].shares[0].at + timedelta(days=21))

    def pair_by_pair(pid: int) -> bool:
        first = papers[pid].shares[0]
        if pid not in vectors:
            return False
        return any(
            q != pid
            and q in vectors
            and other.shares[0].user_id not in (None, first.user_id)
            and first.at < other.shares[0].at <= first.at + timedelta(days=21)
            and float(vectors[q] @ vectors[pid]) >= emoji_readings.TOPIC_SIMILARITY
            for q, other in papers.items()
        )

    expected = {pid: pair_by_pair(pid) for pid in papers}
    assert 20 < sum(expected.values()) < 280, "a channel where some papers are followed on their topic and some not"
    for cells in (1, 50, 10_000_000):
        monkeypatch.setattr(emoji_readings, "FOLLOW_UP_CELLS", cells)
        found = emoji_readings._follow_ups(list(papers.values()), vectors)
        assert {pid: done for pid, (done, _) in found.items()} == expected
