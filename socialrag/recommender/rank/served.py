"""The held-out shares a refit judges rankings on, each as serving would have ranked it (``ServedMoment``), and
ranking them (``served_ranks``, ``reciprocal_ranks``): which are like serving's pools (``like_serving``), and
moments rebuilt from pairs alone (``served_moments_from_pairs``). Pure (numpy only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from socialrag.recommender.rank.features import FEATURES, fill_unknown

if TYPE_CHECKING:
    from socialrag.recommender.rank.calibrate import RankerModel

# a held-out share is evidence only among a pool like serving's: at least this many papers...
MIN_JUDGED_POOL = 20
# ...and at least this share of the pool of the latest judged share (the moment whose stored papers are most
# complete): an older share ranked among the few papers stored around it says little about ranking a full week
JUDGED_POOL_SHARE = 0.5
# shares made on one day are one occasion of choosing (a curator's weekly picks, a meeting's list of proposals), not
# independent evidence: a refit judges on shares from at least this many days, reaching back past its latest
# shares (to at most ``WIDEN`` times as many) to find them, and keeps the default blend with fewer
MIN_JUDGED_DAYS = 6
WIDEN = 4


@dataclass(frozen=True)
class ServedMoment:
    """One share as serving would have ranked it: the features of the candidates serving would have offered
    then (the shared paper first), as known before the share's burst, with unknowns filled as serving does."""

    at: float
    x: np.ndarray  # (1 + candidates, len(FEATURES))
    rows: np.ndarray | None = None  # the candidates' universe rows (for the taste); None: rebuilt from pairs


def served_ranks(model: RankerModel, moments: list[ServedMoment]) -> np.ndarray:
    """The reciprocal rank of each held-out share among the candidates serving offered then, by ``model``'s
    scores; ties are broken at random, in expectation (a ranking that cannot tell papers apart gains nothing)."""
    if not moments:
        return np.zeros(0)
    x, starts = stacked(moments)
    return reciprocal_ranks(x @ model.weights, starts)


def stacked(moments: list[ServedMoment]) -> tuple[np.ndarray, np.ndarray]:
    """Every moment's candidates in one matrix, and where each moment's rows start (its shared paper)."""
    sizes = np.array([len(m.x) for m in moments], dtype=np.int64)
    return np.vstack([m.x for m in moments]), np.cumsum(sizes) - sizes


def reciprocal_ranks(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """For moments laid end to end (``starts``: the row of each moment's shared paper, which comes first), the
    reciprocal rank of the shared paper among its moment's candidates; a tie counts half."""
    first = np.repeat(scores[starts], np.diff(np.append(starts, len(scores))))
    above = np.add.reduceat((scores > first).astype(np.float64), starts)
    level = np.add.reduceat((scores == first).astype(np.float64), starts) - 1.0  # less the shared paper itself
    return 1.0 / (1.0 + above + 0.5 * level)


def like_serving(moments: list[ServedMoment]) -> tuple[list[ServedMoment], list[ServedMoment]]:
    """(judged, left out): the held-out shares whose rebuilt pool is like the one serving ranks (``MIN_JUDGED_POOL``
    papers or more, and ``JUDGED_POOL_SHARE`` of the latest share's pool), and the rest."""
    if not moments:
        return [], []
    bar = max(MIN_JUDGED_POOL, JUDGED_POOL_SHARE * (len(moments[-1].x) - 1))
    judged = [m for m in moments if len(m.x) - 1 >= bar]
    return judged, [m for m in moments if len(m.x) - 1 < bar]


def days(moments: np.ndarray | list[float]) -> int:
    """On how many days (UTC) these moments (epoch seconds) fall."""
    return len(np.unique(np.floor(np.asarray(moments) / 86400.0)))


def judged_start(moments: np.ndarray, judged: int) -> int:
    """Where the shares to judge on start among ``moments`` (in time order): the latest ``judged``, or as many
    more as it takes to span ``MIN_JUDGED_DAYS`` days, up to ``WIDEN * judged``."""
    start, floor = max(0, len(moments) - judged), max(0, len(moments) - WIDEN * judged)
    while start > floor and days(moments[start:]) < MIN_JUDGED_DAYS:
        start -= 1
    return start


def latest_judged(moments: list[ServedMoment], judged: int) -> list[ServedMoment]:
    """The held-out shares to judge on (``judged_start``)."""
    return moments[judged_start(np.array([m.at for m in moments]), judged) :]


def served_moments_from_pairs(pos: np.ndarray, neg: np.ndarray, times: np.ndarray) -> list[ServedMoment]:
    """Held-out shares from pairs alone (a caller with no served moments): each moment's shared paper among the
    papers it was paired with, unknowns filled as serving fills them."""
    x, starts, moments = stacked_pairs(pos, neg, times)
    return [ServedMoment(float(t), part) for t, part in zip(moments.tolist(), np.split(x, starts[1:]), strict=True)]


def stacked_pairs(pos: np.ndarray, neg: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``served_moments_from_pairs`` as one matrix: every moment's shared paper followed by the papers it was
    paired with, filled moment by moment; with where each moment starts, and the moments."""
    if not len(times):
        return np.zeros((0, len(FEATURES))), np.zeros(0, dtype=np.int64), np.zeros(0)
    order = np.argsort(times, kind="stable")  # each moment's pairs together, in the order they came
    moments, first = np.unique(times[order], return_index=True)
    # a moment of n pairs takes n + 1 rows: its shared paper (from its first pair), then the n papers passed over
    starts = first + np.arange(len(first))
    x = np.empty((len(order) + len(first), pos.shape[1]), dtype=np.float64)
    x[starts] = pos[order[first]]
    passed = np.ones(len(x), dtype=bool)
    passed[starts] = False
    x[passed] = neg[order]
    return fill_unknown(x, starts), starts, moments
