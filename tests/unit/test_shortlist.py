"""The paper model orders the default blend's shortlist (``rank/shortlist.py``): the blend chooses which papers
come first, the paper model helps order them, and only while the default blend is what a channel is served."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np

from socialrag.recommender.rank.calibrate import RankerModel, default_model, describe
from socialrag.recommender.rank.features import FEATURES
from socialrag.recommender.rank.guard import fit_guarded
from socialrag.recommender.rank.leanings import Leanings
from socialrag.recommender.rank.shortlist import SHORTLIST, order_shortlist
from socialrag.recommender.rank.taste import MIN_TASTE_MOMENTS, TasteSamples, with_shortlist
from tests.unit.test_taste import channel, unit

NOW = datetime(2024, 1, 1, tzinfo=UTC)
TASTE = FEATURES.index("taste")
DAY = 86400.0


def test_the_shortlist_keeps_the_blends_papers_and_scores_and_orders_them_with_the_paper_model() -> None:
    rng = np.random.default_rng(0)
    scores = rng.normal(size=400)
    taste = rng.normal(size=400)
    out = order_shortlist(scores, taste)
    first = set(np.argsort(-scores)[:SHORTLIST].tolist())
    assert set(np.argsort(-out)[:SHORTLIST].tolist()) == first, "the same papers reach the top 50"
    rest = np.array(sorted(set(range(400)) - first))
    assert np.array_equal(out[rest], scores[rest]), "the others keep their scores and order"
    assert np.allclose(np.sort(out), np.sort(scores)), "the shortlist's scores are the blend's, handed out again"
    # the paper model's favourite among the blend's third to fiftieth moves ahead of the blend's first
    scores = -np.arange(100, dtype=np.float64)  # the blend's order is the row order
    taste = np.zeros(100)
    taste[2], taste[0] = 1.0, -1.0
    out = order_shortlist(scores, taste)
    assert int(np.argmax(out)) == 2 and out[2] == 0.0
    taste[60] = 5.0  # outside the shortlist, whatever the paper model thinks of it
    assert order_shortlist(scores, taste)[60] == scores[60]
    assert np.isnan(order_shortlist(scores, np.where(np.arange(100) == 2, np.nan, taste))).sum() == 0


def test_ties_and_unknowns_are_ordered_the_same_way_every_time() -> None:
    scores = np.ones(60)  # a blend that cannot tell them apart: ties keep the candidates' order
    taste = np.full(60, np.nan)
    taste[5] = 0.3
    out = order_shortlist(scores, taste)
    assert np.array_equal(out, order_shortlist(scores.copy(), taste.copy()))
    assert np.array_equal(order_shortlist(scores, np.zeros(60)), scores), "no preference: the blend's order"
    assert len(order_shortlist(np.array([1.0]), np.array([0.0]))) == 1
    assert order_shortlist(np.zeros(0), np.zeros(0)).shape == (0,)


def test_only_the_default_blend_with_a_direction_lets_the_paper_model_order_it() -> None:
    direction = np.ones(4) / 2.0
    blend = replace(default_model(), taste=direction, shortlist=True)
    assert blend.orders_shortlist and not default_model().orders_shortlist
    older = replace(blend, shortlist=False)  # an older release's blend with the paper model's own direction
    assert not older.orders_shortlist
    fit = replace(blend, weights=blend.weights * 1.5)
    assert not fit.orders_shortlist, "a fit or a single feature ranks by its own weights alone"
    x = np.zeros((80, len(FEATURES)))
    x[:, FEATURES.index("nearby")] = -np.arange(80) / 80.0
    x[:, TASTE] = np.where(np.arange(80) == 3, 2.0, np.arange(80) / 80.0)  # the blend's first, the model's last
    assert int(np.argmax(blend.serving_scores(x))) == 3
    assert int(np.argmax(default_model().serving_scores(x))) == 0
    outside = np.arange(80) == 3  # outside the channel's window: below every other paper, shortlist or not
    assert int(np.argmin(blend.serving_scores(x, outside))) == 3
    weight = float(blend.prior[FEATURES.index("popularity")])
    back = RankerModel.from_json(blend.to_json(), 10, 100, NOW, weight)
    assert back.orders_shortlist, "it survives a restart"
    stored = {k: v for k, v in blend.to_json().items() if k != "shortlist"}  # as an older release stored it
    assert not RankerModel.from_json(stored, 10, 100, NOW, weight).orders_shortlist
    reweighted = RankerModel.from_json(blend.to_json(), 10, 100, NOW, weight * 2)  # the admin changed the blend
    assert not reweighted.orders_shortlist, "weights that are no longer the blend's are a fit's: ranked alone"
    noted = replace(blend, taste_note="learnt from 9 papers the channel picked against 90 it passed over")
    assert "it helps order the default blend's first 50 papers" in describe(noted)
    assert "helps order" not in describe(replace(noted, shortlist=False))
    assert "helps order" not in describe(RankerModel.from_json(noted.to_json(), 10, 100, NOW, weight * 2))
    assert replace(blend, taste_model="another-model").for_serving("all-MiniLM-L6-v2", 4).taste is None


def test_a_channel_kept_on_the_default_blend_gets_the_direction_and_status_says_what_it_does() -> None:
    rng = np.random.default_rng(8)
    pos, neg, times, served, samples = channel(rng, unit(rng, 1)[0], shares=30)
    few_days = [replace(m, at=float(times[-1])) for m in served]  # the held-out shares on one day: no judging
    model = fit_guarded(pos, neg, times, default_model(), now=NOW, served=few_days, samples=samples)
    assert model.decision.startswith("kept the default blend"), model.decision
    assert model.orders_shortlist and model.taste is not None
    assert f"it helps order the default blend's first {SHORTLIST} papers." in describe(model)
    assert "Its paper model: learnt from" in describe(model) and "helps" not in model.taste_note
    early = samples.before(float(np.sort(samples.liked_at)[MIN_TASTE_MOMENTS - 2]) + 1.0)
    assert with_shortlist(default_model(), early).taste is None, "too few picks: the blend alone"
    blend = default_model()
    assert with_shortlist(blend, None) is blend
    # a channel that reads what its field reads: its picks follow how widely a paper is read, which the paper
    # model cannot see, so its blend orders its first papers alone
    field = default_model(leanings=Leanings(new_work=False, widely_read=True))
    assert with_shortlist(field, samples) is field and not replace(field, taste=model.taste).orders_shortlist


def test_a_judged_blend_keeps_its_held_out_figures_in_the_note() -> None:
    rng = np.random.default_rng(10)
    pos, neg, times, served, samples = channel(rng, None)  # picks at random: here the judge finds the blend best
    model = fit_guarded(pos, neg, times, default_model(), now=NOW, served=served, samples=samples)
    assert model.decision.startswith("kept the default blend: on the latest 40 shares"), model.decision
    assert model.orders_shortlist and "ROC-AUC" in model.taste_note
    assert describe(model).count("it helps order the default blend's first 50 papers") == 1
    other = fit_guarded(pos, neg, times, default_model(), now=NOW, served=served[:-1] + served[-1:], samples=None)
    assert not other.orders_shortlist, "without the picks to learn from, the blend alone"
    rng = np.random.default_rng(3)
    pos, neg, times, served, samples = channel(rng, None)  # here a single feature wins: the model ranks alone
    won = fit_guarded(pos, neg, times, default_model(), now=NOW, served=served, samples=samples)
    assert won.decision.startswith("popularity alone") and not won.orders_shortlist


def test_the_direction_is_learnt_only_from_what_came_before() -> None:
    vectors = np.eye(4, dtype=np.float32)
    liked = np.array([0] * 10)
    samples = TasteSamples(vectors, liked, np.arange(10) * DAY, np.array([1] * 10), np.arange(10) * DAY)
    model = with_shortlist(default_model(), samples.before(5 * DAY))
    assert model.taste is None, "five picks before the refit: too few"
    model = with_shortlist(default_model(), samples)
    assert model.taste is not None and float(model.taste[0]) > 0 > float(model.taste[1])
