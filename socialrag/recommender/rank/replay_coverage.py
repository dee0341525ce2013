"""How much of the group a replayed ranking would have served, month by month (``CoverageTally``): the share of
the channel's topics owed posts (those with a tenth of its engagement, clustered as the profile clusters them)
that got one of the month's posts, and the share of its active members (who shared in the 90 days before) named as
possibly interested (the member whose own closest shares are nearest a post, as h8 names one).

A replayed week posts each method's top ``POSTS_PER_STEP``; a month is ``STEPS_PER_MONTH`` weekly steps.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from socialrag.recommender.rank.coverage import Interests, clustered_interests
from socialrag.recommender.rank.history import DAY, ChannelHistory
from socialrag.recommender.retrieve.signals import MEMBER_INTEREST, MEMBER_NEAREST

POSTS_PER_STEP = 5
STEPS_PER_MONTH = 4
ACTIVE_DAYS = 90.0


def interests_at(history: ChannelHistory, t: float) -> Interests:
    """The channel's topics at ``t`` as interests owed posts: the profile's clusters, by engagement then."""
    state, known = history.state_at(t)
    return clustered_interests(history.universe.vectors[history.rows[known]], state.weights[: len(known)])


def named_members(history: ChannelHistory, known: np.ndarray, posts: np.ndarray) -> set[int]:
    """The member named for each post: the one whose closest own shares (``MEMBER_NEAREST``) are nearest it, when
    close enough (``MEMBER_INTEREST``)."""
    if history.sharer is None or len(posts) == 0:
        return set()
    sharer = history.sharer[known]
    vectors = history.universe.vectors[history.rows[known]]
    best = np.full(len(posts), -np.inf)
    who = np.full(len(posts), -1)
    for member in np.unique(sharer[sharer >= 0]).tolist():
        sims = np.sort(posts @ vectors[sharer == member].T, axis=1)[:, ::-1][:, :MEMBER_NEAREST].mean(axis=1)
        better = sims > best
        best, who = np.where(better, sims, best), np.where(better, member, who)
    return {int(m) for m, s in zip(who.tolist(), best.tolist(), strict=True) if m >= 0 and s >= MEMBER_INTEREST}


class CoverageTally:
    """Each method's posts over the month so far, and the month's figures once it ends."""

    def __init__(self, history: ChannelHistory, methods: list[str]) -> None:
        self.history = history
        self.methods = methods
        self.topics: dict[str, list[float]] = {m: [] for m in methods}
        self.members: dict[str, list[float]] = {m: [] for m in methods}
        self._start()

    def _start(self) -> None:
        self.at: float | None = None
        self.interests = Interests(np.zeros((0, 0), dtype=np.float32), np.zeros(0), np.zeros(0))
        self.posts: dict[str, list[int]] = {m: [] for m in self.methods}
        self.steps = 0

    def begin(self, t: float) -> None:
        """The month's interests, as of its first step."""
        if self.at is None:
            self.at = t
            self.interests = interests_at(self.history, t)

    def posted(self, method: str) -> np.ndarray | None:
        rows = self.posts[method]
        return self.history.universe.vectors[rows] if rows else None

    def add(self, picks: Mapping[str, np.ndarray]) -> None:
        """One week's posts (universe rows, best first) of each method."""
        for method, rows in picks.items():
            self.posts[method].extend(int(r) for r in rows[:POSTS_PER_STEP])
        self.steps += 1
        if self.steps == STEPS_PER_MONTH:
            self.close()

    def close(self) -> None:
        """Score the month (when it had a step) and start the next."""
        if self.at is not None and self.steps:
            h = self.history
            known = np.flatnonzero(h.first_at < self.at)
            recent = known[h.member_first[known] >= self.at - ACTIVE_DAYS * DAY]
            active = set() if h.sharer is None else {int(m) for m in h.sharer[recent] if m >= 0}
            for method in self.methods:
                vectors = h.universe.vectors[self.posts[method]]
                if len(self.interests):
                    self.topics[method].append(float((self.interests.counts(vectors) > 0).mean()))
                if active:
                    named = named_members(h, known, vectors)
                    self.members[method].append(len(named & active) / len(active))
        self._start()
