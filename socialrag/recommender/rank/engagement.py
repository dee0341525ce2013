"""Step 3a: how the channel engaged with its papers, and the few social signals worth saying. Pure.

Each paper the channel shared gets an engagement weight: a share counts +1 (each re-share +0.5), a reply
+0.7, a positive reaction +1 and a negative one -1, a neutral one +0.1; a reaction counts in proportion to
how selective the emoji is in this channel (one the group puts on nearly everything says little). Every
event decays with its age (half-life ``half_life_days``), so the channel can move on to new topics.
The candidates are scored from these weights by the channel's calibrated ranker (``rank.calibrate``),
and re-ranked against the last ``recent_for_diversity`` posts so that successive posts differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from socialrag.config import DEFAULT_POPULARITY_WEIGHT
from socialrag.knowledge.emoji import normalize_emoji, read_sentiment
from socialrag.models import (
    AuthorDiscussedHere,
    EarlierPaperByMember,
    MemberIsAuthor,
    RelatedToEarlierPaper,
    Sentiment,
    SocialSignal,
)
from socialrag.recommender.rank.diversity import DIVERSITY_WEIGHT
from socialrag.recommender.retrieve.context import SharedPaper

SHARE, RESHARE, REPLY = 1.0, 0.5, 0.7
REACTION = {"positive": 1.0, "negative": -1.0, "neutral": 0.1}


@dataclass(frozen=True)
class ScoringConfig:
    half_life_days: float = 60.0
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT
    diversity_weight: float = DIVERSITY_WEIGHT  # see socialrag.recommender.rank.diversity.diversify
    recent_for_diversity: int = 5
    use_engagement: bool = True


def decay(at: datetime, now: datetime, half_life_days: float) -> float:
    """0.5 ** (age / half-life); events in the future (clock skew) count as new."""
    age_days = max(0.0, (now - at).total_seconds() / 86400.0)
    return float(0.5 ** (age_days / half_life_days))


def emoji_selectivity(papers: Iterable[SharedPaper]) -> dict[str, float]:
    """How much each emoji says in this channel: 1 for one used on few shares, down to 0.1 for one on all."""
    papers = list(papers)
    on_paper: Counter[str] = Counter()
    for p in papers:
        on_paper.update({normalize_emoji(r.emoji) for r in p.reactions})
    n = max(1, len(papers))
    return {e: max(0.1, 1.0 - (c - 1) / n) if n > 2 else 1.0 for e, c in on_paper.items()}


def engagement_events(
    paper: SharedPaper,
    selectivity: Mapping[str, float],
    overrides: Mapping[str, Sentiment],
    bots: frozenset[str] = frozenset(),
) -> list[tuple[datetime, float]]:
    """(when, signed value) of each way the channel engaged with one of its papers. PaperPing's own post of
    a paper is no engagement; the reactions and replies it draws are."""
    shares = sorted((s for s in paper.shares if s.user_id not in bots), key=lambda s: s.at)
    events = [(s.at, SHARE if i == 0 else RESHARE) for i, s in enumerate(shares)]
    events += [(r.at, REPLY) for r in paper.replies]
    for r in paper.reactions:
        base = normalize_emoji(r.emoji)
        events.append((r.at, REACTION[read_sentiment(base, overrides)] * selectivity.get(base, 1.0)))
    return events


def engagement_weight(
    paper: SharedPaper,
    now: datetime,
    config: ScoringConfig,
    selectivity: Mapping[str, float],
    overrides: Mapping[str, Sentiment],
    bots: frozenset[str] = frozenset(),
) -> float:
    """The signed, decayed weight of how the channel engaged with one of its papers."""
    h = config.half_life_days
    return sum(v * decay(at, now, h) for at, v in engagement_events(paper, selectivity, overrides, bots))


def channel_weights(
    papers: Mapping[int, SharedPaper],
    now: datetime,
    config: ScoringConfig,
    overrides: Mapping[str, Sentiment],
    bots: frozenset[str] = frozenset(),
) -> dict[int, float]:
    if not config.use_engagement:
        return dict.fromkeys(papers, 1.0)
    selectivity = emoji_selectivity(papers.values())
    return {pid: engagement_weight(p, now, config, selectivity, overrides, bots) for pid, p in papers.items()}


# ----- choosing the signals to say -----------------------------------------------------------------

# The ranking rule: what makes a recommendation legible to a group, strongest first. A member's own
# authorship beats everything; a citation link to a thread the group had beats topical similarity; a
# named member who may care comes next; facts about authors and venues fill in.
SIGNAL_PRIORITY: dict[str, float] = {
    "h1": 10.0,
    "h7": 8.0,
    "h5": 7.0,
    "h9": 6.0,
    "h8": 5.0,
    "h2": 4.0,
    "h4": 3.0,
    "h3": 2.5,
    "h6": 1.0,
}
MAX_SIGNALS = 3


def rank_signals(signals: Sequence[SocialSignal]) -> list[SocialSignal]:
    """All signals, best first: by the priority of their kind, then by their own strength."""
    return sorted(signals, key=lambda s: (SIGNAL_PRIORITY[s.kind], s.strength), reverse=True)


def select_signals(signals: Sequence[SocialSignal], limit: int = MAX_SIGNALS) -> list[SocialSignal]:
    """Keep at most ``limit`` signals, the ones that matter most.

    The rule: first the best of each category (the connection to an earlier paper, a member it may
    interest, the paper itself); then, while there is room, the next best by priority. h6 (how the group
    received the earlier paper) and h9 (why the member may care) can only fill a place next to the h5/h7 or
    h8 they elaborate. h7 is skipped when an h1 already names the same member as an author.
    """
    ranked = rank_signals(signals)
    authors = {s.fact.member for s in ranked if isinstance(s.fact, MemberIsAuthor)}
    usable = [s for s in ranked if not (isinstance(s.fact, EarlierPaperByMember) and s.fact.member in authors)]
    # an h2 about an author the h5 already names as shared with the earlier paper says the same thing twice
    said = {a for s in usable if isinstance(s.fact, RelatedToEarlierPaper) for a in s.fact.shared_authors}
    usable = [s for s in usable if not (isinstance(s.fact, AuthorDiscussedHere) and s.fact.author in said)]
    chosen: list[SocialSignal] = []
    for category in ("II", "III", "I"):
        best = next((s for s in usable if s.category == category and s.kind not in ("h6", "h9")), None)
        if best is not None and len(chosen) < limit:
            chosen.append(best)
    for s in usable:
        if len(chosen) >= limit:
            break
        if s in chosen:
            continue
        if s.kind == "h6" and not any(
            c.kind in ("h5", "h7") and c.related_paper_id == s.related_paper_id for c in chosen
        ):
            continue
        if s.kind == "h9" and not any(c.kind == "h8" and c.members == s.members for c in chosen):
            continue
        chosen.append(s)
    return rank_signals(chosen)
