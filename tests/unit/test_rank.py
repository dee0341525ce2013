"""The scoring and signal-selection rules, on hand-made data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from socialrag.models import (
    AuthorDiscussedHere,
    EarlierPaperByMember,
    EarlierReception,
    MemberIsAuthor,
    MemberMayCare,
    RelatedToEarlierPaper,
    SharedAffiliation,
    SignalFact,
    SocialSignal,
    VenueEngagedWith,
    WhyMemberMayCare,
)
from socialrag.recommender.rank.engagement import (
    ScoringConfig,
    decay,
    emoji_selectivity,
    engagement_weight,
    select_signals,
)
from socialrag.recommender.retrieve.context import SharedPaper
from socialrag.rows import PaperInfo, ReactionEvent, Reply, Share

NOW = datetime(2024, 6, 1, tzinfo=UTC)


def paper(pid: int, reactions: list[tuple[str, str, int]], replies: int = 0, shares: int = 1) -> SharedPaper:
    p = SharedPaper(PaperInfo(pid, f"P{pid}", None, None, 2024, ()))
    p.shares = [Share(pid * 10 + i, f"{pid}.{i}", "U1", NOW - timedelta(days=1), None, None) for i in range(shares)]
    p.reactions = [ReactionEvent(pid * 10, u, e, NOW - timedelta(days=d)) for u, e, d in reactions]
    p.replies = [Reply(pid * 100 + i, pid * 10, "U2", NOW, "x", None) for i in range(replies)]
    return p


def test_decay_halves_per_half_life() -> None:
    assert decay(NOW - timedelta(days=60), NOW, 60) == 0.5
    assert decay(NOW + timedelta(days=1), NOW, 60) == 1.0


def test_engagement_signs_and_decay() -> None:
    cfg = ScoringConfig()
    liked = paper(1, [("U2", "+1", 0), ("U3", "heart", 0)], replies=1)
    disliked = paper(2, [("U2", "-1", 0), ("U3", "-1", 0), ("U4", "thumbsdown", 0)])
    old = paper(3, [("U2", "+1", 365)])
    sel = {"+1": 1.0, "heart": 1.0, "-1": 1.0, "thumbsdown": 1.0}
    assert engagement_weight(liked, NOW, cfg, sel, {}) > engagement_weight(old, NOW, cfg, sel, {})
    assert engagement_weight(disliked, NOW, cfg, sel, {}) < 0
    assert engagement_weight(paper(4, [("U2", "eyes", 0)]), NOW, cfg, sel, {"eyes": "negative"}) < 1.0


def test_an_emoji_on_everything_counts_less() -> None:
    papers = [paper(i, [("U2", "+1", 0)] + ([("U3", "fire", 0)] if i == 0 else [])) for i in range(10)]
    sel = emoji_selectivity(papers)
    assert sel["fire"] == 1.0 and sel["+1"] < 0.2


def fact_of(kind: str, member: str) -> SignalFact:
    """A fact of each kind about ``member`` (the values other than the member do not matter to selection)."""
    return {
        "h1": MemberIsAuthor(member, "A. Author"),
        "h2": AuthorDiscussedHere("A. Author", 2),
        "h3": SharedAffiliation("Some University", member, "A. Author"),
        "h4": VenueEngagedWith("ACL", 2),
        "h5": RelatedToEarlierPaper("Earlier", "similar", 0.6, sharer=member),
        "h6": EarlierReception("Earlier", 2, 2, 1),
        "h7": EarlierPaperByMember(member, "Earlier"),
        "h8": MemberMayCare(member, 0.5),
        "h9": WhyMemberMayCare(member, "similar", 2),
    }[kind]


def sig(kind: str, strength: float = 1.0, member: str = "U1", related: int | None = None) -> SocialSignal:
    return SocialSignal(fact_of(kind, member), strength, members=(member,), related_paper_id=related)


def test_selection_keeps_at_most_three() -> None:
    signals = [
        sig("h2", 5),
        sig("h4", 2),
        sig("h3"),
        sig("h5", 3, related=7),
        sig("h6", related=7),
        sig("h8", 0.6, "U2"),
        sig("h9", 3, "U2"),
        sig("h9", 3, "U9"),
    ]
    chosen = select_signals(signals)
    # one of each category: the connection, the member, the paper itself
    assert [s.kind for s in chosen] == ["h5", "h8", "h2"]
    # with no paper-level signal, the third place goes to h9, which explains the chosen h8 member
    no_paper_facts = [s for s in signals if s.category != "I"]
    assert [s.kind for s in select_signals(no_paper_facts)] == ["h5", "h9", "h8"]
    assert select_signals(no_paper_facts)[1].members == ("U2",)
    assert len(select_signals(signals, limit=2)) == 2


def test_companions_only_with_what_they_explain() -> None:
    chosen = select_signals([sig("h6", related=7), sig("h9", 3, "U9"), sig("h5", 3, related=8), sig("h2")])
    assert [s.kind for s in chosen] == ["h5", "h2"]


def test_h1_comes_first_and_drops_a_repeating_h7() -> None:
    chosen = select_signals([sig("h1"), sig("h7", related=3), sig("h5", related=3), sig("h2")])
    assert [s.kind for s in chosen] == ["h1", "h5", "h2"]
    assert len(select_signals([sig("h1"), sig("h5", related=3), sig("h6", related=3), sig("h8", 1, "U2")])) == 3
    assert len(select_signals([sig("h1"), sig("h5", related=3), sig("h6", related=3), sig("h8", 1, "U2")])) == 3
