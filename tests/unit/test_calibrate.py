"""The calibrated ranker on hand-made data: features, the fit and its prior, what it says, diversity."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from socialrag.recommender.rank.calibrate import (
    RankerModel,
    default_model,
    describe,
    fit,
    prior_weights,
)
from socialrag.recommender.rank.diversity import diversify
from socialrag.recommender.rank.features import (
    FEATURES,
    CandidateSet,
    ChannelState,
    features,
    fill_unknown,
    pair_differences,
)
from socialrag.recommender.rank.history import build_history
from socialrag.recommender.rank.leanings import (
    FRESH_BLEND_WEIGHT,
    MIN_SHARES,
    NEW_WORK_DAYS,
    STANDING_BLEND_WEIGHT,
    Leanings,
    reads_new_work,
    reads_widely_read,
)
from socialrag.recommender.rank.training import training_set
from socialrag.recommender.rank.universe import build_universe
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper
from socialrag.rows import AuthorRef, MemberInfo, PaperInfo, ReactionEvent, Share

T = datetime(2024, 6, 1, tzinfo=UTC).timestamp()
POP, SIM = FEATURES.index("popularity"), FEATURES.index("similarity")


def unit(*v: float) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def state(vectors: list[np.ndarray], weights: list[float], disliked: list[bool] | None = None) -> ChannelState:
    return ChannelState(
        np.stack(vectors),
        np.array(weights),
        np.array(disliked or [False] * len(weights)),
        np.array([2.0, 0.0]),
        np.array([1.0]),
        np.array([False, True]),
    )


def cands(vectors: list[np.ndarray], popularity: list[float], authors: list[list[int]]) -> CandidateSet:
    flat = [a for row in authors for a in row]
    owner = [i for i, row in enumerate(authors) for _ in row]
    return CandidateSet(
        np.stack(vectors),
        np.array([T - 10 * 86400.0] * len(vectors)),
        np.array(popularity),
        np.array(flat, dtype=np.int64),
        np.array(owner, dtype=np.int64),
        np.array([0] + [-1] * (len(vectors) - 1)),
    )


def test_features_read_what_the_channel_had() -> None:
    liked, disliked = unit(1, 0, 0), unit(0, 1, 0)
    s = state([liked, disliked], [2.0, -1.0], [False, True])
    c = cands([unit(1, 0.1, 0), unit(0.1, 1, 0), unit(0, 0, 1)], [1000, 3, 0], [[0], [1], []])
    x = features(s, c, T)
    f = dict(zip(FEATURES, x.T, strict=True))
    assert f["similarity"][0] > 0 > f["similarity"][1]  # close to a liked paper; close to a disliked one
    assert f["nearest"][0] > 0.9 and f["disliked"][1] > 0.9 and f["disliked"][0] < 0.2
    assert f["popularity"][0] == 1.0 and 0 < f["popularity"][1] < 0.3 and f["popularity"][2] == 0
    assert f["authors"][0] > 0 and f["authors"][1] == 0  # author 0 is one the channel engaged with
    assert f["member_author"][:2].tolist() == [0, 1]  # author 1 is a member
    assert f["venue"][0] > 0
    assert np.allclose(f["recency"], 0.5 ** (10 / 180))
    # what is not known of a paper is unknown, not its lowest value: no authors, no venue
    assert np.isnan(f["authors"][2]) and np.isnan(f["member_author"][2])
    assert np.isnan(f["venue"][1]) and np.isnan(f["venue"][2])


def test_unknown_features_are_ranked_at_the_average_of_the_known() -> None:
    s = state([unit(1, 0, 0)], [1.0])
    c = cands([unit(1, 0, 0)] * 3, [1000, float("nan"), 0], [[0], [0], [0]])
    c = replace(c, published=np.array([T - 86400.0, np.nan, T - 400 * 86400.0]))
    x = features(s, c, T)
    assert np.isnan(x[1, POP]) and np.isnan(x[1, FEATURES.index("recency")]), "no reading, no date: unknown"
    filled = fill_unknown(x)
    assert filled[2, POP] < filled[1, POP] < filled[0, POP], "neither sunk nor lifted by what nobody knows"
    rec = FEATURES.index("recency")
    assert filled[2, rec] < filled[1, rec] < filled[0, rec]
    assert not np.isnan(filled).any()
    assert pair_differences(x[1:2], x[0:1])[0, POP] == 0.0, "a pair teaches nothing of a feature one side lacks"


def test_an_unknown_popularity_is_read_like_that_of_papers_of_its_age() -> None:
    """A count grows with age: this week's paper with no reading yet is read like this week's papers (a few
    readers), not like the average of the year's, which last year's widely read papers lift."""
    rng = np.random.default_rng(2)
    n = 200
    ages = np.concatenate([rng.uniform(0, 7, n // 2), rng.uniform(200, 365, n // 2)])
    counts = np.where(ages < 7, 2.0, 300.0)
    counts[[0, 1, n // 2]] = np.nan  # two new papers and one old one not read yet
    c = cands([unit(1, 0, 0)] * n, counts.tolist(), [[0]] * n)
    x = fill_unknown(features(state([unit(1, 0, 0)], [1.0]), replace(c, published=T - ages * 86400.0), T))
    few, many = features(state([unit(1, 0, 0)], [1.0]), cands([unit(1, 0, 0)] * 2, [2.0, 300.0], [[0]] * 2), T)[:, POP]
    assert x[0, POP] == pytest.approx(few) and x[1, POP] == pytest.approx(few)
    assert x[n // 2, POP] == pytest.approx(many)


def test_moments_laid_end_to_end_are_each_filled_from_their_own_candidates() -> None:
    """A refit fills hundreds of moments at once: each as if alone, whatever its neighbours know (a moment with no
    popularity known at all, one with every age unknown, one of a single paper, ties in age)."""
    rng = np.random.default_rng(4)
    rec = FEATURES.index("recency")
    sizes = np.array([1, 30, 7, 45, 2, 60, 12])
    x = rng.random((int(sizes.sum()), len(FEATURES)))
    x[:, rec] = np.round(x[:, rec], 1)
    x[rng.random(x.shape) < 0.3] = np.nan
    starts = np.cumsum(sizes) - sizes
    x[starts[1] : starts[2], POP] = np.nan  # nobody's popularity known in that moment
    x[starts[3] : starts[4], rec] = np.nan  # nor any age in this one
    together = fill_unknown(x, starts)
    alone = np.vstack([fill_unknown(part) for part in np.split(x, starts[1:])])
    assert not np.isnan(together).any()
    np.testing.assert_allclose(together, alone, rtol=1e-12, atol=1e-15)
    assert np.array_equal(together[: sizes[0]], alone[: sizes[0]])


def test_shared_papers_without_popularity_do_not_teach_that_popularity_is_bad() -> None:
    """Many real shares have no popularity reading at all; read as zero, they made a channel's fit say that
    the papers it shares are unpopular (the weight went negative)."""
    ctx, infos, vectors = history_context(60, popular_wins=True)
    rng = np.random.default_rng(5)
    for pid, info in list(infos.items()):
        known = None if pid in ctx.papers else float(rng.integers(0, 1000))
        infos[pid] = replace(info, popularity=known)
        if pid in ctx.papers:
            ctx.papers[pid] = replace(ctx.papers[pid], info=infos[pid])
    history = build_history(ctx, build_universe(infos, vectors), 60.0)
    pos, neg, shares = training_set(history).arrays()
    assert np.isnan(pos[:, POP]).all() and not np.isnan(neg[:, POP]).all()
    model = fit(pos, neg, shares)
    assert model.weights[POP] >= 0.0, model.weights


def pairs(rng: np.random.Generator, n: int, driver: str) -> tuple[np.ndarray, np.ndarray]:
    """Pairs where what was shared beat what was not on ``driver`` alone; other features are noise."""
    pos = rng.random((n, len(FEATURES))) * 0.2
    neg = rng.random((n, len(FEATURES))) * 0.2
    k = FEATURES.index(driver)
    pos[:, k] = rng.random(n) * 0.5 + 0.5
    neg[:, k] = rng.random(n) * 0.6
    return pos, neg


def test_fit_learns_what_drives_a_channel_and_says_it() -> None:
    rng = np.random.default_rng(1)
    pos, neg = pairs(rng, 4000, "popularity")
    model = fit(pos, neg, 400)
    assert model.learnt and model.weights[POP] > model.weights[SIM]
    assert "widely read papers" in describe(model)
    stored = RankerModel.from_json(model.to_json(), model.shares, model.pairs, model.fitted_at, 0.05)
    assert np.allclose(stored.weights, model.weights)


def test_little_history_keeps_the_prior() -> None:
    rng = np.random.default_rng(2)
    pos, neg = pairs(rng, 40, "popularity")
    few = fit(pos, neg, MIN_SHARES - 1)
    assert np.array_equal(few.weights, prior_weights()) and not few.learnt
    assert "default blend" in describe(few)
    # with more shares the data moves the weights, the more the more shares there are
    some = fit(pos, neg, 20)
    many = fit(pos, neg, 2000)
    ratio = [m.weights[POP] / max(m.weights[SIM], 1e-9) for m in (some, many)]
    assert ratio[0] < ratio[1] and some.prior_share > many.prior_share


def test_an_unknown_stored_feature_falls_back_to_the_prior() -> None:
    model = RankerModel.from_json({"features": ["similarity"], "weights": [2.0], "scales": [1.0]}, 50, 900, None, 0.05)
    assert model.weights[SIM] == 2.0 and model.weights[POP] == 0.05
    garbage = RankerModel.from_json({"features": "x", "weights": None}, 0, 0, None, 0.05)
    assert np.array_equal(garbage.weights, default_model().weights)


def test_diversify_spreads_the_top_and_respects_recent_posts() -> None:
    a, a2, b = unit(1, 0), unit(0.99, 0.05), unit(0, 1)
    scores = np.array([3.0, 2.9, 2.0, 0.0, 0.1])
    vectors = np.stack([a, a2, b, b, a])
    order = diversify(scores, vectors, 2)
    assert order[:2].tolist() == [0, 2]  # the near-duplicate of the best waits
    after_a = diversify(scores, vectors, 1, recent=np.stack([a]))
    assert after_a[0] == 2  # the last post was about a
    assert sorted(order.tolist()) == list(range(5))
    assert diversify(scores, vectors, 2, weight=0).tolist() == np.argsort(-scores).tolist()


def history_context(
    n: int, popular_wins: bool, age_days: int = 20
) -> tuple[ChannelContext, dict[int, PaperInfo], dict[int, np.ndarray]]:
    """A channel that shares ``n`` papers a week apart, each ``age_days`` old then; a pool of others. The shared
    ones are the popular (or the unpopular) ones, with random topics."""
    rng = np.random.default_rng(3)
    start = datetime(2023, 1, 1, tzinfo=UTC)
    infos: dict[int, PaperInfo] = {}
    vectors: dict[int, np.ndarray] = {}
    papers: dict[int, SharedPaper] = {}
    for pid in range(1, 400):
        published = start + timedelta(days=int(rng.integers(-200, 7 * n)))
        shared = pid <= n
        pop = 500.0 if shared == popular_wins else 2.0
        infos[pid] = PaperInfo(
            pid, f"P{pid}", None, None, 2023, (AuthorRef(pid, f"A{pid}", f"a{pid}"),), pop, publication_date=published
        )
        vectors[pid] = unit(*rng.normal(size=8))
        if shared:
            at = start + timedelta(days=7 * pid)
            infos[pid] = PaperInfo(
                pid,
                f"P{pid}",
                None,
                None,
                2023,
                infos[pid].authors,
                pop,
                publication_date=at - timedelta(days=age_days),
            )
            papers[pid] = SharedPaper(
                infos[pid],
                [Share(pid, str(pid), "U1", at, None, None)],
                [ReactionEvent(pid, "U2", "+1", at + timedelta(hours=1))],
            )
    ctx = ChannelContext(
        "T", "C", start + timedelta(days=7 * n + 7), papers, {"U1": MemberInfo("U1", "ana")}, {}, {}, {}, vectors
    )
    return ctx, infos, vectors


@pytest.mark.parametrize("popular_wins", [True, False])
def test_training_pairs_from_history_teach_the_sign_of_popularity(popular_wins: bool) -> None:
    ctx, infos, vectors = history_context(60, popular_wins)
    universe = build_universe(infos, vectors)
    history = build_history(ctx, universe, 60.0)
    training = training_set(history)
    pos, neg, shares = training.arrays()
    assert shares >= 50 and len(pos) == len(neg) > 500
    # nothing from after a moment is seen at it: the first pairs know only the earliest shares
    assert min(training.times) > history.first_at[0]
    model = fit(pos, neg, shares)
    assert (model.weights[POP] > 0.05) if popular_wins else (model.weights[POP] < 0.05)


def test_a_channel_whose_history_says_nothing_is_told_that_the_lead_is_noise() -> None:
    """Pairs that carry no preference: every contestant ranks the held-out shares at chance, and the judge may
    take one whose lead over the blend is luck. ``status`` then says the lead is within the noise; a lead the
    shares do show is not called noise."""
    from socialrag.recommender.rank.guard import fit_guarded

    rng = np.random.default_rng(0)
    n_moments, per = 80, 60  # each judged share among 61 papers: a pool like serving's
    times = np.repeat(np.arange(n_moments, dtype=float) * 86400.0, per)  # a share a day
    told = 0
    for _ in range(6):
        pos = rng.random((n_moments * per, len(FEATURES)))
        neg = rng.random((n_moments * per, len(FEATURES)))
        pos[:, SIM] = neg[:, SIM] = 0.0  # nothing the default blend could use either
        model = fit_guarded(pos, neg, times, default_model())
        assert model.shares == n_moments
        if model.decision.startswith("kept the default blend"):
            assert np.allclose(model.weights, prior_weights()) and model.prior_share == 1.0
            assert "agrees with the default blend" in describe(model)
        else:
            assert "is within the noise of 20 shares" in model.decision, model.decision
            told += 1
    assert told, "six histories of noise, and the judge kept the blend at each: the sentence was never tested"
    learnt = fit_guarded(*pairs(rng, n_moments * per, "popularity"), times, default_model())
    assert learnt.weights[POP] > learnt.weights[SIM]  # where there is a preference, it is learnt
    assert "widely read papers" in describe(learnt) and "within the noise" not in learnt.decision


def test_a_share_made_before_the_listed_publication_date_teaches_nothing() -> None:
    ctx, infos, vectors = history_context(30, True)
    early = next(iter(ctx.papers))
    share_at = ctx.papers[early].first_share.at
    infos[early] = PaperInfo(
        early,
        "P",
        None,
        None,
        2023,
        infos[early].authors,
        500.0,
        publication_date=(share_at + timedelta(days=30)).date(),
    )
    history = build_history(ctx, build_universe(infos, vectors), 60.0)
    times = set(training_set(history).times)
    assert share_at.timestamp() not in times


def test_a_channel_that_reads_new_work_has_a_default_that_leans_to_new_papers() -> None:
    """A channel whose members mostly share papers under ``NEW_WORK_DAYS`` old gets a little of ``fresh`` in its
    default blend (every fit is pulled toward that blend); a seminar that presents last year's papers does not.
    Decided at each moment from the shares before it, and kept with the stored fit."""
    fresh = FEATURES.index("fresh")
    assert (
        prior_weights()[fresh] == 0.0 and prior_weights(leanings=Leanings(new_work=True))[fresh] == FRESH_BLEND_WEIGHT
    )
    assert reads_new_work(np.full(MIN_SHARES, NEW_WORK_DAYS - 1.0))
    assert not reads_new_work(np.full(MIN_SHARES - 1, 10.0)), "too few shares to tell"
    assert not reads_new_work(np.array([10.0] * 4 + [400.0] * 5)), "the median share is old"

    ctx, infos, vectors = history_context(40, True)
    pairs = training_set(build_history(ctx, build_universe(infos, vectors), 60.0))
    early = float(pairs.share_at[MIN_SHARES - 2]) + 1.0
    assert pairs.leanings(None).new_work and not pairs.leanings(early).new_work, "only the shares before it count"
    model = pairs.fit()
    assert model.new_work and model.prior[fresh] == FRESH_BLEND_WEIGHT
    stored = RankerModel.from_json(model.to_json(), model.shares, model.pairs, model.fitted_at, 0.05)
    assert stored.new_work and np.array_equal(stored.prior, prior_weights(0.05, model.leanings))
    assert "its default leans to new papers" in describe(stored)

    old_ctx, old_infos, old_vectors = history_context(40, True, age_days=300)
    old = training_set(build_history(old_ctx, build_universe(old_infos, old_vectors), 60.0))
    assert not old.leanings(None).new_work and not old.fit().new_work
    assert "new papers" not in describe(old.fit())


def test_a_channel_that_reads_what_its_field_reads_has_a_default_that_leans_to_papers_read_more_than_their_peers() -> (
    None
):
    """A channel whose shares were read more than the papers of their age it passed over gets popularity for its
    age (``standing``) in its default blend; one whose shares were the little-read ones does not, and neither does
    a channel whose popularity is unknown (most imported histories). Decided from the shares before each moment,
    kept with the stored fit, and said in ``status``."""
    standing = FEATURES.index("standing")
    assert prior_weights()[standing] == 0.0
    assert prior_weights(leanings=Leanings(widely_read=True))[standing] == STANDING_BLEND_WEIGHT
    times = np.repeat(np.arange(MIN_SHARES, dtype=float), 3)
    above, below = np.full(len(times), 0.4), np.full(len(times), 0.1)
    assert reads_widely_read(above, below, times)
    assert not reads_widely_read(below, above, times)
    assert not reads_widely_read(above[3:], below[3:], times[3:]), "too few shares to tell"
    unknown = np.full(len(times), np.nan)
    assert not reads_widely_read(unknown, below, times), "unknown is no evidence"

    ctx, infos, vectors = history_context(40, True)
    pairs = training_set(build_history(ctx, build_universe(infos, vectors), 60.0))
    early = float(pairs.share_at[MIN_SHARES - 2]) + 1.0
    assert pairs.leanings(None).widely_read and not pairs.leanings(early).widely_read
    model = pairs.fit()
    assert model.widely_read and model.prior[standing] == STANDING_BLEND_WEIGHT
    stored = RankerModel.from_json(model.to_json(), model.shares, model.pairs, model.fitted_at, 0.05)
    assert stored.leanings == model.leanings and np.array_equal(stored.prior, model.prior)
    assert "read more than others of their age" in describe(stored)

    ctx, infos, vectors = history_context(40, False)
    niche = training_set(build_history(ctx, build_universe(infos, vectors), 60.0))
    assert not niche.leanings(None).widely_read and not niche.fit().widely_read
    assert "of their age" not in describe(niche.fit())


def test_popularity_for_its_age_compares_a_paper_with_the_candidates_of_about_its_age() -> None:
    """``standing``: among a year's papers an old one has the larger count; measured against its age peers, the
    new paper read more than the new ones around it stands highest. Unknown without a reading or a date."""
    day = 86400.0
    n = 60
    published = T - np.concatenate([np.arange(30) * day, 300 * day + np.arange(30) * day])
    pop = np.concatenate([np.full(30, 5.0), np.full(30, 200.0)])
    pop[3] = 60.0  # a new paper read much more than the new ones around it
    pop[40] = 250.0  # an old one read a little more than its peers
    pop[5] = np.nan
    published[7] = np.nan
    cands = CandidateSet(
        np.eye(n, 4, dtype=np.float32), published, pop, np.zeros(0, np.int64), np.zeros(0, np.int64), np.full(n, -1)
    )
    state = ChannelState(np.zeros((0, 4)), np.zeros(0), np.zeros(0, bool), np.zeros(0), np.zeros(0), np.zeros(0, bool))
    x = features(state, cands, T)
    column = x[:, FEATURES.index("standing")]
    assert np.isnan(column[5]) and np.isnan(column[7])
    assert int(np.nanargmax(column)) == 3
    assert int(np.nanargmax(x[:, POP])) == 40, "by the count alone, the old paper"
    assert column[40] > 0 and abs(column[50]) < 0.05
