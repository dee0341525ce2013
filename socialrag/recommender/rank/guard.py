"""Which ranking a channel uses: learning from the pairs of its history (``TrainingSet``, ``fit_validated``),
pulling a thin fit toward the default blend (``shrink``), and the judge (``fit_guarded``).

The judge scores each contestant the way serving ranks: every held-out share is ranked among the candidates
serving would have offered at that moment (``ServedMoment``: the same window, as many papers as serving ranks,
the features as known before the share's burst, unknowns filled as serving fills them), and every contestant
ranks the same papers. A share whose pool cannot be rebuilt at the size serving ranks (few papers were stored
around it: ``like_serving``) is left out and said so; with too few judged shares the default blend stays, as it
does when they were made on fewer than ``MIN_JUDGED_DAYS`` days (one day's picks are one occasion of choosing).
The contestants, simplest first: the default blend; each of the plain rankings a reader would try first, as a
feature alone (the ten nearest papers, the centroid, the newest, the most read: ``PLAIN_SINGLES``) and the best
single feature on the pairs; the fit in use (when it never saw the held-out shares); a new fit held close to the
blend by how little it learnt from (``shrink``); and the new fit itself. The one with the highest mean
reciprocal rank on the held-out shares wins; one within ``GUARD_MARGIN`` of a simpler one ties with it, and the
simpler stays. The ranking in use is judged again at every refit. The default blend is judged in its own order,
not with the shortlist the paper model orders in serving (``rank/shortlist.py``): judged as served, it kept the
BERT list on the blend in weeks where a fit ranked the next picks better (``docs/benchmarks.md``).

The old bar (0.02 plus 1.5 standard errors) and why it went: ``docs/recommending.md``, the judge. Pure (numpy only).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from socialrag.config import DEFAULT_POPULARITY_WEIGHT
from socialrag.recommender.rank.calibrate import (
    MIN_SHARES,
    RankerModel,
    default_model,
    fit,
    fit_each,
)
from socialrag.recommender.rank.decision import (
    day_of,
    held_sentence,
    left_out_sentence,
    noise_sentence,
    too_few_sentence,
)
from socialrag.recommender.rank.features import FEATURES, RECENCY_HALF_LIFE_DAYS, pair_differences
from socialrag.recommender.rank.leanings import PLAIN, Leanings, reads_new_work, reads_widely_read
from socialrag.recommender.rank.served import (
    MIN_JUDGED_DAYS,
    ServedMoment,
    days,
    latest_judged,
    like_serving,
    reciprocal_ranks,
    served_moments_from_pairs,
    served_ranks,
    stacked_pairs,
)
from socialrag.recommender.rank.taste import PAPER_MODEL, TasteSamples, learn_taste, paper_model_clear, with_shortlist

STRENGTHS = (1.0, 3.0, 10.0, 30.0, 100.0)
MIN_VALIDATION_MOMENTS = 12  # shares held out to judge rankings on
MAX_JUDGED = 40  # the latest shares a refit judges on (each ranked among all serving offered then)
GUARD_MARGIN = 0.001  # in mean reciprocal rank: a contestant this close to a simpler one ties with it
SHRINK_SHARES = 40.0  # a fit from n shares is served as n / (n + this) of itself, the rest the default blend
MIN_WINDOW_DAYS, MAX_WINDOW_DAYS = 7.0, 1095.0
HELD = "a new fit held close to the default blend"
SINGLES = ("similarity", "nearest", "nearby", "interest", "popularity", "recency", "fresh", "authors", "venue")
# the plain rankings a reader would try first, each as the feature that ranks like it: the ten nearest papers, the
# centroid of what the channel engaged with, the newest, the most read
PLAIN_SINGLES = ("nearby", "similarity", "fresh", "popularity")


@dataclass
class TrainingSet:
    positives: list[np.ndarray] = field(default_factory=list)
    negatives: list[np.ndarray] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # the moment of each pair
    # the window of publication dates the channel picked from, as learnt at each moment and at the end
    windows: dict[float, float] = field(default_factory=dict)
    final_window: float = np.inf
    estimated: int = 0  # shares whose paper's popularity then is an estimate from a later count
    served: list[ServedMoment] = field(default_factory=list)  # the shares a refit can judge rankings on
    # each member's share of a paper with a known date: when, and how old the paper was then (days)
    share_at: np.ndarray = field(default_factory=lambda: np.zeros(0))
    share_ages: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # what the channel's model of the paper itself learns from (``rank/taste.py``): every paper it picked, and
    # every paper it passed over (a pair's, or one of a pick's age), each with its moment; and the universe's vectors
    liked: list[tuple[int, float]] = field(default_factory=list)
    passed: list[tuple[int, float]] = field(default_factory=list)
    vectors: np.ndarray | None = None

    def samples(self, before: float | None) -> TasteSamples | None:
        """The picks and papers passed over before ``before`` (None: no vectors, or no pair to learn from)."""
        if self.vectors is None or not self.times:
            return None
        liked = np.array(self.liked, dtype=np.float64).reshape(-1, 2)
        passed = np.array(self.passed, dtype=np.float64).reshape(-1, 2)
        every = TasteSamples(
            self.vectors, liked[:, 0].astype(np.int64), liked[:, 1], passed[:, 0].astype(np.int64), passed[:, 1]
        )
        return every if before is None else every.before(before)

    def leanings(self, before: float | None) -> Leanings:
        """What the channel's default blend leans to from the shares before ``before`` (None: all its shares):
        ``reads_new_work`` and ``reads_widely_read`` (the pairs' popularity for its age)."""
        ages = self.share_ages if before is None else self.share_ages[self.share_at < before]
        pos, neg, t = self.before(before)
        k = FEATURES.index("standing")
        widely = len(t) > 0 and reads_widely_read(pos[:, k], neg[:, k], t)
        return Leanings(reads_new_work(ages), widely)

    def before(self, before: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positives, negatives, moments) of the pairs from moments before ``before`` (all with None)."""
        if not self.positives:
            empty = np.zeros((0, len(FEATURES)))
            return empty, empty, np.zeros(0)
        t = np.array(self.times)
        keep = np.ones(len(t), dtype=bool) if before is None else t < before
        return np.array(self.positives)[keep], np.array(self.negatives)[keep], t[keep]

    def arrays(self, before: float | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """The pairs to fit on (and the number of shares they came from) from moments before ``before``."""
        pos, neg, t = self.before(before)
        return pos, neg, len(np.unique(t))

    def fit(
        self,
        popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
        *,
        before: float | None = None,
        now: datetime | None = None,
        current: RankerModel | None = None,
    ) -> RankerModel:
        """The channel's ranking from what came before ``before``: ``fit_guarded`` with ``current`` (the fit in
        use; the default blend when None) among the contestants, with the window of publication dates it picks
        from, and the default blend of a channel with its leanings then (``rank/leanings.py``)."""
        earlier = [w for t, w in self.windows.items() if before is None or t < before]
        window = self.final_window if before is None else (earlier[-1] if earlier else np.inf)
        pos, neg, t = self.before(before)
        served = [m for m in self.served if before is None or m.at < before]  # the judge takes the latest
        leanings = self.leanings(before)
        current = current or default_model(popularity_weight, leanings)
        window_days = None if window >= MAX_WINDOW_DAYS else float(window)
        model = fit_guarded(
            pos,
            neg,
            t,
            current,
            popularity_weight,
            now,
            served=served,
            window_days=window_days,
            leanings=leanings,
            samples=self.samples(before),
        )
        return replace(model, estimated=self.estimated)


def held_out_mrr(model: RankerModel, pos: np.ndarray, neg: np.ndarray, times: np.ndarray) -> float:
    """Mean reciprocal rank of what was shared among the papers passed over at the same moment (for choosing the
    pull among fits that share one window): a paper older than the model's window was not offered at all (its
    age is read back from the recency feature; an unknown date is offered)."""
    margin = pair_differences(pos, neg) @ model.weights
    if model.window_days is not None:
        recency = FEATURES.index("recency")
        oldest = 0.5 ** (model.window_days / RECENCY_HALF_LIFE_DAYS)
        pos_in, neg_in = ~(pos[:, recency] < oldest), ~(neg[:, recency] < oldest)
        margin = np.where(pos_in & ~neg_in, 1.0, np.where(~pos_in & neg_in, -1.0, margin))
    if not len(times):
        return 0.0
    _, moment = np.unique(times, return_inverse=True)
    above = np.bincount(moment, weights=(margin <= 0).astype(np.float64))  # papers passed over ranked above it
    return float(np.mean(1.0 / (1.0 + above)))


def fit_validated(
    positives: np.ndarray,
    negatives: np.ndarray,
    times: np.ndarray,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    *,
    now: datetime | None = None,
    window_days: float | None = None,
    leanings: Leanings = PLAIN,
) -> tuple[RankerModel, float | None]:
    """``fit`` with the pull toward the default blend chosen on the latest quarter of these pairs: each strength
    in ``STRENGTHS`` is fitted on the earlier moments and scored on the later ones; the best is refitted on all
    of it. Also returns the strength chosen (None: too little history to choose, the default pull). Every fit
    picks among ``window_days`` (None: any date)."""
    moments = np.unique(times)
    shares = len(moments)
    until = float(moments[-1]) if shares else None
    if shares < MIN_SHARES or shares < 4 * MIN_VALIDATION_MOMENTS // 3:
        return fit(
            positives,
            negatives,
            shares,
            popularity_weight,
            now=now,
            trained_until=until,
            window_days=window_days,
            leanings=leanings,
        ), None
    split = moments[int(len(moments) * 0.75)]
    early, late = times < split, times >= split
    n_early = len(np.unique(times[early]))
    scores: dict[float, float] = {}
    models = fit_each(
        positives[early],
        negatives[early],
        n_early,
        popularity_weight,
        strengths=STRENGTHS,
        window_days=window_days,
        leanings=leanings,
    )
    for strength, model in zip(STRENGTHS, models, strict=True):
        scores[strength] = held_out_mrr(model, positives[late], negatives[late], times[late])
    best = max(scores, key=lambda k: (scores[k], k))  # ties go to the stronger pull
    model = fit(
        positives,
        negatives,
        shares,
        popularity_weight,
        strength=best,
        now=now,
        trained_until=until,
        window_days=window_days,
        leanings=leanings,
    )
    return model, best


def single_model(feature: str, fitted: RankerModel) -> RankerModel:
    """``fitted`` (its scales, shares and dates) with all the weight on one feature, in units of its spread."""
    weights = np.zeros(len(FEATURES))
    k = FEATURES.index(feature)
    weights[k] = 1.0 / fitted.scales[k]
    return replace(fitted, weights=weights, prior_share=0.0)


def best_single(positives: np.ndarray, negatives: np.ndarray, times: np.ndarray, fitted: RankerModel) -> str:
    """The feature alone that ranks these moments' shares best, as serving would (unknowns filled): chosen on the
    pairs a fit learns from, never on the shares it is judged on."""
    x, starts, _ = stacked_pairs(positives, negatives, times)
    if not len(starts):
        return SINGLES[0]
    return max(SINGLES, key=lambda f: float(reciprocal_ranks(x @ single_model(f, fitted).weights, starts).mean()))


def shrink(model: RankerModel, positives: np.ndarray, negatives: np.ndarray) -> RankerModel:
    """``model`` pulled toward the default blend by how little it learnt from: its score is the mixture
    ``a·fit + (1 − a)·blend`` (each in units of its spread over the pairs), ``a = n / (n + SHRINK_SHARES)``
    for ``n`` shares. Many shares: the fit; a dozen: mostly the blend."""
    if not model.learnt:
        return model
    a = model.shares / (model.shares + SHRINK_SHARES)
    d = pair_differences(positives, negatives)
    prior = model.prior
    spread_fit = float((d @ model.weights).std()) or 1.0
    spread_prior = float((d @ prior).std()) or 1.0
    weights = a * model.weights / spread_fit + (1.0 - a) * prior / spread_prior
    # the same scores, scaled back to the prior's units so that weights stay comparable between fits
    weights *= spread_prior
    return replace(model, weights=weights, prior_share=(1.0 - a) + a * model.prior_share)


def fit_guarded(
    positives: np.ndarray,
    negatives: np.ndarray,
    times: np.ndarray,
    current: RankerModel,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    now: datetime | None = None,
    *,
    served: list[ServedMoment] | None = None,
    window_days: float | None = None,
    leanings: Leanings = PLAIN,
    samples: TasteSamples | None = None,
) -> RankerModel:
    """The ranking the channel should use from now on, with the reason in ``decision``.

    The held-out shares are the ``served`` moments (the latest shares, each with the candidates serving offered
    then); with None, the latest quarter of the pairs' moments. Every contestant learns only from the moments
    before the first held-out share; the winner (see the module's docstring) is then refitted on everything.
    Whichever wins, serving picks among ``window_days`` (None: any date): the window is where candidates come
    from, learnt apart from the ranking. ``leanings``: the default blend is that of a channel with these leanings
    (``rank/leanings.py``), and every fit is pulled toward it. ``samples`` (the picks, the papers passed over and
    their vectors): the channel's model of the paper itself (``rank/taste.py``), learnt from what came before the
    held-out shares, is a contestant alone (the ``taste`` feature; the fits never weigh it); the model served keeps
    a direction learnt from every pick, whichever ranking wins, with how it scored."""
    moments = np.unique(times)
    blend = default_model(popularity_weight, leanings)
    kept = replace(blend, shares=len(moments), pairs=len(times), fitted_at=now)
    if len(moments) < MIN_SHARES:
        reason = f"the default blend: the channel has {len(moments)} shares to learn from, fewer than {MIN_SHARES}"
        return with_shortlist(replace(kept, decision=reason), samples)
    if served is None:
        late = moments[-max(MIN_VALIDATION_MOMENTS, len(moments) // 4) :]
        at = times >= late[0]
        served = served_moments_from_pairs(positives[at], negatives[at], times[at])
    served, left_out = like_serving(latest_judged(served, MAX_JUDGED))
    split = served[0].at if served else np.inf
    early = times < split
    n_early = len(np.unique(times[early]))
    enough_days = days([m.at for m in served]) >= MIN_JUDGED_DAYS
    learnt = learn_taste(samples if enough_days else None, split, served)
    if not enough_days or (n_early < MIN_SHARES and learnt.direction is None):
        reason = too_few_sentence(served, left_out, n_early)
        return with_shortlist(
            replace(kept, decision=f"kept the default blend: {reason}", window_days=window_days), samples
        )
    served = learnt.served
    strength: float | None = None
    if n_early >= MIN_SHARES:
        new, strength = fit_validated(
            positives[early],
            negatives[early],
            times[early],
            popularity_weight,
            window_days=window_days,
            leanings=leanings,
        )
        single = best_single(positives[early], negatives[early], times[early], new)
        contestants = _contestants(blend, single, current, new, split, positives[early], negatives[early])
    else:  # too few pairs to fit weights on, but picks enough for a paper model: it against the default blend
        new = blend
        contestants = [("the default blend", blend)]
    if learnt.direction is not None:  # after the plain rankings, before the fits
        fits = [i for i, (n, _) in enumerate(contestants) if n.startswith("the fit learnt") or n in (HELD, "a new fit")]
        contestants.insert(fits[0] if fits else len(contestants), (PAPER_MODEL, single_model("taste", new)))
    name, ranks = _judge(contestants, served)
    waits = paper_model_clear(name, ranks)
    if waits:  # the others judged by the usual rule, as if it had not run
        name, _ = _judge([c for c in contestants if c[0] != PAPER_MODEL], served)
    noise = noise_sentence(ranks[name], ranks["the default blend"]) if name != "the default blend" else ""
    decision = f"{name}: {held_sentence(served, name, ranks)}{noise}{waits}{left_out_sentence(left_out)}"
    taste, note = learnt.final(samples, blend.weights)
    # the window is where serving draws candidates from, whichever ranking orders them: every outcome keeps it
    if name == "the default blend":
        kept = replace(kept, decision=f"kept {decision}", window_days=window_days, taste=taste, taste_note=note)
        return with_shortlist(kept, samples)
    if name.startswith("the fit learnt"):
        # the paper model's own direction: whatever the fit in use was, it is not the shortlist's
        kept = replace(current, shares=len(moments), pairs=len(times), fitted_at=now, shortlist=False)
        return replace(kept, decision=f"kept {decision}", window_days=window_days, taste=taste, taste_note=note)
    full = fit(
        positives,
        negatives,
        len(moments),
        popularity_weight,
        strength=strength,
        now=now,
        trained_until=float(moments[-1]),
        window_days=window_days,
        leanings=leanings,
    )
    if name == HELD:
        return replace(shrink(full, positives, negatives), decision=decision, taste=taste, taste_note=note)
    if name == "a new fit":
        return replace(full, decision=decision, taste=taste, taste_note=note)
    feature = "taste" if name == PAPER_MODEL else name.removesuffix(" alone")
    return replace(single_model(feature, full), decision=decision, taste=taste, taste_note=note)


def _contestants(
    blend: RankerModel,
    single: str,
    current: RankerModel,
    new: RankerModel,
    split: float,
    positives: np.ndarray,
    negatives: np.ndarray,
) -> list[tuple[str, RankerModel]]:
    """The rankings the judge compares, simplest first; the fit in use only when it never saw the judged shares
    (from ``split`` on)."""
    contestants = [("the default blend", blend)]
    contestants += [(f"{f} alone", single_model(f, new)) for f in dict.fromkeys([*PLAIN_SINGLES, single])]
    if current.learnt and current.trained_until is not None and current.trained_until < split:
        contestants.append((f"the fit learnt up to {day_of(current.trained_until)}", current))
    contestants.append((HELD, shrink(new, positives, negatives)))
    contestants.append(("a new fit", new))
    return contestants


def _judge(contestants: list[tuple[str, RankerModel]], served: list[ServedMoment]) -> tuple[str, dict[str, np.ndarray]]:
    """The contestant with the highest MRR on the held-out shares (one within ``GUARD_MARGIN`` of a simpler one
    ties with it, and the simpler is kept), with every contestant's reciprocal ranks there."""
    ranks = {name: served_ranks(model, served) for name, model in contestants}
    chosen = contestants[0][0]
    for name, _ in contestants[1:]:
        if float(ranks[name].mean()) > float(ranks[chosen].mean()) + GUARD_MARGIN:
            chosen = name
    return chosen, ranks
