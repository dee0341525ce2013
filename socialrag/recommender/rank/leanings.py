"""What a channel's default blend leans to, read from the channel's own shares. Pure (numpy only).

The default blend ranks by closeness to the group's interests (``calibrate.prior_weights``). Two kinds of group
are served badly by closeness alone, and both show in what their members shared before any fit is learnt:

- a group that reads **new work** (``reads_new_work``): its shares were of papers a median of fewer than
  ``NEW_WORK_DAYS`` days old. Its blend adds a little of ``fresh``: of papers about as close to its interests, the
  newer comes first;
- a group that reads **what its field reads** (``reads_widely_read``): the papers it shared were read more than the
  papers of their age it passed over, in at least ``WIDELY_READ_PICKS`` of the pairs whose popularity is known on
  both sides. Its blend adds ``standing`` (popularity for its age): of papers about as close to its interests, the
  one read more than its peers comes first. A curator choosing a few of each week's new papers is one.

Each is read only from the shares before the moment ranked, from at least ``MIN_SHARES`` of them; a history with
no popularity readings (most imported ones) has no evidence for the second, and keeps the plain blend.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_SHARES = 8  # below this many past shares the channel keeps the prior (and no leaning is read)
# the default blend of a channel whose members' shares were of papers a median of fewer than NEW_WORK_DAYS old
# leans this much toward this month's papers (the ``fresh`` feature). On the real histories the medians, share by
# share, stay under 62 days for the groups that read new papers and over 86 for the two that do not
FRESH_BLEND_WEIGHT = 0.1
NEW_WORK_DAYS = 75.0
# the default blend of a channel whose shares were read more than their peers in at least WIDELY_READ_PICKS of
# the pairs with popularity known on both sides weighs popularity for its age this much (the nearest papers and
# the interests weigh 0.5 each). In the simulated groups the share is 0.74 to 0.79 for the three that follow what
# the field reads and 0.31 to 0.42 for the four that do not. Weights 1 to 6 were replayed (docs/benchmarks.md): the
# curator without a refit rises with the weight up to 4 and is flat beyond; the refitted channels barely move
STANDING_BLEND_WEIGHT = 4.0
WIDELY_READ_PICKS = 0.6


@dataclass(frozen=True)
class Leanings:
    """What the channel's default blend leans to besides closeness (see the module's docstring)."""

    new_work: bool = False
    widely_read: bool = False


PLAIN = Leanings()


def reads_new_work(ages_days: np.ndarray) -> bool:
    """Whether a channel reads new work: the papers its members shared were a median of fewer than
    ``NEW_WORK_DAYS`` days old when shared (from at least ``MIN_SHARES`` shares of papers with a known date). A
    seminar that presents last year's papers, or a list that catches up on older ones, does not."""
    return len(ages_days) >= MIN_SHARES and float(np.median(ages_days)) < NEW_WORK_DAYS


def widely_read_share(shared: np.ndarray, passed: np.ndarray, times: np.ndarray) -> tuple[float, int]:
    """Of the pairs (a paper shared at ``times[i]`` with ``shared[i]`` popularity for its age, one passed over with
    ``passed[i]``) with both known: the share in which the shared paper stood higher (a tie counts half), and
    from how many shares; (nan, 0) when none."""
    known = ~np.isnan(shared) & ~np.isnan(passed)
    if not known.any():
        return float("nan"), 0
    above = (shared[known] > passed[known]) + 0.5 * (shared[known] == passed[known])
    return float(above.mean()), len(np.unique(times[known]))


def reads_widely_read(shared: np.ndarray, passed: np.ndarray, times: np.ndarray) -> bool:
    """Whether a channel reads what its field reads (``widely_read_share`` at least ``WIDELY_READ_PICKS``, from at
    least ``MIN_SHARES`` shares)."""
    share, shares = widely_read_share(shared, passed, times)
    return shares >= MIN_SHARES and share >= WIDELY_READ_PICKS
