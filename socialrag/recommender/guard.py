"""Which fit a channel ranks with: learning from the pairs of its history (``TrainingSet``), choosing how hard
to pull toward what is in use on the channel's own held-out shares (``fit_validated``), and the guard
(``fit_guarded``): a new fit replaces the one in use only when it ranks the channel's latest shares, which
the fit in use never saw, better by ``GUARD_MARGIN``; so a week of noise cannot swing the weights (with thin
data the pull toward the default blend is stronger as well). Pure (numpy only).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import numpy as np

from socialrag.config import DEFAULT_POPULARITY_WEIGHT
from socialrag.recommender.calibrate import MIN_SHARES, RankerModel, default_model, fit
from socialrag.recommender.features import FEATURES, RECENCY_HALF_LIFE_DAYS, pair_differences

STRENGTHS = (1.0, 3.0, 10.0, 30.0, 100.0)
MIN_VALIDATION_MOMENTS = 12  # shares held out to compare fits on
GUARD_MARGIN = 0.02  # in mean reciprocal rank: what a new fit must win by to replace the one in use
MIN_WINDOW_DAYS, MAX_WINDOW_DAYS = 7.0, 1095.0


@dataclass
class TrainingSet:
    positives: list[np.ndarray] = field(default_factory=list)
    negatives: list[np.ndarray] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # the moment of each pair
    # the window of publication dates the channel picked from, as learnt at each moment and at the end
    windows: dict[float, float] = field(default_factory=dict)
    final_window: float = np.inf
    estimated: int = 0  # shares whose paper's popularity then is an estimate from a later count
    # pairs kept only to compare fits on (``CHECK_NEGATIVES`` more papers passed over at each moment): a held-out
    # share ranked among a hundred tells fits apart that twenty cannot
    checks: list[bool] = field(default_factory=list)

    def _kept(self, before: float | None) -> np.ndarray:
        t = np.array(self.times)
        return np.ones(len(t), dtype=bool) if before is None else t < before

    def before(self, before: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positives, negatives, moments) of the pairs from moments before ``before`` (all with None)."""
        if not self.positives:
            empty = np.zeros((0, len(FEATURES)))
            return empty, empty, np.zeros(0)
        keep = self._kept(before)
        return np.array(self.positives)[keep], np.array(self.negatives)[keep], np.array(self.times)[keep]

    def check_mask(self, before: float | None = None) -> np.ndarray:
        """Which of ``before(before)``'s pairs are kept only to compare fits on."""
        return np.array(self.checks, dtype=bool)[self._kept(before)]

    def arrays(self, before: float | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """The pairs to fit on (and the number of shares they came from) from moments before ``before``."""
        pos, neg, t = self.before(before)
        fitting = ~self.check_mask(before)
        return pos[fitting], neg[fitting], len(np.unique(t))

    def fit(
        self,
        popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
        *,
        before: float | None = None,
        now: datetime | None = None,
        current: RankerModel | None = None,
    ) -> RankerModel:
        """The channel's ranking from the pairs before ``before``: ``fit_guarded`` against ``current`` (the
        fit in use; the default blend when None), with the window of publication dates it picks from."""
        earlier = [w for t, w in self.windows.items() if before is None or t < before]
        window = self.final_window if before is None else (earlier[-1] if earlier else np.inf)
        pos, neg, t = self.before(before)
        current = current or default_model(popularity_weight)
        window_days = None if window >= MAX_WINDOW_DAYS else float(window)
        checks = self.check_mask(before)
        model = fit_guarded(pos, neg, t, current, popularity_weight, now, checks=checks, window_days=window_days)
        return replace(model, estimated=self.estimated)


def held_out_mrr(model: RankerModel, pos: np.ndarray, neg: np.ndarray, times: np.ndarray) -> float:
    """Mean reciprocal rank of what was shared among the papers passed over at the same moment, as serving
    would have ranked them: a paper older than the model's window was not offered at all (its age is read
    back from the recency feature; an unknown date is offered)."""
    margin = pair_differences(pos, neg) @ model.weights
    if model.window_days is not None:
        recency = FEATURES.index("recency")
        oldest = 0.5 ** (model.window_days / RECENCY_HALF_LIFE_DAYS)
        pos_in, neg_in = ~(pos[:, recency] < oldest), ~(neg[:, recency] < oldest)
        margin = np.where(pos_in & ~neg_in, 1.0, np.where(~pos_in & neg_in, -1.0, margin))
    ranks: dict[float, int] = {}
    for t, m in zip(times.tolist(), margin.tolist(), strict=True):
        ranks[t] = ranks.get(t, 1) + (1 if m <= 0 else 0)
    return float(np.mean([1.0 / r for r in ranks.values()])) if ranks else 0.0


def fit_validated(
    positives: np.ndarray,
    negatives: np.ndarray,
    times: np.ndarray,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    *,
    now: datetime | None = None,
    checks: np.ndarray | None = None,
    window_days: float | None = None,
) -> tuple[RankerModel, float | None]:
    """``fit`` with the pull toward the default blend chosen on the channel's own latest
    quarter: each strength in ``STRENGTHS`` is fitted on the earlier moments and scored by how well it ranks
    the later shares among the papers passed over then; the best is refitted on all of it, unless one feature
    alone (``SINGLES``) ranks those shares better by ``SINGLE_MARGIN``: then that feature alone. Also returns
    the strength chosen (None: too little history to choose, the default pull). Pairs marked in ``checks``
    only score the fits; none is fitted on them. Every fit picks among ``window_days`` (None: any date)."""
    moments = np.unique(times)
    shares = len(moments)
    until = float(moments[-1]) if shares else None
    fitting = np.ones(len(times), bool) if checks is None else ~checks
    pos, neg = positives[fitting], negatives[fitting]
    if shares < MIN_SHARES or shares < 4 * MIN_VALIDATION_MOMENTS // 3:
        return fit(pos, neg, shares, popularity_weight, now=now, trained_until=until, window_days=window_days), None
    split = moments[int(len(moments) * 0.75)]
    early, late = (times < split) & fitting, times >= split
    n_early = len(np.unique(times[early]))
    scores: dict[float, float] = {}
    for strength in STRENGTHS:
        model = fit(
            positives[early], negatives[early], n_early, popularity_weight, strength=strength, window_days=window_days
        )
        scores[strength] = held_out_mrr(model, positives[late], negatives[late], times[late])
    best = max(scores, key=lambda k: (scores[k], k))  # ties go to the stronger pull
    model = fit(
        pos, neg, shares, popularity_weight, strength=best, now=now, trained_until=until, window_days=window_days
    )
    # a channel that goes by one thing alone (this week's newest, its authors) is ranked by it alone when that
    # ranks the held-out shares clearly better than any blend learnt
    singles = {f: held_out_mrr(single_model(f, model), positives[late], negatives[late], times[late]) for f in SINGLES}
    top = max(singles, key=lambda f: singles[f])
    if singles[top] >= scores[best] + SINGLE_MARGIN:
        return single_model(top, model), best
    return model, best


SINGLES = ("similarity", "nearest", "popularity", "recency", "fresh", "authors", "venue")
SINGLE_MARGIN = 0.02  # in mean reciprocal rank: what one feature alone must win by over the blend learnt


def single_model(feature: str, fitted: RankerModel) -> RankerModel:
    """``fitted`` (its scales, shares and dates) with all the weight on one feature, in units of its spread."""
    weights = np.zeros(len(FEATURES))
    k = FEATURES.index(feature)
    weights[k] = 1.0 / fitted.scales[k]
    return replace(fitted, weights=weights, prior_share=0.0)


def fit_guarded(
    positives: np.ndarray,
    negatives: np.ndarray,
    times: np.ndarray,
    current: RankerModel,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    now: datetime | None = None,
    *,
    checks: np.ndarray | None = None,
    window_days: float | None = None,
) -> RankerModel:
    """The ranking the channel should use from now on, with the reason in ``decision``.

    The shares held out are the latest half of those since the fit in use last learnt (it never saw them), or,
    when fewer than ``MIN_VALIDATION_MOMENTS``, the latest quarter. A candidate is fitted on the moments before
    them and replaces the weights in use only if it ranks the held-out shares better by ``GUARD_MARGIN``; it
    is then refitted on everything. Pairs marked in ``checks`` only score the fits. A new fit picks among
    ``window_days`` (None: any date); the fit in use keeps its own window."""
    moments = np.unique(times)
    fitting = np.ones(len(times), bool) if checks is None else ~checks
    if len(moments) < MIN_SHARES:
        kept = default_model(popularity_weight)
        reason = f"the default blend: the channel has {len(moments)} shares to learn from, fewer than {MIN_SHARES}"
        return RankerModel(
            kept.weights, kept.scales, kept.prior, len(moments), int(fitting.sum()), now, decision=reason
        )
    unseen = moments[moments > current.trained_until] if current.trained_until is not None else moments[:0]
    since = unseen[len(unseen) // 2 :]  # the candidate learns from the first half of what is new
    if len(since) < MIN_VALIDATION_MOMENTS:
        since = moments[int(len(moments) * 0.75) :]
    if len(since) < MIN_VALIDATION_MOMENTS // 2 or len(moments) - len(since) < MIN_SHARES:
        model, _ = fit_validated(
            positives, negatives, times, popularity_weight, now=now, checks=checks, window_days=window_days
        )
        thin = "learnt from all the channel's shares: too few yet to hold some out and compare fits"
        return replace(model, decision=thin)
    early, late = times < since[0], times >= since[0]
    candidate, strength = fit_validated(
        positives[early],
        negatives[early],
        times[early],
        popularity_weight,
        checks=None if checks is None else checks[early],
        window_days=window_days,
    )
    new = held_out_mrr(candidate, positives[late], negatives[late], times[late])
    old = held_out_mrr(current, positives[late], negatives[late], times[late])
    held = f"the latest {len(since)} shares (MRR {new:.2f} against {old:.2f})"
    if new < old + GUARD_MARGIN:
        what = "the default blend" if not current.learnt else f"the fit learnt up to {_day(current.trained_until)}"
        decision = f"kept {what}: a new fit ranked {held} no better"
        return replace(current, shares=len(moments), pairs=int(fitting.sum()), fitted_at=now, decision=decision)
    model = fit(
        positives[fitting],
        negatives[fitting],
        len(moments),
        popularity_weight,
        strength=strength,
        now=now,
        trained_until=moments[-1],
        window_days=window_days,
    )
    return replace(model, decision=f"a new fit: it ranked {held} better than the ranking in use")


def _day(moment: float | None) -> str:
    return f"{datetime.fromtimestamp(moment, UTC):%Y-%m-%d}" if moment is not None else "an earlier day"
