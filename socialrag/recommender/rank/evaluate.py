"""Offline evaluation: replay a channel's history week by week and ask how well each ranking foresaw what the
channel shared in the following week.

Each weekly step (after ``warmup`` shares to learn from) starts just before a share and covers what was shared
in the week from there (less half a day, so that a group picking on the same weekday a few hours earlier starts
the next step); the next step starts at the next share. The candidates are the papers with a vector published
in the ``window_days`` before the step's moment, minus what the channel already had; a paper shared that week
counts only if it was one of them. Each method ranks them using only the past; the calibrated ranker is refitted on the
pairs from before the moment (every ``refit_every`` steps). Reported per method: precision@5, recall@10 and @50,
MRR (of the first paper shared that week) and how many distinct topics the top 10 spans (topics are
k-means clusters of the papers' embeddings).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import numpy as np
import psycopg

from socialrag.config import DEFAULT_POPULARITY_WEIGHT
from socialrag.recommender.rank.calibrate import RankerModel, default_model
from socialrag.recommender.rank.diversity import diversify
from socialrag.recommender.rank.engagement import ScoringConfig
from socialrag.recommender.rank.features import FEATURES, ChannelState, features, fill_unknown
from socialrag.recommender.rank.guard import TrainingSet
from socialrag.recommender.rank.history import DAY, ChannelHistory, build_history, offered_at, pool_rows
from socialrag.recommender.rank.refit import load_universe
from socialrag.recommender.rank.replay_coverage import POSTS_PER_STEP, CoverageTally
from socialrag.recommender.rank.shortlist import below_window
from socialrag.recommender.rank.training import training_set
from socialrag.recommender.rank.universe import Universe
from socialrag.recommender.retrieve.candidates import WHOLE_WINDOW, CatalogSource
from socialrag.recommender.retrieve.context import load_channel_context
from socialrag.storage.embeddings import load_embedded_ids

CALIBRATED = "calibrated (this channel)"
CALIBRATED_DIVERSE = "calibrated + diversity"
BLEND = "default blend"
# the plain baselines a reader tries first
NEWEST = "newest first"
POPULAR = "popularity known by then"
CENTROID = "content: centroid"
NEAREST10 = "content: 10 nearest"
BASELINES = (NEWEST, POPULAR, CENTROID, NEAREST10)
PLAIN = (*BASELINES, BLEND)  # the rankings a reader would try first
SINGLE = {f"{name} alone": name for name in FEATURES if name != "member_author"}
CATALOG = CatalogSource()  # the retrieval whose recall a replay measures, with its defaults
METHODS: tuple[str, ...] = (CALIBRATED, CALIBRATED_DIVERSE, BLEND, *BASELINES, *SINGLE, "random")


@dataclass
class MethodResult:
    precision5: list[float] = field(default_factory=list)
    recall10: list[float] = field(default_factory=list)
    recall50: list[float] = field(default_factory=list)
    reciprocal: list[float] = field(default_factory=list)
    topics10: list[int] = field(default_factory=list)
    covered: list[float] = field(default_factory=list)  # per month: the channel's topics that got a post
    named: list[float] = field(default_factory=list)  # per month: its active members named as possibly interested

    @staticmethod
    def _mean(values: list[float] | list[int]) -> float:
        return float(np.mean(values)) if values else 0.0

    @property
    def p5(self) -> float:
        return self._mean(self.precision5)

    @property
    def r10(self) -> float:
        return self._mean(self.recall10)

    @property
    def r50(self) -> float:
        return self._mean(self.recall50)

    @property
    def mrr(self) -> float:
        return self._mean(self.reciprocal)

    @property
    def topics(self) -> float:
        return self._mean(self.topics10)

    @property
    def coverage(self) -> str:
        """The monthly topic and member coverage, or dashes where no month had them."""
        topics = f"{self._mean(self.covered):.2f}" if self.covered else "-"
        members = f"{self._mean(self.named):.2f}" if self.named else "-"
        return f"{topics:>8}{members:>9}"


@dataclass
class EvalReport:
    steps: int
    candidates: int
    results: dict[str, MethodResult]
    shares: int = 0
    fit: RankerModel | None = None
    recall: list[float] = field(default_factory=list)  # of the catalog source, at each step
    unjudged: int = 0  # shares in the weeks replayed of papers serving could not have offered then
    judged: list[np.ndarray] = field(default_factory=list)  # the universe rows each step is judged on

    def paired(self, method: str, baseline: str = BLEND, metric: str = "reciprocal") -> tuple[float, float]:
        """``method``'s MRR (or another per-step ``metric`` of ``MethodResult``) less ``baseline``'s, with the
        standard error of that difference over the steps (the paired differences, step by step): a difference
        within twice it is noise."""
        diff = np.array(getattr(self.results[method], metric)) - np.array(getattr(self.results[baseline], metric))
        if len(diff) < 2:
            return float(diff.mean()) if len(diff) else 0.0, float("nan")
        return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(len(diff)))

    def table(self) -> str:
        head = f"{'method':<28}{'P@5':>7}{'R@10':>7}{'R@50':>7}{'MRR':>7}{'topics@10':>11}{'topics':>8}{'members':>9}"
        lines = [head, "-" * len(head)]
        for name, r in self.results.items():
            lines.append(f"{name:<28}{r.p5:>7.3f}{r.r10:>7.3f}{r.r50:>7.3f}{r.mrr:>7.3f}{r.topics:>11.1f}{r.coverage}")
        lines.append(f"{self.steps} weekly steps, {self.shares} shares, median {self.candidates} candidates per step")
        if self.unjudged:
            lines.append(f"not judged: {self.unjudged} shares of papers not yet out, undated or older than the pools")
        lines.append(
            f"candidate recall (what the catalog source would find of the shares): {np.mean(self.recall or [0]):.3f}"
        )
        lines.append(
            f"coverage, per month of posts ({POSTS_PER_STEP} a week): the share of the channel's topics with a tenth "
            "of its engagement that got one (topics), of its active members named as possibly interested (members)"
        )
        if self.steps:
            diff, noise = self.paired(CALIBRATED)
            lines.append(
                f"calibrated less the default blend, MRR: {diff:+.3f} (standard error over the steps {noise:.3f})"
            )
            against = []
            for metric, label in (("recall50", "R@50"), ("reciprocal", "MRR")):
                best = max(PLAIN, key=lambda b: float(np.mean(getattr(self.results[b], metric))))
                diff, noise = self.paired(CALIBRATED, best, metric)
                against.append(f"{label} {diff:+.3f} against {best} (standard error {noise:.3f})")
            lines.append("calibrated less the best plain baseline: " + "; ".join(against))
        return "\n".join(lines)


@dataclass(frozen=True)
class Step:
    """One replayed step as a ranking under study sees it (``replay``'s ``extra``): the moment, the pool's rows of
    the universe, their features, the calibrated scores as serving ranks by them (the channel's window applied)
    and the model that gave them, which papers lie outside that window, and the pairs to learn from (only those
    before ``t`` may be used)."""

    t: float
    rows: np.ndarray
    x: np.ndarray
    calibrated: np.ndarray
    pairs: TrainingSet
    model: RankerModel
    outside: np.ndarray


# more rankings to replay beside the project's own (a measurement of an idea): scores by name, best highest
ExtraRankings = Callable[[Step], Mapping[str, np.ndarray]]


def topic_labels(vectors: np.ndarray, k: int = 20, seed: int = 0) -> np.ndarray:
    """A topic per paper: k-means clusters of the embeddings."""
    from sklearn.cluster import KMeans

    k = max(1, min(k, len(vectors) // 10))
    if len(vectors) < 2 or k < 2:
        return np.zeros(len(vectors), dtype=np.int64)
    return np.asarray(KMeans(n_clusters=k, n_init=3, random_state=seed).fit_predict(vectors), dtype=np.int64)


def replay(
    history: ChannelHistory,
    *,
    warmup: int = 8,
    window_days: float = 365.0,
    step_days: float = 7.0,
    refit_every: int | None = 4,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    seed: int = 13,
    max_steps: int = 200,
    topics: np.ndarray | None = None,
    extra: ExtraRankings | None = None,
) -> EvalReport:
    """The replay itself, on arrays (``paperping eval`` and ``bench/replay_eval.py`` load them). ``refit_every``
    None: the channel is never refitted, and its calibrated ranking is the default blend throughout (a channel
    before its first refit). ``extra`` adds rankings under study, scored on the same steps and pools, with the same
    window, and draws for ties of their own (no coverage columns)."""
    u = history.universe
    topics = topic_labels(u.vectors) if topics is None else topics
    member_first = history.member_first
    shared = np.flatnonzero(~np.isnan(member_first) & (member_first <= history.first_at))
    times = np.sort(member_first[shared])
    results = {m: MethodResult() for m in METHODS}
    if len(times) <= warmup:
        return EvalReport(0, 0, results, len(shared))
    pairs = training_set(history, judged=None)  # every step's fit is judged on the shares before it
    blend = default_model(popularity_weight)
    rng = random.Random(seed)
    studied = random.Random(seed + 1)  # the draws for ties of ``extra``: the project's rankings keep theirs
    model = blend
    sizes: list[int] = []
    recall: list[float] = []
    judged: list[np.ndarray] = []
    # each step ranks as of the moment just before its first share and scores what was shared in the
    # ``step_days`` from there, less half a day: a group that picks once a week is judged when it picks, not days
    # before, even when it picks at another hour of the same weekday
    span = (step_days - 0.5) * DAY
    start = warmup
    steps = unjudged = 0
    tally = CoverageTally(history, list(METHODS))
    while start < len(times) and steps < max_steps:
        t = float(times[start]) - 1.0
        week = history.rows[shared[(member_first[shared] >= t) & (member_first[shared] < t + span)]]
        # a paper not yet out (its month or year known only: until that stretch ended), undated, or older than the pools
        # (serving asked for the last ``window_days``) was no candidate then: counted neither for nor against a ranking
        offered = offered_at(u.available[week], t, window_days)
        unjudged, week = unjudged + int((~offered).sum()), week[offered]
        blend = default_model(popularity_weight, pairs.leanings(t))  # the channel's default blend then
        if refit_every is None:
            model = blend
        elif steps % refit_every == 0:
            model = pairs.fit(popularity_weight, before=t, now=datetime.fromtimestamp(t, UTC), current=model)
        tally.begin(t)
        scored = _score_step(history, t, week, window_days, model, blend, topics, rng, results, sizes, recall, tally)
        if scored is not None:
            steps += 1
            judged.append(week)
            if extra is not None:
                rows, x, scores, relevant, outside = scored
                step = Step(t, rows, x, scores, pairs, model, outside)
                _score_studied(extra, step, relevant, topics, studied, results)
        start = int(np.searchsorted(times, t + span))
    tally.close()
    for name in METHODS:  # the rankings under study have no coverage columns
        results[name].covered, results[name].named = tally.topics[name], tally.members[name]
    return EvalReport(steps, int(np.median(sizes or [0])), results, len(shared), model, recall, unjudged, judged)


def _score_step(
    history: ChannelHistory,
    t: float,
    truth_rows: np.ndarray,
    window_days: float,
    model: RankerModel,
    blend: RankerModel,
    topics: np.ndarray,
    rng: random.Random,
    results: dict[str, MethodResult],
    sizes: list[int],
    recall: list[float],
    tally: CoverageTally,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Score every method at one step on what the channel shared that week and serving could have offered
    (``truth_rows``), and the candidate stage's recall; None when there is none, else the pool's rows, their
    features, the calibrated scores, which rows the channel shared, and which lie outside the channel's window."""
    u = history.universe
    state, known = history.state_at(t)
    state = replace(state, taste=model.taste)  # the refit's model of the paper itself, if it learnt one
    if len(truth_rows) == 0:
        return None
    rows = np.union1d(pool_rows(u, t, window_days, history.rows[known]), truth_rows)
    sizes.append(len(rows))
    recall.append(_retrieval_recall(u, state, rows, truth_rows))
    x = fill_unknown(features(state, u.candidates(rows, t), t))
    relevant = np.isin(rows, truth_rows)
    # serving would not have offered what is older than the channel's window
    outside = t - u.available[rows] > (model.window_days if model.window_days is not None else np.inf) * DAY
    scores = model.serving_scores(x, outside)
    orders: dict[str, np.ndarray] = {
        CALIBRATED: _order(scores, rng),
        # as serving chooses: variety, and the channel's topics in proportion to their engagement over the month
        CALIBRATED_DIVERSE: diversify(
            scores, u.vectors[rows], 10, interests=tally.interests, posted=tally.posted(CALIBRATED_DIVERSE)
        ),
        BLEND: _order(blend.score(x), rng),
        "random": np.array(rng.sample(range(len(rows)), len(rows)), dtype=np.int64),
    }
    for name, feature in SINGLE.items():
        column = x[:, FEATURES.index(feature)]
        orders[name] = _order(-column if feature == "disliked" else column, rng)
    orders.update(_baselines(history, t, rows, known, rng))
    for name, order in orders.items():
        _record(results[name], relevant[order], topics[rows[order[:10]]])
    tally.add({name: rows[order[:POSTS_PER_STEP]] for name, order in orders.items()})
    return rows, x, scores, relevant, outside


def _score_studied(
    extra: ExtraRankings,
    step: Step,
    relevant: np.ndarray,
    topics: np.ndarray,
    rng: random.Random,
    results: dict[str, MethodResult],
) -> None:
    """Score the rankings under study at one step. Each must rank every paper of the pool, under a name of its
    own, at every step (so that its figures pair with the others' step by step); the step's arrays are read-only."""
    for array in (step.rows, step.x, step.calibrated, step.outside):
        array.setflags(write=False)
    studied = dict(extra(step))
    before = [n for n in results if n not in METHODS]
    for name, s in studied.items():
        if name in METHODS or len(s) != len(step.rows):
            raise ValueError(f"a ranking under study takes a name of the replay's own or misses papers: {name}")
    if before and sorted(before) != sorted(studied):
        raise ValueError(f"the rankings under study changed from one step to the next: {sorted(studied)}")
    for name, s in studied.items():
        order = _order(below_window(s, step.outside), rng)  # serving's window, whatever the ranking
        _record(results.setdefault(name, MethodResult()), relevant[order], topics[step.rows[order[:10]]])


def _record(r: MethodResult, hits: np.ndarray, top_topics: np.ndarray) -> None:
    """One step's figures for one ranking: ``hits`` marks what the channel shared, in the ranking's order."""
    r.precision5.append(float(hits[:5].sum()) / 5.0)
    r.recall10.append(float(hits[:10].sum()) / float(hits.sum()))
    r.recall50.append(float(hits[:50].sum()) / float(hits.sum()))
    first = np.flatnonzero(hits)
    r.reciprocal.append(1.0 / (first[0] + 1) if len(first) else 0.0)
    r.topics10.append(len(set(top_topics.tolist())))


def _baselines(
    history: ChannelHistory, t: float, rows: np.ndarray, known: np.ndarray, rng: random.Random
) -> dict[str, np.ndarray]:
    """The plain rankings: newest first and most read by then (an unknown date or count ranks at random among
    the unknown, below the known), and content alone: cosine to the centroid of what the channel had, and the
    mean cosine to its ten closest papers."""
    u = history.universe
    published = u.published[rows]
    popularity = u.popularity_at(rows, t)
    low = -np.inf
    out = {
        NEWEST: _order(np.where(np.isnan(published), low, published), rng),
        POPULAR: _order(np.where(np.isnan(popularity), low, popularity), rng),
    }
    had = u.vectors[history.rows[known]]
    if len(had):
        centre = had.mean(axis=0)
        out[CENTROID] = _order(u.vectors[rows] @ (centre / (np.linalg.norm(centre) or 1.0)), rng)
        sims = u.vectors[rows] @ had.T
        k = min(10, sims.shape[1])
        out[NEAREST10] = _order(np.sort(sims, axis=1)[:, -k:].mean(axis=1), rng)
    else:
        out[CENTROID] = out[NEAREST10] = np.array(rng.sample(range(len(rows)), len(rows)), dtype=np.int64)
    return out


def _retrieval_recall(u: Universe, state: ChannelState, pool: np.ndarray, truth: np.ndarray) -> float:
    """What the catalog source (``retrieve.candidates.CatalogSource``) would have found in ``pool``
    of what was shared (``truth``): the whole window when small, else each engaged paper's nearest neighbours."""
    if len(pool) <= WHOLE_WINDOW:
        return 1.0
    liked = np.argsort(-state.weights)[: CATALOG.seeds]
    seeds = state.vectors[liked[state.weights[liked] > 0]]
    if not len(seeds):
        return 0.0
    mean = seeds.mean(axis=0)
    queries = np.vstack([seeds, mean / (np.linalg.norm(mean) or 1.0), state.interests[: CATALOG.members]])
    sims = u.vectors[pool] @ queries.T
    found = np.unique(np.argsort(-sims, axis=0)[: CATALOG.per_query].ravel())
    return float(np.isin(truth, pool[found]).mean())


def _order(scores: np.ndarray, rng: random.Random) -> np.ndarray:
    """Best first; ties in random order, so a method that cannot tell papers apart gains nothing by it."""
    jitter = np.array([rng.random() for _ in range(len(scores))])
    return np.lexsort((jitter, -scores))


def evaluate_channel(
    conn: psycopg.Connection,
    team: str,
    channel: str,
    model: str,
    *,
    warmup: int = 8,
    config: ScoringConfig | None = None,
    window_days: int = 365,
    max_steps: int = 200,
    refit_every: int | None = 4,
) -> EvalReport:
    """Replay the channel against every paper with a vector in the knowledge base (``refit_every``: as ``replay``)."""
    config = config or ScoringConfig()
    ctx = load_channel_context(conn, team, channel, datetime.now(UTC), model)
    ids = load_embedded_ids(conn, model)
    universe = load_universe(conn, model, [*ctx.papers, *ids], (team, channel))
    history = build_history(ctx, universe, config.half_life_days)
    return replay(
        history,
        warmup=warmup,
        window_days=window_days,
        popularity_weight=config.popularity_weight,
        max_steps=max_steps,
        refit_every=refit_every,
    )
