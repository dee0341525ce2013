"""The features of many candidates at many past moments of one channel, all at once (``moment_features``): for
each moment, what ``features`` gives for ``ChannelHistory.state_at`` then and that moment's candidates. A refit
asks this for every share it learns from (a few hundred moments of a few dozen papers) and every share it judges
on (dozens of moments of a few hundred papers); one moment at a time, the small arrays' overhead was most of a
refit. The moments' channel states are matrices here (one row per moment), and the candidates are taken in
chunks of ``CHUNK_CELLS`` candidates x papers, two at a time on two cores, so that memory stays bounded however
long the history. Pure (numpy only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from socialrag.recommender.rank.calibrate import IGNORED_AFTER_DAYS
from socialrag.recommender.rank.features import (
    FEATURES,
    FRESH_HALF_LIFE_DAYS,
    NEARBY_K,
    POPULARITY_REFERENCE,
    RECENCY_HALF_LIFE_DAYS,
    standing,
)
from socialrag.recommender.rank.history import ChannelHistory
from socialrag.recommender.rank.universe import Universe, spans
from socialrag.recommender.rank.window import DAY

CHUNK_CELLS = 2_000_000  # candidates x channel papers worked on at once per thread (about 40 MB)
MIN_CHUNK_ROWS = 16
COSINE_CELLS = 25_000_000  # cosines kept for a whole refit (100 MB of float32); beyond, each chunk's are computed
EVENT_CELLS = 4_000_000  # moments x engagement events held at once
THREADS = 2  # chunks of candidates worked on at once (memory: this many chunks)

_COL = {name: i for i, name in enumerate(FEATURES)}


def moment_features(
    history: ChannelHistory,
    at: np.ndarray,
    rows: Sequence[np.ndarray],
    known_by: float | None = None,
) -> list[np.ndarray]:
    """For each moment ``at[g]`` and its candidates ``rows[g]`` (universe rows), the (len(rows[g]), len(FEATURES))
    matrix ``features(state, universe.candidates(rows[g], at[g], known_by), at[g])`` gives, with ``state`` the
    channel as ``history.state_at(at[g])`` sees it (no focus, no steering: a fit learns from what members did).
    Memory is bounded by ``COSINE_CELLS`` and ``CHUNK_CELLS`` (and ``THREADS``), however long the history."""
    at = np.asarray(at, dtype=np.float64)
    sizes = np.array([len(r) for r in rows], dtype=np.int64)
    x = np.zeros((int(sizes.sum()), len(FEATURES)), dtype=np.float64)
    if not len(x):
        return [x[:0] for _ in rows]
    u = history.universe
    flat_rows = np.concatenate([np.asarray(r, dtype=np.int64) for r in rows])
    moment = np.repeat(np.arange(len(at)), sizes)
    known = np.searchsorted(history.first_at, at, side="left")  # the papers are in order of first share
    weights, disliked = _weights(history, at, known)
    cosines = _cosines(u, history.rows[: int(known.max(initial=0))], flat_rows)
    _against_papers(x, cosines, weights, disliked, moment, known)
    when = at[moment]
    popularity = u.popularity_at(flat_rows, when, known_by)
    with np.errstate(invalid="ignore"):
        x[:, _COL["popularity"]] = np.minimum(
            1.0, np.log1p(np.maximum(popularity, 0.0)) / math.log1p(POPULARITY_REFERENCE)
        )
    x[np.isnan(popularity), _COL["popularity"]] = np.nan
    age = np.maximum(0.0, (when - u.published[flat_rows]) / DAY)
    x[:, _COL["recency"]] = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
    x[:, _COL["fresh"]] = 0.5 ** (age / FRESH_HALF_LIFE_DAYS)
    positive = np.maximum(weights, 0.0)
    _authors(x, history, flat_rows, moment, positive)
    _venues(x, history, flat_rows, moment, positive)
    _interests(x, history, flat_rows, sizes, known)
    x[:, _COL["taste"]] = np.nan  # learnt per refit from these very moments: the judge reads it apart (taste.py)
    x[:, _COL["standing"]] = standing(x, moment)
    return np.split(x, np.cumsum(sizes)[:-1])


def _weights(history: ChannelHistory, at: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(moments, channel papers): each paper's signed, decayed engagement weight at each moment, and whether the
    channel had received it badly by then (or left a PaperPing post of it unanswered, where silence counts); 0
    and False for a paper not yet shared then."""
    m = len(history.rows)
    weights = np.zeros((len(at), m), dtype=np.float64)
    order = np.argsort(history.ev_paper, kind="stable")
    papers, times, values = history.ev_paper[order], history.ev_t[order], history.ev_v[order]
    if len(papers):
        starts = np.flatnonzero(np.concatenate([[True], papers[1:] != papers[:-1]]))
        step = max(1, min(EVENT_CELLS // len(papers), -(-len(at) // THREADS)))
        half_life = history.half_life_days * DAY

        def decay(lo: int) -> None:
            t = at[lo : lo + step, None]
            decayed = np.where(times < t, values * 0.5 ** (np.maximum(0.0, t - times) / half_life), 0.0)
            weights[lo : lo + step, papers[starts]] = np.add.reduceat(decayed, starts, axis=1)

        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            list(pool.map(decay, range(0, len(at), step)))
    unknown = np.arange(m)[None, :] >= known[:, None]
    weights[unknown] = 0.0
    t = at[:, None]
    ignored = (history.post_at + IGNORED_AFTER_DAYS * DAY < t) & ~(history.answered_at < t)
    ignored &= np.isnan(history.member_first)
    ignored &= np.array([history.silence_counts(float(s)) for s in at], dtype=bool)[:, None]
    disliked = ((weights < 0) | ignored) & ~unknown
    return weights, disliked


def _cosines(u: Universe, papers: np.ndarray, rows: np.ndarray) -> Callable[[slice, int], np.ndarray]:
    """The cosines of the candidates ``rows[part]`` to the first ``width`` of the channel's ``papers``, as a new
    array: each distinct candidate's computed once where they fit in ``COSINE_CELLS``, else each chunk's as it
    comes (a channel of many thousands of papers)."""
    channel = u.vectors[papers]
    distinct, of_row = np.unique(rows, return_inverse=True)
    if len(distinct) * len(papers) <= COSINE_CELLS:
        sims = u.vectors[distinct] @ channel.T
        of_row = of_row.ravel()
        return lambda part, width: sims[of_row[part], :width]
    return lambda part, width: u.vectors[rows[part]] @ channel[:width].T


def _against_papers(
    x: np.ndarray,
    cosines: Callable[[slice, int], np.ndarray],
    weights: np.ndarray,
    disliked: np.ndarray,
    moment: np.ndarray,
    known: np.ndarray,
) -> None:
    """``similarity``, ``nearest``, ``disliked`` and ``nearby`` of every candidate (``cosines``: its cosines to
    the channel's papers; ``moment``: the moment it is ranked at), a chunk of ``CHUNK_CELLS`` candidates x papers
    at a time. What depends on the moment alone (the weights' scale, which papers were liked) is worked out once."""
    scale = np.abs(weights).sum(axis=1)
    liked = weights > 0
    count = liked.sum(axis=1)
    unliked = np.where(liked, 0.0, -2.0).astype(np.float32)  # added to a cosine (0 to 1), ranks it below any liked
    any_disliked: np.ndarray = np.asarray(disliked.any(axis=1))
    every_liked = count == known  # a moment that liked every paper it had

    step = max(MIN_CHUNK_ROWS, CHUNK_CELLS // max(1, int(known[moment].max(initial=0))))

    def chunk(lo: int) -> None:
        part = slice(lo, min(len(x), lo + step))
        g = moment[part]
        width = int(known[g].max(initial=0))
        if width == 0:
            return
        close = cosines(part, width)
        np.maximum(close, 0.0, out=close)
        cubed = close * close
        cubed *= close
        total = np.empty(len(close))
        # the candidates of one moment are together: each run of them shares its moment's weights and liked papers
        runs = np.flatnonzero(np.diff(g)) + 1
        bounds = list(zip([0, *runs.tolist()], [*runs.tolist(), len(g)], strict=True))
        for a, b in bounds:
            total[a:b] = cubed[a:b] @ weights[g[a], :width]
        x[part, _COL["similarity"]] = np.where(scale[g] > 0, total / (scale[g] + 1e-9), 0.0)
        some = np.flatnonzero(any_disliked[g])
        if len(some):
            badly = np.where(disliked[g[some], :width], close[some], 0.0)
            x[lo + some, _COL["disliked"]] = badly.max(axis=1)
        # from here ``close`` ranks each candidate's liked papers above the rest (in place): where a moment liked
        # every paper it had, only the papers shared after it go below
        for a, b in bounds:
            if every_liked[g[a]]:
                close[a:b, known[g[a]] :] -= 2.0
            else:
                close[a:b] += unliked[g[a], :width]
        k = min(NEARBY_K, width)
        if width > k:
            close.partition(width - k, axis=1)
        top = -np.sort(-close[:, width - k :], axis=1)  # each candidate's closest ``k`` liked papers, closest first
        take = np.minimum(count[g], k)
        sums = np.where(np.arange(k)[None, :] < take[:, None], top, 0.0).sum(axis=1)
        x[part, _COL["nearest"]] = np.where(take > 0, top[:, 0], 0.0)
        x[part, _COL["nearby"]] = np.where(take > 0, sums / np.maximum(take, 1), 0.0)

    # numpy lets go of the interpreter lock on arrays this size: two chunks at a time use two cores. Each chunk
    # writes its own rows of ``x`` only.
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        list(pool.map(chunk, range(0, len(x), step)))


def _authors(
    x: np.ndarray, history: ChannelHistory, rows: np.ndarray, moment: np.ndarray, positive: np.ndarray
) -> None:
    """``authors`` and ``member_author``: affinity to the authors of the papers the channel received well (the
    positive weight, at the candidate's moment, of the channel's papers each of its authors is on), and whether a
    member wrote the paper; both unknown for a paper without authors."""
    u = history.universe
    n = len(rows)
    flat, owner = u.authors_of(rows)
    none = np.bincount(owner, minlength=n) == 0
    x[none, _COL["authors"]] = np.nan
    x[none, _COL["member_author"]] = np.nan
    if not len(flat):
        return
    x[~none, _COL["member_author"]] = (
        np.bincount(owner, weights=history.member_authors[flat].astype(np.float64), minlength=n)[~none] > 0
    )
    # every (candidate's authorship, channel paper by the same author) pair, found by ranges in the channel's
    # authorships ordered by author
    authors, papers = history.authorships
    order = np.argsort(authors, kind="stable")
    authors, papers = authors[order], papers[order]
    lo, hi = np.searchsorted(authors, flat, side="left"), np.searchsorted(authors, flat, side="right")
    entry, at = spans(lo, hi - lo)
    weight = np.bincount(owner[entry], weights=positive[moment[owner[entry]], papers[at]], minlength=n)
    x[~none, _COL["authors"]] = 1.0 - np.exp(-weight[~none])


def _venues(x: np.ndarray, history: ChannelHistory, rows: np.ndarray, moment: np.ndarray, positive: np.ndarray) -> None:
    """``venue``: affinity to the venues of the papers the channel received well; unknown without a venue."""
    venues = history.universe.venues
    mine = venues[rows]
    has = mine >= 0
    x[~has, _COL["venue"]] = np.nan
    channel = venues[history.rows]
    keys, which = np.unique(channel[channel >= 0], return_inverse=True)
    if not len(keys) or not has.any():
        return
    of_venue = np.zeros((len(channel), len(keys)), dtype=np.float64)
    of_venue[np.flatnonzero(channel >= 0), which] = 1.0
    sums = positive @ of_venue  # (moments, the channel's venues)
    at = np.clip(np.searchsorted(keys, mine[has]), 0, len(keys) - 1)
    found = np.where(keys[at] == mine[has], sums[moment[has], at], 0.0)
    x[has, _COL["venue"]] = 1.0 - np.exp(-found)


def _interests(x: np.ndarray, history: ChannelHistory, rows: np.ndarray, sizes: np.ndarray, known: np.ndarray) -> None:
    """``interest``: cosine to the member whose own shares a candidate is closest to; unknown at a moment when
    fewer than two members had an interest of their own."""
    col = _COL["interest"]
    vectors = history.universe.vectors
    ends = np.cumsum(sizes)
    for g, (end, size) in enumerate(zip(ends.tolist(), sizes.tolist(), strict=True)):
        part = slice(end - size, end)
        interests = history.interests_at(int(known[g]))
        if len(interests) >= 2:
            x[part, col] = np.maximum(vectors[rows[part]] @ interests.T, 0.0).max(axis=1)
        else:
            x[part, col] = np.nan
