"""The channel's model of the paper itself (``rank/taste.py``): a direction in the embedding space learnt from what
the channel picked against what it passed over, weighed by the judge alone on the held-out shares, kept with what
it learnt from and how it scored, and stored with the fit."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import numpy as np

from socialrag.recommender.rank.calibrate import RankerModel, default_model, describe
from socialrag.recommender.rank.features import FEATURES, CandidateSet, ChannelState, features, taste_scores
from socialrag.recommender.rank.guard import fit_guarded
from socialrag.recommender.rank.served import ServedMoment
from socialrag.recommender.rank.taste import MIN_TASTE_MOMENTS, TasteSamples, fit_taste, paper_model_clear, roc_auc

NOW = datetime(2026, 3, 1, tzinfo=UTC)
TASTE = FEATURES.index("taste")
WEEK = 7 * 86400.0
D = 24


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, D))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def channel(
    rng: np.random.Generator, hidden: np.ndarray | None, shares: int = 60, pool: int = 300, per: int = 20
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[ServedMoment], TasteSamples]:
    """A channel that picks, each week, the paper of a pool of ``pool`` that lies furthest along ``hidden`` (at
    random with None), while the features say nothing: pairs, held-out moments (the latest 40) and samples."""
    vectors = unit(rng, 4000)
    pos, neg, times, served = [], [], [], []
    liked, passed = [], []
    for m in range(shares):
        t = m * WEEK
        rows = rng.choice(len(vectors), size=pool, replace=False)
        lean = vectors[rows] @ hidden if hidden is not None else rng.random(pool)
        picked = int(rows[int(np.argmax(lean + rng.normal(scale=0.05, size=pool)))])
        others = np.array([r for r in rows if r != picked])
        drawn = rng.choice(others, size=per, replace=False)
        x = rng.random((1 + len(others), len(FEATURES))) * 0.2
        x[:, TASTE] = 0.0
        pos.extend([x[0]] * per)
        neg.extend(x[1 : per + 1])
        times.extend([t] * per)
        passed.extend((int(r), t) for r in drawn)
        liked.append((picked, t))
        passed.extend((int(r), t) for r in rng.choice(len(vectors), size=per, replace=False))
        if m >= shares - 40:
            served.append(ServedMoment(t, x, np.concatenate([[picked], others])))
    samples = TasteSamples(
        vectors,
        np.array([r for r, _ in liked]),
        np.array([t for _, t in liked]),
        np.array([r for r, _ in passed]),
        np.array([t for _, t in passed]),
    )
    return np.array(pos), np.array(neg), np.array(times), served, samples


def test_the_direction_tells_the_picked_papers_from_those_passed_over() -> None:
    rng = np.random.default_rng(1)
    hidden = unit(rng, 1)[0]
    *_, samples = channel(rng, hidden)
    direction = fit_taste(samples.before(40 * WEEK))
    assert direction is not None
    assert float(direction @ hidden) / float(np.linalg.norm(direction)) > 0.5, "it points where the picks lean"
    later = samples.liked_at >= 40 * WEEK
    picked, others = samples.vectors[samples.liked_rows[later]], samples.vectors[:500]
    scores = np.concatenate([picked @ direction, others @ direction])
    assert float((scores[: len(picked)][:, None] > scores[len(picked) :][None, :]).mean()) > 0.85
    assert fit_taste(samples.before((MIN_TASTE_MOMENTS - 1) * WEEK)) is None, "too few picks: no direction"


def test_roc_auc_of_moments_laid_end_to_end() -> None:
    # a picked paper above both others; one above one of three, below one, tied with one
    scores = np.array([3.0, 1.0, 2.0, 1.0, 1.0, 2.0, 0.5])
    assert np.allclose(roc_auc(scores, np.array([0, 3])), [1.0, 0.5])


def test_a_channel_that_picks_by_what_the_papers_are_about_gets_the_paper_model_and_status_says_so() -> None:
    rng = np.random.default_rng(2)
    pos, neg, times, served, samples = channel(rng, unit(rng, 1)[0])
    model = fit_guarded(pos, neg, times, default_model(), now=NOW, served=served, samples=samples)
    assert model.decision.startswith("the paper model:"), model.decision
    assert model.weights[TASTE] > 0 and np.count_nonzero(model.weights) == 1
    assert model.taste is not None and model.taste.shape == (D,)
    assert re.match(r"learnt from \d+ papers the channel picked against \d+ it passed over", model.taste_note)
    auc = float(model.taste_note.split("ROC-AUC ")[1].split()[0])
    assert auc > 0.9, model.taste_note
    said = describe(model)
    assert "Its paper model: learnt from" in said and "the ten nearest papers" in said
    assert "Its paper model" not in describe(model, evidence=False), "App Home leaves the figures to status"


def test_a_paper_model_without_a_clear_lead_is_not_served_but_still_reported() -> None:
    """Picks at random: the paper model may edge ahead by chance on the held-out shares, but not clearly."""
    rng = np.random.default_rng(3)
    pos, neg, times, served, samples = channel(rng, None)
    model = fit_guarded(pos, neg, times, default_model(), now=NOW, served=served, samples=samples)
    assert not model.decision.startswith("the paper model"), model.decision
    assert "the paper model" not in model.decision or "within the noise" in model.decision
    assert model.weights[TASTE] == 0
    assert model.taste is not None and "ROC-AUC" in model.taste_note


def test_the_paper_model_is_stored_with_the_fit_and_an_older_fit_has_none() -> None:
    rng = np.random.default_rng(4)
    pos, neg, times, served, samples = channel(rng, unit(rng, 1)[0])
    model = fit_guarded(pos, neg, times, default_model(), now=NOW, served=served, samples=samples)
    back = RankerModel.from_json(model.to_json(), model.shares, model.pairs, model.fitted_at, 0.05)
    assert back.taste is not None and np.allclose(back.taste, model.taste, atol=1e-6)
    assert back.taste_note == model.taste_note and back.decision == model.decision
    assert np.allclose(back.weights, model.weights)
    older = {k: v for k, v in model.to_json().items() if k not in ("taste", "taste_note")}
    older["features"] = [f for f in FEATURES if f != "taste"]
    older["weights"] = [0.5 if f in ("nearby", "interest") else 0.0 for f in older["features"]]
    old = RankerModel.from_json(older, 10, 100, NOW, 0.05)
    assert old.taste is None and old.weights[TASTE] == 0.0 and old.taste_note == ""
    hostile = {**model.to_json(), "taste": ["1", None, float("nan")], "taste_note": 7}
    assert RankerModel.from_json(hostile, 10, 100, NOW, 0.05).taste is None


def test_the_taste_is_unknown_without_a_direction_or_on_another_model() -> None:
    rng = np.random.default_rng(5)
    cands = CandidateSet(
        unit(rng, 4), np.full(4, np.nan), np.full(4, np.nan), np.zeros(0, int), np.zeros(0, int), -np.ones(4, int)
    )
    state = ChannelState(unit(rng, 2), np.ones(2), np.zeros(2, bool), np.zeros(0), np.zeros(0), np.zeros(0, bool))
    assert np.isnan(features(state, cands, 0.0)[:, TASTE]).all()
    direction = unit(rng, 1)[0].astype(np.float64)
    assert np.allclose(taste_scores(direction, cands.vectors), cands.vectors @ direction)
    assert np.isnan(taste_scores(np.ones(D + 1), cands.vectors)).all(), "a direction of another embedding model"


def test_the_paper_model_waits_while_its_lead_is_within_the_noise() -> None:
    from socialrag.recommender.rank.taste import PAPER_MODEL

    rng = np.random.default_rng(6)
    blend = rng.random(40) * 0.3
    noisy = {"the default blend": blend, PAPER_MODEL: blend + rng.normal(0.02, 0.2, 40)}
    waits = paper_model_clear(PAPER_MODEL, noisy)
    assert "the paper model's lead (+" in waits and "within the noise of 40" in waits
    clear = {"the default blend": blend, PAPER_MODEL: blend + 0.2 + rng.normal(0, 0.02, 40)}
    assert paper_model_clear(PAPER_MODEL, clear) == ""
    assert paper_model_clear("nearby alone", noisy) == ""


def test_a_waiting_paper_model_leaves_the_judge_to_its_usual_rule() -> None:
    """A new fit a hair ahead of the default blend (within the margin) loses to it; a paper model that led
    within the noise must not hand the choice to that fit instead."""
    from socialrag.recommender.rank import guard
    from socialrag.recommender.rank.taste import PAPER_MODEL

    blend, fit_ = default_model(), default_model()
    contestants = [("the default blend", blend), (PAPER_MODEL, blend), ("a new fit", fit_)]
    base = np.full(40, 0.3)
    ranks = {"the default blend": base, "a new fit": base + 0.0009, PAPER_MODEL: base + np.tile([0.4, -0.38], 20)}
    original = guard.served_ranks
    guard.served_ranks = lambda model, served: ranks[next(n for n, m in contestants if m is model)]  # type: ignore[assignment]
    try:
        contestants[1] = (PAPER_MODEL, replace_weights(blend, 1.0))
        contestants[2] = ("a new fit", replace_weights(blend, 2.0))
        chosen, _ = guard._judge(contestants, [])
        assert chosen == PAPER_MODEL
        assert paper_model_clear(chosen, ranks)
        again, _ = guard._judge([c for c in contestants if c[0] != PAPER_MODEL], [])
        assert again == "the default blend"
    finally:
        guard.served_ranks = original  # type: ignore[assignment]


def replace_weights(model: RankerModel, scale: float) -> RankerModel:
    from dataclasses import replace

    return replace(model, weights=model.weights * scale)


def test_serving_reads_a_paper_model_only_where_its_direction_can_be_read() -> None:
    rng = np.random.default_rng(7)
    pos, neg, times, served, samples = channel(rng, unit(rng, 1)[0])
    model = fit_guarded(pos, neg, times, default_model(), now=NOW, served=served, samples=samples)
    assert model.decision.startswith("the paper model") and abs(float(np.linalg.norm(model.taste)) - 1) < 1e-9
    from dataclasses import replace

    stored = replace(model, taste_model="all-MiniLM-L6-v2")
    assert stored.for_serving("all-MiniLM-L6-v2", D) is stored
    for unreadable in (stored.for_serving("another-model", D), stored.for_serving("all-MiniLM-L6-v2", D + 1)):
        assert unreadable.weights[TASTE] == 0 and np.array_equal(unreadable.weights, default_model().weights)
        assert unreadable.decision == model.decision, "status still says what the refit decided"
    lost = replace(stored, taste=None).for_serving("all-MiniLM-L6-v2", D)
    assert lost.weights[TASTE] == 0
    blend = replace(default_model(), taste=stored.taste, taste_model="another-model")
    assert blend.for_serving("all-MiniLM-L6-v2", D).taste is None, "a direction it cannot read is not read"


def test_a_stored_direction_is_finite_numbers_at_unit_length() -> None:
    base = default_model().to_json()
    read = lambda taste: RankerModel.from_json({**base, "taste": taste}, 10, 100, NOW, 0.05).taste  # noqa: E731
    assert read([True, 1.0]) is None and read([1.0, float("inf")]) is None and read("0.5") is None
    assert read([]) is None and read([0.0, 0.0]) is None
    assert np.allclose(read([3e300, 4e300]), [0.6, 0.8]), "a huge stored vector is read at unit length"
    nan_model = replace_taste(default_model(), np.array([np.nan, 1.0]))
    assert nan_model.to_json()["taste"] is None, "a direction that is not finite is never written"


def replace_taste(model: RankerModel, taste: np.ndarray) -> RankerModel:
    from dataclasses import replace

    return replace(model, taste=taste)
