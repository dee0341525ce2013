"""Reading a stored fit's numbers back (``channel_rankers.model``). A row from an older release may lack features
(they get the prior's weight); a row whose numbers cannot be what a refit wrote (a word or a NaN for a weight, a
weight too large to add up, fewer weights than features, a window of days past any date or ending in the future,
not an object at all) is unreadable: serving ranks by the default blend until the next refit, and says so. Pure."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypeGuard

import numpy as np

from socialrag.recommender.rank.features import FEATURES

LARGEST_WEIGHT = 1e6  # far above any learnt weight; a score of weights this large still adds up
LONGEST_WINDOW_DAYS = 36500.0  # a hundred years: a longer window reaches no paper and overflows a date


def is_real(value: object) -> TypeGuard[int | float]:
    """A finite number as JSON has it (not a boolean, not a word)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def read_weights(data: Mapping[str, object], prior: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The weights and scales of a stored fit, in ``FEATURES`` order (a feature it does not know: the prior's weight
    and a scale of 1), or None when they cannot be read."""
    names, weights, scales = data.get("features"), data.get("weights"), data.get("scales")
    if not (isinstance(names, list) and isinstance(weights, list) and isinstance(scales, list)):
        return None
    if not len(names) == len(weights) == len(scales) or not all(isinstance(n, str) for n in names):
        return None
    if not all(is_real(v) and abs(v) <= LARGEST_WEIGHT for v in [*weights, *scales]):
        return None
    stored = {n: (float(w), float(s)) for n, w, s in zip(names, weights, scales, strict=True)}
    w = np.array([stored[f][0] if f in stored else float(prior[i]) for i, f in enumerate(FEATURES)])
    s = np.array([stored[f][1] if f in stored else 1.0 for f in FEATURES])
    return w, s


def window_readable(value: object) -> bool:
    """Whether a stored window of days can be used: none (any date), or a number of days from just above 0 to
    ``LONGEST_WINDOW_DAYS``."""
    return value is None or (is_real(value) and 0 < value <= LONGEST_WINDOW_DAYS)
