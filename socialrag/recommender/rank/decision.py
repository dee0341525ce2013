"""The sentences a refit's decision is said in (``guard.fit_guarded``), for `status`, App Home and `/paperping why`:
which ranking won on the held-out shares and against what, whether its lead is within their noise, and why the
default blend stays when there is too little to judge on. Pure (numpy only)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from socialrag.recommender.rank.calibrate import MIN_SHARES
from socialrag.recommender.rank.served import MIN_JUDGED_DAYS, ServedMoment, days

# a lead over the default blend smaller than this many standard errors of the paired differences is said to be
# within the noise (the judge still takes it: on the replays, waiting for more cost more than it saved); three,
# not two, because the largest of several contestants' chance leads passes two about one time in six
NOISE_ERRORS = 3.0
SAID_CONTESTANTS = 3  # the contestants a decision names beside the winner (the blend, the fit in use, the closest)


def held_sentence(served: list[ServedMoment], chosen: str, ranks: dict[str, np.ndarray]) -> str:
    offered = int(np.median([len(m.x) for m in served]))
    table = {name: float(r.mean()) for name, r in ranks.items()}
    # the default blend and the fit in use, then the closest runners-up: a sentence a member reads, not the table
    first = [n for n in table if n != chosen and (n == "the default blend" or n.startswith("the fit learnt"))]
    runners = sorted((n for n in table if n != chosen and n not in first), key=lambda n: -table[n])
    named = [*first, *runners][: max(SAID_CONTESTANTS, len(first))]
    others = ", ".join(f"{name} {table[name]:.2f}" for name in named)
    on = days([m.at for m in served])
    return (
        f"on the latest {len(served)} shares, from {on} days, each ranked among the {offered} papers serving would "
        f"have offered then, it had MRR {table[chosen]:.2f} against {others}"
    )


def noise_sentence(rr: np.ndarray, blend_rr: np.ndarray) -> str:
    """Said when the winner's lead over the default blend on the held-out shares is within their noise: the
    channel's history does not yet tell the two apart, whichever ranks its next shares better."""
    diff = rr - blend_rr
    if len(diff) < 2:
        return ""
    bar = NOISE_ERRORS * float(diff.std(ddof=1) / np.sqrt(len(diff)))
    if float(diff.mean()) > bar:
        return ""
    return f"; its lead over the default blend ({float(diff.mean()):+.3f}) is within the noise of {len(diff)} shares"


def too_few_sentence(served: list[ServedMoment], left_out: list[ServedMoment], n_early: int) -> str:
    on = days([m.at for m in served])
    if n_early < MIN_SHARES and on >= MIN_JUDGED_DAYS:
        return f"{n_early} shares to learn from before the ones to judge on, fewer than {MIN_SHARES}"
    said = f"{len(served)} of its latest shares could be judged among a pool like serving's"
    if left_out:
        said += f" ({len(left_out)} left out: ranked among only {pool_range(left_out)} papers)"
    if len(served) >= MIN_JUDGED_DAYS:  # enough shares, made on too few days: each day is one occasion
        return f"{said}, made on {on} days, fewer than {MIN_JUDGED_DAYS}"
    return f"{said}, fewer than {MIN_JUDGED_DAYS}"


def left_out_sentence(left_out: list[ServedMoment]) -> str:
    if not left_out:
        return ""
    return f"; {len(left_out)} shares left out, their pools too small to judge on ({pool_range(left_out)} papers)"


def pool_range(moments: list[ServedMoment]) -> str:
    """The smallest and largest pool of these held-out shares, as "24 to 33"."""
    sizes = sorted(len(m.x) - 1 for m in moments)
    return f"{sizes[0]} to {sizes[-1]}"


def day_of(moment: float | None) -> str:
    return f"{datetime.fromtimestamp(moment, UTC):%Y-%m-%d}" if moment is not None else "an earlier day"
