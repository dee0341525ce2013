"""What a channel's ranking learns from and is judged on (``training_set``): at each share, what was shared
against papers it could have had then, seen as of the start of the share's burst, as the slot before it saw the
channel; and, for the latest shares, every paper serving would have offered then (``ServedMoment``), for the
guard to judge rankings on. Pure (numpy only)."""

from __future__ import annotations

import random

import numpy as np

from socialrag.recommender.rank.calibrate import (
    CHECK_WINDOW_DAYS,
    IGNORED_AFTER_DAYS,
    LEARNT_SHARES,
    NEGATIVES_PER_SHARE,
)
from socialrag.recommender.rank.features import fill_unknown
from socialrag.recommender.rank.guard import MAX_JUDGED, MAX_WINDOW_DAYS, TrainingSet
from socialrag.recommender.rank.history import ChannelHistory, pool_rows
from socialrag.recommender.rank.moments import moment_features
from socialrag.recommender.rank.served import ServedMoment, judged_start
from socialrag.recommender.rank.universe import Universe
from socialrag.recommender.rank.window import DAY, WindowLearner, share_ranks

BURST_GAP_HOURS = 3.0  # shares this close to the one before are one burst: serving knew none of the burst's papers
SERVED_CANDIDATES = 300  # at most this many of the papers serving would have offered judge a held-out share
TASTE_AGE_DAYS = 365.0  # a pick's taste is told apart from papers that came out this long before it, or less


def burst_starts(times: np.ndarray) -> np.ndarray:
    """For each moment (in time order), the first moment of its burst: a share made within ``BURST_GAP_HOURS``
    of the one before belongs to the same burst. A curator posting the week's five picks a minute apart, or a
    member sharing three papers in a row, was answered by a slot before the first of them: serving knew none."""
    out = np.array(times, dtype=np.float64)
    for k in range(1, len(out)):
        if times[k] - times[k - 1] < BURST_GAP_HOURS * 3600.0:
            out[k] = out[k - 1]
    return out


def training_set(
    history: ChannelHistory,
    *,
    window_days: float | None = None,
    negatives: int = NEGATIVES_PER_SHARE,
    warmup: int = 3,
    seed: int = 7,
    known_by: float | None = None,
    judged: int | None = MAX_JUDGED,
    learnt: int = LEARNT_SHARES,
) -> TrainingSet:
    """Pairs to learn from: at each share by a member (and each PaperPing post the channel answered), what was
    shared against papers it could have had then and did not: published in the window it picks from
    (``learn_window`` from the shares before, unless ``window_days`` is given). A PaperPing post nobody
    answered is one more paper passed over at the next share. Every share is seen as of the start of its burst
    (``burst_starts``), as the slot that came before it saw the channel. The latest ``judged`` shares (more
    when they fall on few days: ``judged_start``; all with None) are also kept as ``ServedMoment``s, to judge
    rankings on. With ``known_by`` (the moment of the fit), a paper first read after a share but by then has its
    count at the share estimated (history imported today has no dated readings); ``TrainingSet.estimated``
    counts the shares whose paper's was. Pairs come from the latest ``learnt`` shares only: a busy channel's
    older shares are years old, and its taste has moved since."""
    u = history.universe
    rng = random.Random(seed)
    moments_at, ranks, ages = share_ranks(history)
    window_at = WindowLearner(moments_at, ranks, ages)
    out = TrainingSet(share_at=moments_at, share_ages=ages)
    channel_rows = history.rows
    moments = _moments(history)
    positives = np.array([t for t, _, positive in moments if positive])
    seen_at = dict(zip(positives.tolist(), burst_starts(positives).tolist(), strict=True))
    start = 0 if judged is None else judged_start(positives, judged)
    judged_from = float(positives[start]) if start > 0 else -np.inf
    learnt_from = -np.inf if len(positives) <= learnt else float(positives[-learnt])
    pending_ignored: list[int] = []
    dated, taste_rng = by_availability(u), random.Random(seed + 1)  # its own draws: the pairs' stay as they were
    learnt_at: list[tuple[float, float, np.ndarray]] = []  # (share, seen at, [its paper, papers passed over])
    judged_at: list[tuple[float, float, np.ndarray]] = []  # (share, seen at, [its paper, all serving offered])
    for t, k, positive in moments:
        if t < learnt_from:
            continue
        if not positive:
            if history.silence_counts(t + IGNORED_AFTER_DAYS * DAY + 1.0):
                pending_ignored.append(k)
            continue
        out.liked.append((int(channel_rows[k]), t))  # a pick teaches the taste, offered then or not
        out.passed.extend((r, t) for r in _same_age(history, k, t, negatives, dated, taste_rng))
        b = seen_at[t]
        if not u.available[channel_rows[k]] < b:
            # shared before serving could offer it (before its listed date, or before the month or year its date is
            # known to was out): no candidate then, and newer than every paper it would be compared with
            continue
        known = int(np.searchsorted(history.first_at, b, side="left"))  # the papers are in order of first share
        if known < warmup:
            continue
        window = window_days or window_at(b)
        out.windows[t] = window
        offered = _offered(history, b, t, min(window, MAX_WINDOW_DAYS))
        if len(offered) == 0:
            continue
        drawn = offered[rng.sample(range(len(offered)), min(negatives, len(offered)))]
        rows = np.concatenate([channel_rows[[k]], drawn, channel_rows[pending_ignored]]).astype(np.int64)
        pending_ignored = []
        learnt_at.append((t, b, rows))
        if t >= judged_from:
            judged_at.append((t, b, _served(history, b, t, k, window, offered, rng)))
    every = [*learnt_at, *judged_at]
    x_all = moment_features(history, np.array([b for _, b, _ in every]), [r for _, _, r in every], known_by)
    learnt_x, judged_x = x_all[: len(learnt_at)], x_all[len(learnt_at) :]
    if known_by is not None and learnt_at:  # the shared papers whose count then is an estimate from a later one
        shared = np.array([rows[0] for _, _, rows in learnt_at])
        out.estimated = int(u.estimated_at(shared, np.array([b for _, b, _ in learnt_at]), known_by).sum())
    for (t, _, rows), x in zip(learnt_at, learnt_x, strict=True):
        out.positives.extend([x[0]] * (len(rows) - 1))
        out.negatives.extend(x[1:])
        out.times.extend([t] * (len(rows) - 1))
        out.passed.extend((int(r), t) for r in rows[1:])
    out.served.extend(
        ServedMoment(t, fill_unknown(x), rows) for (t, _, rows), x in zip(judged_at, judged_x, strict=True)
    )
    out.vectors = u.vectors
    last = float(moments_at[-1]) + 1.0 if len(moments_at) else 0.0
    out.final_window = window_days or window_at(last)
    return out


def _same_age(
    history: ChannelHistory, k: int, t: float, n: int, dated: tuple[np.ndarray, np.ndarray], rng: random.Random
) -> list[int]:
    """Up to ``n`` universe rows of papers of the age of the channel's paper at position ``k`` (out in the
    ``TASTE_AGE_DAYS`` before it, or before ``t`` when it was shared earlier) that the channel had not shared by
    ``t``: what its taste is told apart from (``rank/taste.py``). None for a paper of unknown date. ``dated``:
    ``by_availability`` of the universe."""
    came_out = float(history.universe.available[history.rows[k]])
    if np.isnan(came_out):
        return []
    order, days = dated
    # nothing that came out after the pick was shared (a preprint later dated by its venue): not known then
    until = min(came_out, t)
    lo, hi = np.searchsorted(days, [until - TASTE_AGE_DAYS * DAY, until], side="right")
    if hi <= lo:
        return []
    shared_by = int(np.searchsorted(history.first_at, t, side="right"))  # the papers are in order of first share
    drawn = [int(order[i]) for i in rng.sample(range(int(lo), int(hi)), min(n + 4, int(hi - lo)))]
    return [r for r in drawn if history.position.get(r, shared_by) >= shared_by][:n]


def by_availability(u: Universe) -> tuple[np.ndarray, np.ndarray]:
    """The universe's rows of known date in order of the day each surely came out, and those days."""
    known = np.flatnonzero(~np.isnan(u.available))
    order = known[np.argsort(u.available[known], kind="stable")]
    return order, u.available[order]


def _moments(history: ChannelHistory) -> list[tuple[float, int, bool]]:
    """(time, position, is a positive moment) of each share by a member and each PaperPing post, in time order."""
    moments: list[tuple[float, int, bool]] = []
    for k in range(len(history.rows)):
        if not np.isnan(history.member_first[k]) and history.member_first[k] <= history.first_at[k]:
            moments.append((history.member_first[k], k, True))
        elif not np.isnan(history.post_at[k]):
            answered = history.answered_at[k] <= history.post_at[k] + IGNORED_AFTER_DAYS * DAY
            moments.append((history.post_at[k], k, bool(answered)))
    moments.sort()
    return moments


def _offered(history: ChannelHistory, b: float, t: float, window_days: float) -> np.ndarray:
    """Universe rows serving could have offered at ``b`` (the start of the burst of the share at ``t``), in order:
    published in the window, less the channel's papers known then and the burst's own papers, which together are
    its papers first shared by ``t`` (they are in order of first share)."""
    shared_by = int(np.searchsorted(history.first_at, t, side="right"))
    return pool_rows(history.universe, b, window_days, history.rows[:shared_by])


def _served(
    history: ChannelHistory,
    b: float,
    t: float,
    k: int,
    window: float,
    offered: np.ndarray,
    rng: random.Random,
) -> np.ndarray:
    """The rows to judge the share at ``t`` (position ``k``) among: its paper, then what serving would have
    offered at ``b``, every paper of the window (a year when the channel takes any date), up to
    ``SERVED_CANDIDATES`` of them."""
    if window > CHECK_WINDOW_DAYS:
        offered = _offered(history, b, t, CHECK_WINDOW_DAYS)
    if len(offered) > SERVED_CANDIDATES:
        offered = np.sort(offered[rng.sample(range(len(offered)), SERVED_CANDIDATES)])  # as sampling the rows would
    return np.concatenate([[history.rows[k]], offered]).astype(np.int64)
