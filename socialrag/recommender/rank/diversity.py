"""Diversity across posts: the order in which a channel's best candidates are posted, each chosen for its score
less its closeness to the last posts and to the picks before it, plus what its interest is owed (maximal
marginal relevance with coverage). Pure (numpy only)."""

from __future__ import annotations

import numpy as np

from socialrag.recommender.rank.coverage import Interests

DIVERSITY_WEIGHT = 4.0  # standard deviations of score lost per unit of cosine above DIVERSITY_FLOOR
DIVERSITY_FLOOR = 0.4  # papers less alike than this do not compete


def diversify(
    scores: np.ndarray,
    vectors: np.ndarray,
    k: int,
    recent: np.ndarray | None = None,
    weight: float = DIVERSITY_WEIGHT,
    interests: Interests | None = None,
    posted: np.ndarray | None = None,
) -> np.ndarray:
    """Maximal marginal relevance: the order of the first ``k`` candidates, each chosen for its score (in
    standard deviations over all candidates) less ``weight`` times its closeness to the last posts
    (``recent``) and to the ones chosen before it, plus what its interest is owed (``coverage``: the channel's
    interests in proportion to their engagement, counting the posts of the last month, ``posted``, and each
    pick); the rest follow by score."""
    n = len(scores)
    order = np.argsort(-scores, kind="stable")
    covering = interests is not None and len(interests) > 0
    if n == 0 or (weight <= 0 and not covering):
        return order
    spread = float(scores.std()) or 1.0
    z = (scores - scores.mean()) / spread
    shortlist = order[: min(n, max(50, 5 * k))]  # the best few carry every pick; no need to look further
    if covering and interests is not None:  # ...and the best few of each interest, however quiet
        owners = interests.assign(vectors[order])
        best_of = [order[owners == i][:k] for i in range(len(interests))]
        shortlist = np.array(list(dict.fromkeys([*shortlist.tolist(), *np.concatenate(best_of).tolist()])))
    close = np.zeros(len(shortlist))
    if recent is not None and len(recent):
        close = np.maximum(close, (vectors[shortlist] @ recent.T).max(axis=1))
    owner = interests.assign(vectors[shortlist]) if interests is not None else np.full(len(shortlist), -1)
    counts = interests.counts(recent if posted is None else posted) if interests is not None else np.zeros(0)
    picked: list[int] = []
    free = np.ones(len(shortlist), dtype=bool)
    for _ in range(min(k, len(shortlist))):
        owed = interests.bonus(counts)[owner] if interests is not None else 0.0
        value = z[shortlist] - weight * np.maximum(0.0, close - DIVERSITY_FLOOR) + owed
        value[~free] = -np.inf
        best = int(np.argmax(value))
        picked.append(int(shortlist[best]))
        free[best] = False
        close = np.maximum(close, vectors[shortlist] @ vectors[shortlist[best]])
        if owner[best] >= 0:
            counts[owner[best]] += 1.0
    chosen = set(picked)
    return np.array(picked + [int(i) for i in order if int(i) not in chosen], dtype=np.int64)
