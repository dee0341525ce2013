"""The paper model orders the default blend's shortlist. Pure (numpy only).

While a channel is served the default blend (the judge had too little to judge on, or judged the blend best),
the blend chooses which papers come first, and the channel's paper model (``rank/taste.py``) helps order them:
the blend's first ``SHORTLIST`` papers are ranked by reciprocal-rank fusion of their places in the blend and
in the paper model, and the rest follow in the blend's order. The shortlist's papers are the blend's, so what
reaches the top 50 is unchanged; only their order is. Each place keeps the score the blend gave that place, so
whatever reads the scores afterwards (variety, the coverage of the channel's topics) sees the blend's spread.
Papers the blend scores exactly alike stay alike: among them serving keeps paper-id order, and a replay draws.

The direction is learnt with a stronger pull toward none (``SHORTLIST_RIDGE``) than the paper model weighed alone
(``TASTE_RIDGE``): mixed with the blend, the smoother one did better on the real histories it was chosen on
(``docs/benchmarks.md``, the paper model orders the blend's shortlist).
"""

from __future__ import annotations

import numpy as np

SHORTLIST = 50  # the blend's first papers the paper model helps order
FUSION_K = 60.0  # reciprocal-rank fusion: a place p counts 1 / (FUSION_K + p)
SHORTLIST_RIDGE = 0.1  # the direction's pull toward none, in units of the vectors' (unit) second moment


def below_window(scores: np.ndarray, outside: np.ndarray | None) -> np.ndarray:
    """``scores`` with the papers ``outside`` the channel's window below every other (serving never offers them),
    tied among themselves."""
    if outside is None or not outside.any():
        return scores
    return np.where(outside, scores.min() - 1.0, scores)


def places(scores: np.ndarray, then: np.ndarray) -> np.ndarray:
    """Each paper's place (0 = first) by ``scores``, best first, ties in the order of ``then``."""
    order = np.lexsort((then, -scores))
    out = np.empty(len(scores), dtype=np.int64)
    out[order] = np.arange(len(scores))
    return out


def order_shortlist(
    scores: np.ndarray, taste: np.ndarray, size: int = SHORTLIST, outside: np.ndarray | None = None
) -> np.ndarray:
    """``scores`` (the blend's) with its first ``size`` papers reordered by fusing their places in the blend and
    by ``taste``: the same scores, handed to those papers in the fused order. Papers ``outside`` the channel's
    window are never in the shortlist. Ties keep the papers' order in ``scores`` (serving gives its candidates in
    paper-id order). An unknown taste (NaN) places a paper last among the shortlist by taste."""
    n = len(scores)
    rows = np.arange(n)
    inside = rows if outside is None else rows[~outside]
    if len(inside) < 2 or size < 2:
        return scores
    top = inside[np.lexsort((inside, -scores[inside]))][:size]
    blend_place = np.arange(len(top))
    read = np.where(np.isnan(taste[top]), -np.inf, taste[top])
    taste_place = places(read, blend_place)
    fused = 1.0 / (FUSION_K + blend_place) + 1.0 / (FUSION_K + taste_place)
    new = top[np.lexsort((blend_place, -fused))]
    out = np.array(scores, dtype=np.float64, copy=True)
    out[new] = np.asarray(scores, dtype=np.float64)[top]
    return out
