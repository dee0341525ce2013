"""The paper model beside the calibrated ranking, on the real histories: the measurements of the changes that were
tried and dropped (``docs/benchmarks.md``, the paper model beside the calibrated ranking), and of the one served:
the paper model orders the default blend's shortlist (``rank/shortlist.py``), against the same ranking without it.

``python -m bench.real.taste_beside [--only NAME] [--ridge R ...]`` replays each history as
``bench.real.replay_real`` does (refitted at every step, 365-day pools), through the same replay (its ``extra``
rankings: the same steps, pools, window and draws for ties), and at each step also ranks by the
calibrated score plus w times the taste relearnt from the picks before the step (both in units of their spread
among the step's candidates), by the two orders fused by reciprocal rank (k = 60), and by the calibrated score plus
half a kernel on the nearest papers: the mean cosine to the ten closest picks less that to the ten closest papers
passed over, and by the calibrated score plus half the mean cosine to the ten closest papers the channel had (the
ten nearest baseline). Each of those is built on the calibrated score without the shortlist, as they were
measured. Each figure is also given for the steps where the judge served the default blend (it had too little to
judge on, or judged the blend best). It prints R@10, R@50 and MRR per ranking, and the calibrated ranking less the
same without the shortlist, step by step, with its standard error.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from bench.real import replay_real as rr
from socialrag.recommender.rank.evaluate import CALIBRATED, METHODS, EvalReport, Step, replay
from socialrag.recommender.rank.history import ChannelHistory
from socialrag.recommender.rank.shortlist import FUSION_K, below_window, places
from socialrag.recommender.rank.taste import fit_taste

WEIGHTS = (0.25, 0.5, 1.0)
KNN = 10
WITHOUT = "calibrated, without the shortlist"  # as served before the paper model ordered the blend's first papers


def nearest_mean(candidates: np.ndarray, papers: np.ndarray) -> np.ndarray:
    """Each candidate's mean cosine to its ``KNN`` closest ``papers`` (zero for each when there are none)."""
    if not len(papers):
        return np.zeros(len(candidates))
    return np.asarray(np.sort(candidates @ papers.T, axis=1)[:, -KNN:].mean(axis=1))


def spread_units(s: np.ndarray) -> np.ndarray:
    sd = float(s.std())
    return (s - s.mean()) / (sd if sd > 0 else 1.0)


def rank_positions(s: np.ndarray) -> np.ndarray:
    """Each candidate's place (0 = best) by ``s``, ties in row order."""
    return places(s, np.arange(len(s)))


def beside(
    history: ChannelHistory, ridges: list[float], blend_kept: list[bool]
) -> Callable[[Step], dict[str, np.ndarray]]:
    """The rankings under study at a step, from the calibrated scores and what was picked and passed over
    before it. Appends to ``blend_kept`` whether the judge served the default blend at the step."""
    vectors = history.universe.vectors

    def rankings(step: Step) -> dict[str, np.ndarray]:
        blend_kept.append(step.model.is_default_blend)
        alone = step.model.score(step.x)  # the ranking in use without the paper model's order of the shortlist
        calibrated = below_window(alone, step.outside)
        scores: dict[str, np.ndarray] = {WITHOUT: calibrated}
        samples = step.pairs.samples(step.t)
        candidates = vectors[step.rows]
        _, known = history.state_at(step.t)  # the mean cosine to the ten closest papers the channel had
        nearest = nearest_mean(candidates, vectors[history.rows[known]])
        scores[f"+ 0.5 x {KNN} nearest had"] = spread_units(calibrated) + 0.5 * spread_units(nearest)
        for ridge in ridges:
            direction = fit_taste(samples, ridge) if samples is not None else None
            taste = candidates @ direction if direction is not None else np.zeros(len(step.rows))
            for w in WEIGHTS:
                scores[f"+ {w} x taste (ridge {ridge})"] = spread_units(calibrated) + w * spread_units(taste)
            fused = 1 / (FUSION_K + rank_positions(calibrated)) + 1 / (FUSION_K + rank_positions(taste))
            scores[f"fused by rank (ridge {ridge})"] = fused
        kernel = calibrated  # a kernel on the nearest papers picked and passed over, once there are enough
        if samples is not None and samples.picks >= KNN:
            near = nearest_mean(candidates, vectors[np.unique(samples.liked_rows)])
            far = nearest_mean(candidates, vectors[np.unique(samples.passed_rows)])
            kernel = spread_units(calibrated) + 0.5 * spread_units(near - far)
        scores[f"+ 0.5 x {KNN} nearest picked less passed"] = kernel
        return scores

    return rankings


def replay_beside(history: ChannelHistory, ridges: list[float], warmup: int = 8) -> tuple[EvalReport, np.ndarray]:
    """``bench.real.replay_real``'s replay, with the rankings under study beside the project's, and at each step
    whether the judge served the default blend."""
    zeros = np.zeros(len(history.universe.vectors), dtype=np.int64)
    kept: list[bool] = []
    extra = beside(history, ridges, kept)
    report = replay(history, warmup=warmup, window_days=365.0, refit_every=1, topics=zeros, extra=extra)
    return report, np.array(kept, dtype=bool)


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
        report, kept = replay_beside(history, args.ridge)
        print(f"\n## {name}: {report.steps} steps, the default blend served at {int(kept.sum())}")
        print(f"{'ranking':<40}{'R@10':>7}{'R@50':>7}{'MRR':>7}   (the same, where the blend was served)")
        for method in [CALIBRATED, *(m for m in report.results if m not in METHODS)]:
            r = report.results[method]
            figures = [np.array(v) for v in (r.recall10, r.recall50, r.reciprocal)]
            line = f"{method:<40}" + "".join(f"{v.mean():7.3f}" for v in figures)
            if kept.any():
                line += "   " + "".join(f"{v[kept].mean():7.3f}" for v in figures)
            print(line)
        for metric, label in (("recall10", "R@10"), ("reciprocal", "MRR")):
            diff, noise = report.paired(CALIBRATED, WITHOUT, metric)
            print(f"calibrated less the same without the shortlist, {label}: {diff:+.4f} (standard error {noise:.4f})")


if __name__ == "__main__":
    main()
