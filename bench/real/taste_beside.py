"""The paper model beside the calibrated ranking, on the real histories: a measurement of a change that was tried
and dropped (``docs/benchmarks.md``, the paper model beside the calibrated ranking).

``python -m bench.real.taste_beside [--only NAME] [--ridge R ...]`` replays each history as
``bench.real.replay_real`` does (refitted at every step, 365-day pools), and at each step also ranks by the
calibrated score plus w times the taste relearnt from the picks before the step (both in units of their spread
among the step's candidates), by the two orders fused by reciprocal rank (k = 60), and by the calibrated score plus
half a kernel on the nearest papers: the mean cosine to the ten closest picks less that to the ten closest papers
passed over. It prints R@10, R@50 and
MRR per ranking.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np

from bench.real import replay_real as rr
from socialrag.config import DEFAULT_POPULARITY_WEIGHT
from socialrag.recommender.rank.calibrate import default_model
from socialrag.recommender.rank.evaluate import _order
from socialrag.recommender.rank.features import features, fill_unknown
from socialrag.recommender.rank.history import DAY, ChannelHistory, pool_rows
from socialrag.recommender.rank.taste import fit_taste
from socialrag.recommender.rank.training import training_set

WEIGHTS = (0.25, 0.5, 1.0)
RRF_K = 60.0
KNN = 10


def nearest_mean(candidates: np.ndarray, papers: np.ndarray) -> np.ndarray:
    """Each candidate's mean cosine to its ``KNN`` closest ``papers``."""
    return np.asarray(np.sort(candidates @ papers.T, axis=1)[:, -KNN:].mean(axis=1))


def spread_units(s: np.ndarray) -> np.ndarray:
    sd = float(s.std())
    return (s - s.mean()) / (sd if sd > 0 else 1.0)


def rank_positions(s: np.ndarray, rng: random.Random) -> np.ndarray:
    order = _order(s, rng)
    out = np.empty(len(order))
    out[order] = np.arange(len(order))
    return out


def replay_beside(history: ChannelHistory, ridges: list[float], warmup: int = 8) -> dict[str, list[list[float]]]:
    u = history.universe
    first = history.member_first
    shared = np.flatnonzero(~np.isnan(first) & (first <= history.first_at))
    times = np.sort(first[shared])
    pairs = training_set(history, judged=None)
    rng = random.Random(13)
    model = default_model(DEFAULT_POPULARITY_WEIGHT)
    span = 6.5 * DAY
    start = warmup
    out: dict[str, list[list[float]]] = {}
    while start < len(times):
        t = float(times[start]) - 1.0
        week = shared[(first[shared] >= t) & (first[shared] < t + span)]
        model = pairs.fit(DEFAULT_POPULARITY_WEIGHT, before=t, now=datetime.fromtimestamp(t, UTC), current=model)
        start = int(np.searchsorted(times, t + span))
        state, known = history.state_at(t)
        truth = history.rows[week]
        truth = truth[~(u.available[truth] >= t)]
        if len(truth) == 0:
            continue
        rows = np.union1d(pool_rows(u, t, 365.0, history.rows[known]), truth)
        x = fill_unknown(features(replace(state, taste=model.taste), u.candidates(rows, t), t))
        calibrated = model.score(x)
        # serving offers nothing older than the channel's window, whatever the ranking
        outside = t - u.available[rows] > (model.window_days or np.inf) * DAY
        calibrated = np.where(outside, calibrated.min() - 1, calibrated)
        scores = {"calibrated": calibrated}
        samples = pairs.samples(t)
        for ridge in ridges:
            direction = fit_taste(samples, ridge) if samples is not None else None
            taste = u.vectors[rows] @ direction if direction is not None else np.zeros(len(rows))
            for w in WEIGHTS:
                scores[f"+ {w} x taste (ridge {ridge})"] = spread_units(calibrated) + w * spread_units(taste)
            fused = 1 / (RRF_K + rank_positions(calibrated, rng)) + 1 / (RRF_K + rank_positions(taste, rng))
            scores[f"fused by rank (ridge {ridge})"] = fused
        if samples is not None and samples.picks >= KNN:  # a kernel on the nearest papers picked and passed over
            near = nearest_mean(u.vectors[rows], u.vectors[np.unique(samples.liked_rows)])
            far = nearest_mean(u.vectors[rows], u.vectors[np.unique(samples.passed_rows)])
            scores[f"+ 0.5 x {KNN} nearest picked less passed"] = spread_units(calibrated) + 0.5 * spread_units(
                near - far
            )
        relevant = np.isin(rows, truth)
        for name, s in scores.items():
            hits = relevant[_order(np.where(outside, s.min() - 1, s), rng)]
            found = np.flatnonzero(hits)
            r = out.setdefault(name, [[], [], []])
            r[0].append(hits[:10].sum() / relevant.sum())
            r[1].append(hits[:50].sum() / relevant.sum())
            r[2].append(1.0 / (found[0] + 1) if len(found) else 0.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="one history's name")
    parser.add_argument("--ridge", type=float, nargs="+", default=[0.01, 0.1])
    args = parser.parse_args()
    rows = rr.load_catalog()
    vectors = rr.load_vectors(rows)
    names = [n for n in sorted(p.stem for p in rr.HISTORIES.glob("*.jsonl")) if args.only in (None, n)]
    for name in names:
        history, _ = rr.history_of(name, rows, vectors)
        results = replay_beside(history, args.ridge)
        print(f"\n## {name}: {len(results.get('calibrated', [[]])[0])} steps")
        print(f"{'ranking':<32}{'R@10':>7}{'R@50':>7}{'MRR':>7}")
        for method, (r10, r50, rr_) in results.items():
            print(f"{method:<32}{np.mean(r10):7.3f}{np.mean(r50):7.3f}{np.mean(rr_):7.3f}")


if __name__ == "__main__":
    main()
