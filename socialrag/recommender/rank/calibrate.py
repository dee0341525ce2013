"""Step 3a, calibrated: each channel's ranking learnt from its own history. Pure (numpy only).

The features a candidate is described by are in ``socialrag.recommender.rank.features``.
The score is a weighted sum of the features. Before a channel has history the weights are today's fixed
blend (``prior_weights``: closeness to the interest a candidate fits best, plus ``DEFAULT_POPULARITY_WEIGHT`` of
popularity). ``fit`` learns them from pairs
(what the channel shared at a moment, a paper it could have shared then and did not), by pairwise logistic
regression whose L2 penalty pulls the weights toward the prior's direction: with a handful of shares the
prior decides, with hundreds the channel's own history does. h3 and h6 to h9 say who may care and how the
group received a related paper; they explain a pick and choose whom to name, so they are not ranking
features.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np

from socialrag.config import DEFAULT_POPULARITY_WEIGHT
from socialrag.recommender.rank.features import FEATURES, pair_differences
from socialrag.recommender.rank.leanings import (
    FRESH_BLEND_WEIGHT,
    MIN_SHARES,
    PLAIN,
    STANDING_BLEND_WEIGHT,
    Leanings,
)
from socialrag.recommender.rank.shortlist import SHORTLIST, below_window, order_shortlist
from socialrag.recommender.rank.stored_fit import is_real, read_weights, window_readable

PRIOR_STRENGTH = 3.0  # the pull toward the prior, divided by the number of shares learnt from
NEGATIVES_PER_SHARE = 20
LEARNT_SHARES = 500  # a fit learns from the channel's latest this many shares (a busy channel's older ones are old)
# a held-out share of a channel that takes papers of any date is judged among the papers of this many days before
CHECK_WINDOW_DAYS = 365.0
IGNORED_AFTER_DAYS = 7.0  # a PaperPing post with no reaction, click or reply by then was ignored...
SILENCE_COUNTS_FROM = 0.5  # ...which counts against its topic only where at least this share of posts is answered


def prior_weights(popularity_weight: float = DEFAULT_POPULARITY_WEIGHT, leanings: Leanings = PLAIN) -> np.ndarray:
    """The default blend as feature weights: closeness to the interest a candidate fits best (its ten nearest
    liked papers, and the member's shares, focus or boosted topic it is closest to) plus a little popularity. It
    was the engagement-weighted mean over everything the channel shared (``similarity``) until the real
    histories showed that mean serving only a channel's loudest topic (``docs/evaluation.md``). A channel's
    ``leanings`` (``rank/leanings.py``) add a little of ``fresh`` to the blend of one that reads new work, and
    popularity for its age (``standing``) to that of one that reads what its field reads."""
    w = np.zeros(len(FEATURES))
    w[FEATURES.index("nearby")] = 0.5
    w[FEATURES.index("interest")] = 0.5
    w[FEATURES.index("popularity")] = popularity_weight
    if leanings.new_work:
        w[FEATURES.index("fresh")] = FRESH_BLEND_WEIGHT
    if leanings.widely_read:
        w[FEATURES.index("standing")] = STANDING_BLEND_WEIGHT
    return w


# ----- the model ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankerModel:
    """A channel's weights (score = weights · features), with what they were learnt from."""

    weights: np.ndarray
    scales: np.ndarray  # each feature's spread in the training data (for comparing weights)
    prior: np.ndarray
    shares: int = 0
    pairs: int = 0
    fitted_at: datetime | None = None
    prior_share: float = 1.0  # how much of the fit is still the prior (1 = all of it)
    trained_until: float | None = None  # the moment (epoch seconds) of the last share the weights learnt from
    decision: str = ""  # why these weights are the ones in use (the guard's sentence, for `status`)
    window_days: float | None = None  # the publication dates the channel picks from (None: any)
    estimated: int = 0  # past shares whose paper's popularity then was estimated from a later count
    taste: np.ndarray | None = None  # the channel's model of the paper itself (``rank/taste.py``); None: none
    taste_note: str = ""  # what that model learnt from and how it scored on the held-out shares (for `status`)
    taste_model: str = ""  # the embedding model whose vectors it reads ("": not said, as in a replay)
    shortlist: bool = False  # the direction orders the blend's first papers (``taste.with_shortlist`` learnt it so)
    unreadable: bool = False  # the stored fit could not be read: the default blend stands in until the next refit

    @property
    def new_work(self) -> bool:
        """Whether the prior is the blend of a channel that reads new work (``reads_new_work``)."""
        return bool(self.prior[FEATURES.index("fresh")] > 0)

    @property
    def widely_read(self) -> bool:
        """Whether the prior is the blend of a channel that reads what its field reads (``reads_widely_read``)."""
        return bool(self.prior[FEATURES.index("standing")] > 0)

    @property
    def leanings(self) -> Leanings:
        return Leanings(self.new_work, self.widely_read)

    @property
    def learnt(self) -> bool:
        return self.shares >= MIN_SHARES and self.pairs > 0

    def score(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x @ self.weights)

    @property
    def is_default_blend(self) -> bool:
        """Whether these weights are the default blend's (the prior of the channel's leanings, as configured now)."""
        return bool(np.array_equal(self.weights, self.prior))

    @property
    def orders_shortlist(self) -> bool:
        """Whether the paper model helps order this model's first papers (``rank/shortlist.py``): a refit learnt the
        direction for it (not a direction an older release stored for the paper model alone), and the model is
        the default blend of a channel that does not read what its field reads."""
        return self.shortlist and self.taste is not None and self.is_default_blend and not self.widely_read

    def serving_scores(self, x: np.ndarray, outside: np.ndarray | None = None) -> np.ndarray:
        """The scores serving ranks by: ``score``, with papers ``outside`` the channel's window below all others,
        and the default blend's shortlist ordered with the paper model when it has one (``x``'s ``taste``)."""
        scores = below_window(self.score(x), outside)
        if self.orders_shortlist:
            scores = order_shortlist(scores, x[:, FEATURES.index("taste")], outside=outside)
        return scores

    def for_serving(self, embedding_model: str, dim: int) -> RankerModel:
        """This model as serving may use it: one that leans on the paper model (``taste``) whose direction cannot
        be read here (none stored, learnt on another embedding model or of another length) is the default blend
        until the next refit, not a ranking by an unknown feature."""
        usable = self.taste is not None and len(self.taste) == dim and self.taste_model in ("", embedding_model)
        if usable or self.weights[FEATURES.index("taste")] == 0:
            return self if usable else replace(self, taste=None)
        blend = default_model(float(self.prior[FEATURES.index("popularity")]), self.leanings)
        return replace(blend, window_days=self.window_days, decision=self.decision, fitted_at=self.fitted_at)

    def to_json(self) -> dict[str, object]:
        return {
            "features": list(FEATURES),
            "weights": [float(v) for v in self.weights],
            "scales": [float(v) for v in self.scales],
            "prior": [float(v) for v in self.prior],
            "prior_share": self.prior_share,
            "trained_until": self.trained_until,
            "decision": self.decision,
            "window_days": self.window_days,
            "estimated": self.estimated,
            "new_work": self.new_work,
            "widely_read": self.widely_read,
            "taste": _stored(self.taste),
            "taste_note": self.taste_note,
            "taste_model": self.taste_model,
            "shortlist": self.shortlist,
        }

    @staticmethod
    def from_json(
        data: object, shares: int, pairs: int, fitted_at: datetime | None, popularity_weight: float
    ) -> RankerModel:
        """A stored fit; features it does not know get the prior's weight (a fit from an older release). One whose
        numbers cannot be read (``stored_fit``) is the default blend, marked ``unreadable``, until the next refit."""
        data = data if isinstance(data, Mapping) else {}
        leanings = Leanings(data.get("new_work") is True, data.get("widely_read") is True)
        prior = prior_weights(popularity_weight, leanings)
        read, window = read_weights(data, prior), data.get("window_days")
        if read is None or not window_readable(window):
            blend = default_model(popularity_weight, leanings)
            return replace(blend, shares=shares, fitted_at=fitted_at, unreadable=True)
        share, until, decision = data.get("prior_share"), data.get("trained_until"), data.get("decision")
        estimated, note, taste_model = data.get("estimated"), data.get("taste_note"), data.get("taste_model")
        return RankerModel(
            *read,
            prior,
            shares,
            pairs,
            fitted_at,
            float(share) if is_real(share) else 1.0,
            float(until) if is_real(until) else None,
            decision if isinstance(decision, str) else "",
            float(window) if window is not None else None,
            int(estimated) if isinstance(estimated, int) and not isinstance(estimated, bool) else 0,
            unit_direction(data.get("taste")),
            note if isinstance(note, str) else "",
            taste_model if isinstance(taste_model, str) else "",
            data.get("shortlist") is True,
        )


def _stored(taste: np.ndarray | None) -> list[float] | None:
    direction = unit_direction(taste)
    return None if direction is None else [round(float(v), 6) for v in direction]


def unit_direction(value: object) -> np.ndarray | None:
    """A taste direction (learnt, or as stored) at unit length: a list or array of finite numbers (no booleans), not
    all zero; None otherwise."""
    if not isinstance(value, list | np.ndarray) or not len(value):
        return None
    if not all(isinstance(v, int | float | np.floating) and not isinstance(v, bool) for v in value):
        return None
    vector = np.array([float(v) for v in value])
    largest = float(np.abs(vector).max()) if np.isfinite(vector).all() else 0.0
    if largest <= 0:
        return None
    vector = vector / largest  # first to at most 1, so that the length cannot overflow
    return vector / float(np.linalg.norm(vector))


def default_model(popularity_weight: float = DEFAULT_POPULARITY_WEIGHT, leanings: Leanings = PLAIN) -> RankerModel:
    """The default blend (of a channel with these ``leanings``)."""
    prior = prior_weights(popularity_weight, leanings)
    return RankerModel(prior.copy(), np.ones(len(FEATURES)), prior)


def fit(
    positives: np.ndarray,
    negatives: np.ndarray,
    shares: int,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    *,
    strength: float | None = None,
    now: datetime | None = None,
    trained_until: float | None = None,
    window_days: float | None = None,
    leanings: Leanings = PLAIN,
) -> RankerModel:
    """Pairwise logistic regression over ``positives[i] - negatives[i]`` (one row per pair; a feature unknown
    for either paper of a pair is left out of that pair), with an L2 pull
    of ``strength / shares`` toward the prior's direction, fitted by Newton's method in units of each
    feature's spread. Few shares: the prior. Many: the channel's own preference. The model picks among
    ``window_days`` (None: any date); the prior is the blend of a channel with these ``leanings``."""
    return fit_each(
        positives,
        negatives,
        shares,
        popularity_weight,
        strengths=(strength,),
        now=now,
        trained_until=trained_until,
        window_days=window_days,
        leanings=leanings,
    )[0]


def fit_each(
    positives: np.ndarray,
    negatives: np.ndarray,
    shares: int,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    *,
    strengths: Sequence[float | None],
    now: datetime | None = None,
    trained_until: float | None = None,
    window_days: float | None = None,
    leanings: Leanings = PLAIN,
) -> list[RankerModel]:
    """``fit`` at each of ``strengths`` (None: ``PRIOR_STRENGTH``), the pairs put in units of their spread
    once for all of them."""
    prior = prior_weights(popularity_weight, leanings)
    now = now or datetime.now(UTC)
    if shares < MIN_SHARES or len(positives) == 0:
        model = RankerModel(
            prior.copy(), np.ones(len(FEATURES)), prior, shares, len(positives), now, 1.0, window_days=window_days
        )
        return [model for _ in strengths]
    both = np.vstack([positives, negatives])
    known = ~np.isnan(both)
    scales = np.array([both[known[:, j], j].std() if known[:, j].any() else 0.0 for j in range(both.shape[1])])
    scales = np.where(scales > 1e-9, scales, 1.0)
    z = pair_differences(positives, negatives) / scales
    direction = prior * scales
    # how far along the prior's direction the data wants to go: the prior's own scale
    target = _newton_1d(z @ direction) * direction
    models = []
    for strength in strengths:
        lam = (PRIOR_STRENGTH if strength is None else strength) / shares
        w = target.copy()
        for _ in range(25):
            margin = z @ w
            p = _sigmoid(-margin)  # the probability each pair is ranked the wrong way
            grad = -(p @ z) / len(z) + 2 * lam * (w - target)
            hess = (z.T * (p * (1 - p))) @ z / len(z) + 2 * lam * np.eye(len(w))
            step = np.linalg.solve(hess, grad)
            w -= step
            if float(np.abs(step).max()) < 1e-7:
                break
        pull = lam / (lam + 1.0)
        models.append(
            RankerModel(w / scales, scales, prior, shares, len(z), now, pull, trained_until, window_days=window_days)
        )
    return models


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * v)))


def _newton_1d(m: np.ndarray) -> float:
    """argmin over c >= 0 of mean softplus(-c·m) (+ a little ridge so it stays finite when all agree)."""
    c = 0.0
    for _ in range(30):
        p = _sigmoid(-c * m)
        grad = -float((m * p).mean()) + 0.01 * c
        hess = float((m * m * p * (1 - p)).mean()) + 0.01
        c_new = max(0.0, c - grad / hess)
        if abs(c_new - c) < 1e-8:
            return c_new
        c = c_new
    return c


# ----- what the weights say -------------------------------------------------------------------------

_DRIVERS = {
    "similarity": "papers close to what it engaged with",
    "nearest": "papers close to one paper it liked",
    "popularity": "widely read papers",
    "recency": "recent papers",
    "fresh": "the newest papers",
    "authors": "authors it has discussed",
    "venue": "venues it reads",
    "member_author": "its members' own papers",
    "nearby": "papers at the heart of one of its topics",
    "interest": "papers close to one member's own shares",
    "taste": "papers its own model of what it picks rates highly",
    "standing": "papers read more than others of their age",
}


def drivers(model: RankerModel, limit: int = 2) -> tuple[list[str], list[str]]:
    """What this channel's ranking leans on more than the default blend does, and what it leans away from:
    features whose weight, in units of their spread, differs most from the prior's (scaled alike)."""
    if not model.learnt:
        return [], []
    mine = model.weights * model.scales
    base = model.prior * model.scales
    norm_mine = np.abs(mine).sum() or 1.0
    norm_base = np.abs(base).sum() or 1.0
    diff = mine / norm_mine - base / norm_base
    more = [
        _DRIVERS[FEATURES[i]] for i in np.argsort(-diff) if diff[i] > 0.08 and mine[i] > 0 and FEATURES[i] in _DRIVERS
    ][:limit]
    away = []
    d = FEATURES.index("disliked")
    if mine[d] < 0 and abs(mine[d]) / norm_mine > 0.08:
        away.append("topics it received badly")
    return more, away


def describe(model: RankerModel, *, evidence: bool = True) -> str:
    """What drives the channel's ranking and why it is the one in use, for `status`, App Home and
    `/paperping why`; without ``evidence`` (App Home, read at a glance) the judge's figures are left to
    `status`."""
    if model.unreadable:
        when = f" on {model.fitted_at:%Y-%m-%d}" if model.fitted_at else ""
        return f"Ranking: the default blend, as the fit stored{when} could not be read; the next refit learns it again."
    if not model.learnt:
        sentence = (
            f"Ranking: the default blend (closeness to the group's interests, a little popularity); "
            f"it adapts once the channel has {MIN_SHARES} shares to learn from."
        )
    else:
        more, away = drivers(model)
        when = f" (learnt from {model.shares} shares)" if model.shares else ""
        if not more and not away:
            sentence = f"Ranking: this channel's history agrees with the default blend{when}."
        else:
            said = " and ".join(more)
            sentence = f"this channel follows {said} more than most" if said else "this channel ranks much as most do"
            if away:
                sentence += f", and steers away from {away[0]}"
            sentence = f"Ranking: {sentence}{when}."
    if model.new_work:
        sentence += " Its members mostly share papers a few months old or newer, so its default leans to new papers."
    if model.widely_read:
        sentence += (
            " The papers it shares are mostly read more than others of their age, so its default leans to those."
        )
    if model.window_days is not None:
        days = round(model.window_days, 1)
        sentence += f" It picks among papers published in the last {days:g} days."
    if model.estimated:
        sentence += f" The popularity of {model.estimated} papers when shared is estimated from a later count."
    if model.taste_note and evidence:
        orders = f"; it helps order the default blend's first {SHORTLIST} papers" if model.orders_shortlist else ""
        sentence += f" Its paper model: {model.taste_note}{orders}."
    if model.decision:
        when = f" {model.fitted_at:%Y-%m-%d}" if model.fitted_at else ""
        if evidence:
            sentence += f" Last refit{when}: {model.decision}."
        else:
            sentence += f" Last refit{when}; `/paperping status` in the channel says on what evidence."
    return sentence
