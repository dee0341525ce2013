"""The window of publication dates a channel picks from, learnt from where and how old its shares were among
the papers out at the time (``learn_window``); the papers a fit compares each share with are drawn from it.
Pure (numpy only)."""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from socialrag.recommender.rank.guard import MAX_WINDOW_DAYS, MIN_WINDOW_DAYS


class SharesInTime(Protocol):
    """What ``share_ranks`` reads of a channel's history (``history.ChannelHistory`` is one)."""

    @property
    def universe(self) -> Any: ...  # ``history.Universe``: its papers' earliest, available and middle moments

    @property
    def rows(self) -> np.ndarray: ...

    @property
    def member_first(self) -> np.ndarray: ...


DAY = 86400.0
# the window reaches half as far again as the oldest share's age: the next share is now and then older than every
# one before (on the BERT list, a paper 327 days old after shares of up to 234), and a window a quarter wider
# left it out of reach. Twice as far let older papers crowd a curator of the week's papers (``docs/benchmarks.md``)
WINDOW_SLACK = 1.5


def share_ranks(history: SharesInTime) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(moment, rank, age in days) of each share by a member of a paper with a known date, in time order; the
    rank is the share of the papers out by then (in the last ``MAX_WINDOW_DAYS``) that are newer than the one
    shared: near 0 for a group that takes this week's papers, spread over 0 to 1 for one that does not mind
    their age."""
    u = history.universe
    first, rows = history.member_first, history.rows
    ok = ~np.isnan(first) & ~np.isnan(u.published[rows]) & (first >= u.earliest[rows])
    out = np.sort(u.available[~np.isnan(u.available)])
    moments, ranks, ages = [], [], []
    for t, row in sorted(zip(first[ok].tolist(), rows[ok].tolist(), strict=True)):
        lo, hi = np.searchsorted(out, t - MAX_WINDOW_DAYS * DAY), np.searchsorted(out, t)
        if hi - lo >= 20:
            newer = hi - np.searchsorted(out, u.available[row], side="right")
            moments.append(t)
            ranks.append(max(0, newer) / (hi - lo))
            ages.append(max(0.0, (t - float(u.available[row])) / DAY))
    return np.array(moments), np.array(ranks), np.array(ages)


def learn_window(moments: np.ndarray, ranks: np.ndarray, ages: np.ndarray, t: float) -> float:
    """The window of publication dates the channel picks from at ``t``, in days, learnt from its shares before:
    ``WINDOW_SLACK`` times the age of the oldest of them (at least ``MIN_WINDOW_DAYS``). Any date (``inf``)
    until it has 8 shares, and for a channel whose shares' ranks spread over the papers out (a quarter more
    than nine in ten reach 0.8 of them): ranks, not ages, decide that, so that a catalog that starts late does
    not look like a taste for new papers. The days themselves come from ages, not ranks: papers come out in
    bursts (a conference's hundreds in a week), and a rank reaches back months in a quiet season. The oldest, not
    nine in ten: a group that reaches back for an older paper now and then keeps those in reach (on the real
    histories the age nine in ten had left them out, and cost the BERT list a third of its MRR)."""
    before = moments < t
    return _window(int(before.sum()), lambda: float(np.quantile(ranks[before], 0.9)), lambda: float(ages[before].max()))


def _window(shares: int, rank90: Callable[[], float], oldest: Callable[[], float]) -> float:
    """``learn_window``'s rule, from how many shares came before, the 0.9 quantile of their ranks and the oldest age
    (each asked only when the rule gets to it)."""
    if shares < 8:
        return float("inf")
    if 1.25 * rank90() >= 0.8:
        return float("inf")
    return max(MIN_WINDOW_DAYS, WINDOW_SLACK * oldest())


def _quantile(ordered: list[float], q: float) -> float:
    """``np.quantile(values, q)`` (its default, linear method) of values already in order."""
    at = q * (len(ordered) - 1)
    below = int(at)
    frac = at - below
    a, b = ordered[below], ordered[min(below + 1, len(ordered) - 1)]
    # numpy's interpolation, step for step (from the nearer end), so that the answers are the same numbers
    return b - (b - a) * (1.0 - frac) if frac >= 0.5 else a + (b - a) * frac


class WindowLearner:
    """``learn_window`` for one channel at moments that only move forward (a fit walks its shares in time): the
    shares before each moment are kept in order as it goes, so each answer costs a few insertions instead of
    two quantiles over all the shares before. A moment earlier than the last asks ``learn_window`` itself."""

    def __init__(self, moments: np.ndarray, ranks: np.ndarray, ages: np.ndarray) -> None:
        self.moments, self.ranks, self.ages = moments, ranks, ages
        self._ranks: list[float] = []
        self._ages: list[float] = []

    def __call__(self, t: float) -> float:
        n = int(np.searchsorted(self.moments, t, side="left"))
        if n < len(self._ranks):
            return learn_window(self.moments, self.ranks, self.ages, t)
        for k in range(len(self._ranks), n):
            insort(self._ranks, float(self.ranks[k]))
            insort(self._ages, float(self.ages[k]))
        return _window(n, lambda: _quantile(self._ranks, 0.9), lambda: self._ages[-1])
