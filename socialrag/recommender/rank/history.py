"""A channel's history as arrays, so it can be seen at any past moment: to rank now, to learn from every past
share (``training_set``) and to replay (``socialrag.recommender.rank.evaluate``). Pure (numpy only).

``Universe`` (``rank/universe.py``) holds the papers in play (the channel's and the candidates'), with vectors,
publication times, popularity readings, authors and venues. ``ChannelHistory`` holds the channel's engagement
events.
``state_at(t)`` gives the ``ChannelState`` the ranker sees at ``t``: only what happened before ``t``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from socialrag.models import Sentiment
from socialrag.recommender.rank.calibrate import (
    IGNORED_AFTER_DAYS,
    SILENCE_COUNTS_FROM,
)
from socialrag.recommender.rank.engagement import emoji_selectivity, engagement_events
from socialrag.recommender.rank.features import MIN_INTEREST_SHARES, ChannelState
from socialrag.recommender.rank.universe import Universe
from socialrag.recommender.rank.window import DAY
from socialrag.recommender.retrieve.context import ChannelContext

DECLARED_INTEREST = 2.0  # a focus or boosted topic counts twice as much as a member's own interest


@dataclass(frozen=True)
class ChannelHistory:
    universe: Universe
    rows: np.ndarray  # (m,) universe rows of the channel's papers, by first appearance
    first_at: np.ndarray  # (m,) first share by anyone, PaperPing included
    member_first: np.ndarray  # (m,) first share by a member (NaN for a paper only PaperPing posted)
    post_at: np.ndarray  # (m,) PaperPing's post (NaN if none)
    answered_at: np.ndarray  # (m,) first reply or positive reaction after PaperPing's post (NaN if none)
    heard_at: np.ndarray  # (m,) first answer of any kind after PaperPing's post, a not-for-us included (NaN if none)
    ev_paper: np.ndarray  # engagement events: channel paper position, time, signed value
    ev_t: np.ndarray
    ev_v: np.ndarray
    member_authors: np.ndarray  # (n_authors,) bool: the author is a member of the channel
    half_life_days: float
    sharer: np.ndarray | None = None  # (m,) the member who shared the paper first (an index), -1 when PaperPing did

    @cached_property
    def position(self) -> dict[int, int]:
        """Each of the channel's papers' universe row -> its position in ``rows`` (the order of first share)."""
        return {int(r): k for k, r in enumerate(self.rows.tolist())}

    @cached_property
    def _interest_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """At each position, the sum of the vectors of its sharer's papers up to it and how many there are, and
        for each prefix of the papers the position of each member's latest (-1: none yet), so that the members'
        interests at any moment are a few lookups: the papers are in order of first share."""
        sharer = self.sharer if self.sharer is not None else np.full(len(self.rows), -1)
        vectors = self.universe.vectors[self.rows]
        sums = np.zeros(vectors.shape, dtype=np.float64)
        counts = np.zeros(len(self.rows), dtype=np.int64)
        latest = np.full((len(self.rows) + 1, int(sharer.max(initial=-1)) + 1), -1, dtype=np.int32)
        running: dict[int, tuple[np.ndarray, int]] = {}
        for k, member in enumerate(sharer.tolist()):
            latest[k + 1] = latest[k]
            if member < 0:
                continue
            total, n = running.get(member, (np.zeros(vectors.shape[1]), 0))
            running[member] = (total + vectors[k], n + 1)
            sums[k], counts[k] = running[member]
            latest[k + 1, member] = k
        return sums, counts, latest

    def interests_at(self, known: int) -> np.ndarray:
        """The unit centroid of each member's own shares among the first ``known`` papers, for members with at
        least ``MIN_INTEREST_SHARES`` of them."""
        if self.sharer is None or known == 0:
            return np.zeros((0, self.universe.vectors.shape[1]), dtype=np.float32)
        _, counts, latest = self._interest_sums
        last = latest[known]
        last = last[last >= 0]
        return self._unit_interests[last[counts[last] >= MIN_INTEREST_SHARES]]

    @cached_property
    def _unit_interests(self) -> np.ndarray:
        """At each position, the unit centroid of its sharer's papers up to it (a refit asks for hundreds of
        moments, each a few of these)."""
        sums = self._interest_sums[0]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return (sums / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    @cached_property
    def authorships(self) -> tuple[np.ndarray, np.ndarray]:
        """(author index, position of the channel paper) of every author entry of the channel's papers."""
        return self.universe.authors_of(self.rows)

    def silence_counts(self, t: float) -> bool:
        """Whether a PaperPing post nobody answered means anything at ``t``: only in a channel that answered (in
        any way) at least ``SILENCE_COUNTS_FROM`` of its posts old enough to judge. A lab that reads without
        reacting is not read as disliking everything it was sent."""
        judged = self.post_at + IGNORED_AFTER_DAYS * DAY < t
        if not judged.any():
            return False
        heard = self.heard_at[judged] <= self.post_at[judged] + IGNORED_AFTER_DAYS * DAY
        return float(heard.mean()) >= SILENCE_COUNTS_FROM

    def state_at(
        self,
        t: float,
        focus: np.ndarray | None = None,
        *,
        vectors: bool = True,
        steering: Sequence[tuple[np.ndarray, bool]] = (),
    ) -> tuple[ChannelState, np.ndarray]:
        """What the ranker sees at ``t``, and the positions (into ``rows``) of the papers it includes; without
        ``vectors``, none of its papers' vectors (for a caller that gives ``features`` the similarities).
        ``steering`` holds the topics members boosted (True) or muted (False), as directions."""
        known = np.flatnonzero(self.first_at < t)
        mask = self.ev_t < t
        decayed = self.ev_v[mask] * 0.5 ** (np.maximum(0.0, t - self.ev_t[mask]) / (self.half_life_days * DAY))
        w_all = np.bincount(self.ev_paper[mask], weights=decayed, minlength=len(self.rows))
        w = w_all[known]
        posted = self.post_at[known]
        answered = self.answered_at[known]
        ignored = (posted + IGNORED_AFTER_DAYS * DAY < t) & ~(answered < t) & np.isnan(self.member_first[known])
        ignored &= self.silence_counts(t)
        disliked = (w < 0) | ignored
        u = self.universe
        chosen = u.vectors[self.rows[known]] if vectors or focus is not None else u.vectors[:0]
        positive_all = np.where(self.first_at < t, np.maximum(w_all, 0.0), 0.0)
        authors, owners = self.authorships
        author_w = np.bincount(authors, weights=positive_all[owners], minlength=u.n_authors)
        v = u.venues[self.rows]
        venue_w = np.bincount(v[v >= 0], weights=positive_all[v >= 0], minlength=u.n_venues)
        strongest = max(1.0, float(w.max()) if len(w) else 1.0)
        # the focus and a boosted topic count as a paper the group engaged with twice as strongly as with any
        # other; a muted topic as one it received as badly as it liked its favourite
        extra = [(focus, True)] if focus is not None else []
        for direction, boosted in [*extra, *steering]:
            chosen = np.vstack([chosen, direction[None, :].astype(chosen.dtype)])
            w = np.append(w, 2.0 * strongest if boosted else -strongest)
            disliked = np.append(disliked, not boosted)
        # members' own shares are the group's interests, and so are a focus and a boosted topic, which members
        # declared: a candidate on them is measured against them alone
        declared = [d / (np.linalg.norm(d) or 1.0) for d, boosted in [*extra, *steering] if boosted]
        interests = self.interests_at(len(known))
        scale = np.ones(len(interests))
        if declared:
            interests = np.vstack([interests, np.stack(declared).astype(np.float32)])
            scale = np.append(scale, np.full(len(declared), DECLARED_INTEREST))
        state = ChannelState(chosen, w, disliked, author_w, venue_w, self.member_authors, interests, scale)
        return state, known


def build_history(
    ctx: ChannelContext,
    universe: Universe,
    half_life_days: float,
    overrides: Mapping[str, Sentiment] | None = None,
) -> ChannelHistory:
    """The channel's papers that are in ``universe``, with their engagement events (as ``rank`` counts them)."""
    index = universe.index
    bots = frozenset(uid for uid, m in ctx.members.items() if m.is_bot)
    papers = [(pid, p) for pid, p in ctx.papers.items() if pid in index]
    papers.sort(key=lambda item: (min(s.at for s in item[1].shares), item[0]))
    selectivity = emoji_selectivity(p for _, p in papers)
    ev_p: list[int] = []
    ev_t: list[float] = []
    ev_v: list[float] = []
    first, member_first, post_at, answered, any_answer = [], [], [], [], []
    sharers: dict[str, int] = {}
    sharer: list[int] = []
    for k, (_, paper) in enumerate(papers):
        first.append(min(s.at for s in paper.shares).timestamp())
        by_members = [s.at.timestamp() for s in paper.shares if s.user_id not in bots]
        member_first.append(min(by_members) if by_members else np.nan)
        opener = min(paper.shares, key=lambda s: s.at)
        by_bot = opener.user_id is None or opener.user_id in bots
        sharer.append(-1 if by_bot else sharers.setdefault(str(opener.user_id), len(sharers)))
        bot_shares = [s.at.timestamp() for s in paper.shares if s.user_id in bots]  # PaperPing's own posts
        post = min(bot_shares) if bot_shares else np.nan
        post_at.append(post)
        events = engagement_events(paper, selectivity, overrides or ctx.emoji_overrides, bots)
        answers = [at.timestamp() for at, v in events if v > 0 and not np.isnan(post) and at.timestamp() > post]
        answered.append(min(answers) if answers else np.nan)
        heard = [at.timestamp() for at, v in events if v != 0 and not np.isnan(post) and at.timestamp() > post]
        any_answer.append(min(heard) if heard else np.nan)
        for at, v in events:
            ev_p.append(k)
            ev_t.append(at.timestamp())
            ev_v.append(v)
    members_wrote = {aid for m in ctx.members.values() if m.in_channel and not m.is_bot for aid in m.author_ids}
    member_authors = (
        np.isin(universe.author_ids, list(members_wrote)) if members_wrote else np.zeros(universe.n_authors, dtype=bool)
    )
    return ChannelHistory(
        universe,
        np.array([index[pid] for pid, _ in papers], dtype=np.int64),
        np.array(first, dtype=np.float64),
        np.array(member_first, dtype=np.float64),
        np.array(post_at, dtype=np.float64),
        np.array(answered, dtype=np.float64),
        np.array(any_answer, dtype=np.float64),
        np.array(ev_p, dtype=np.int64),
        np.array(ev_t, dtype=np.float64),
        np.array(ev_v, dtype=np.float64),
        member_authors,
        half_life_days,
        np.array(sharer, dtype=np.int64),
    )


def offered_at(available: np.ndarray, t: float, window_days: float) -> np.ndarray:
    """Which papers (by the day each surely existed, ``Universe.available``) serving asked for the ``window_days``
    before ``t`` could have offered then: out by ``t`` and not older (never one of unknown date)."""
    return np.asarray((available < t) & (available >= t - window_days * DAY))


def pool_rows(universe: Universe, t: float, window_days: float, exclude: np.ndarray) -> np.ndarray:
    """Universe rows a ranking at ``t`` could have offered: published in the window before ``t``."""
    ok = offered_at(universe.available, t, window_days)
    ok[exclude] = False
    return np.flatnonzero(ok)
