"""A channel's model of the paper itself (the ``taste`` feature): a direction in the embedding space that tells the
papers the channel picked from the papers it passed over, learnt from its own history. Pure (numpy only).

The learner is a class-balanced ridge classifier on the vectors, solved in closed form from the two classes' sums
(a refit learns one in milliseconds). The judge (``rank/guard.py``) weighs it alone, as "the paper model", on the
same held-out shares and pools as every other ranking, with the direction learnt only from what came before
them; it must win there clearly, beyond the noise of those shares. Whichever ranking wins, the served model keeps
a direction learnt from every pick, and a sentence on how it scored, for `status`. Weighed inside the fits as one
more feature (cross-fitted), and as a logistic regression, it did worse on the real histories: ``docs/benchmarks.md``
says what was tried and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from socialrag.recommender.rank.calibrate import RankerModel, unit_direction
from socialrag.recommender.rank.decision import NOISE_ERRORS
from socialrag.recommender.rank.features import FEATURES
from socialrag.recommender.rank.served import ServedMoment, reciprocal_ranks, stacked
from socialrag.recommender.rank.shortlist import SHORTLIST_RIDGE

TASTE_RIDGE = 0.01  # the pull toward no direction, in units of the vectors' (unit) second moment
MIN_TASTE_MOMENTS = 8  # fewer picks than this: no direction (the taste is unknown)
PAPER_MODEL = "the paper model"  # the judge's name for the ``taste`` feature alone
TEN_NEAREST = "nearby alone"  # the ten nearest papers, as the judge names that plain ranking
BLEND = "the default blend"
_TASTE = FEATURES.index("taste")


@dataclass(frozen=True)
class TasteSamples:
    """What a channel's taste learns from (universe rows, and moments).

    Every paper the channel picked (shared by a member, or a PaperPing post it answered), against the papers it
    passed over: those a training pair set against a pick (offered then, not picked, and the posts nobody answered)
    and, for each pick, papers of the same age (published in the year before it) that it did not pick. A paper
    shared before it could be offered (an arXiv preprint later dated by its venue) was still picked: it teaches the
    taste, though no pair has it. Papers of the pick's own age keep the direction on what the papers are about
    rather than on when they came out (which ``recency`` and ``fresh`` measure)."""

    vectors: np.ndarray  # (papers, d), unit rows
    liked_rows: np.ndarray  # (picks,)
    liked_at: np.ndarray  # (picks,)
    passed_rows: np.ndarray  # (passed,) every paper passed over...
    passed_at: np.ndarray  # (passed,) ...at the moment of the pick it was set against

    def before(self, moment: float) -> TasteSamples:
        """The picks and papers passed over before ``moment``."""
        liked, passed = self.liked_at < moment, self.passed_at < moment
        return TasteSamples(
            self.vectors, self.liked_rows[liked], self.liked_at[liked], self.passed_rows[passed], self.passed_at[passed]
        )

    @property
    def picks(self) -> int:
        return len(self.liked_rows)


@dataclass(frozen=True)
class _Sums:
    """One class's count, sum and sum of outer products of its vectors."""

    n: float
    s: np.ndarray
    outer: np.ndarray

    def __sub__(self, other: _Sums) -> _Sums:
        return _Sums(self.n - other.n, self.s - other.s, self.outer - other.outer)


def _sums(vectors: np.ndarray, rows: np.ndarray) -> _Sums:
    d = vectors.shape[1]
    if not len(rows):
        return _Sums(0.0, np.zeros(d), np.zeros((d, d)))
    unique, counts = np.unique(rows, return_counts=True)
    x = vectors[unique].astype(np.float64)
    weighted = x * counts[:, None]
    return _Sums(float(counts.sum()), weighted.sum(axis=0), x.T @ weighted)


def _solve(pos: _Sums, neg: _Sums, ridge: float) -> np.ndarray | None:
    """The direction of the class-balanced ridge classifier (labels +1 and -1, each class weighing one half)."""
    if pos.n <= 0 or neg.n <= 0:
        return None
    mean_p, mean_n = pos.s / pos.n, neg.s / neg.n
    centre = 0.5 * (mean_p + mean_n)
    gram = 0.5 * (pos.outer / pos.n + neg.outer / neg.n) - np.outer(centre, centre)
    gram[np.diag_indices_from(gram)] += ridge
    return np.asarray(np.linalg.solve(gram, 0.5 * (mean_p - mean_n)), dtype=np.float64)


def fit_taste(samples: TasteSamples, ridge: float = TASTE_RIDGE) -> np.ndarray | None:
    """The channel's direction (unit length), from all its picks against all the papers it passed over; None with
    fewer than ``MIN_TASTE_MOMENTS`` picks or no paper passed over."""
    if samples.picks < MIN_TASTE_MOMENTS:
        return None
    direction = _solve(_sums(samples.vectors, samples.liked_rows), _sums(samples.vectors, samples.passed_rows), ridge)
    return unit_direction(direction)  # a ranking by it alone is the same; a taste score is then a cosine


def roc_auc(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """For moments laid end to end (``starts``: the row of each moment's picked paper, which comes first), the
    share of the moment's other papers that the picked one outscores (a tie counts half): each moment's ROC-AUC."""
    ends = np.append(starts[1:], len(scores))
    first = np.repeat(scores[starts], ends - starts)
    below = np.add.reduceat((scores < first).astype(np.float64), starts)
    level = np.add.reduceat((scores == first).astype(np.float64), starts) - 1.0
    others = np.maximum(ends - starts - 1, 1)
    return np.asarray((below + 0.5 * level) / others)


def served_with_taste(moment: ServedMoment, direction: np.ndarray, vectors: np.ndarray) -> ServedMoment:
    """A held-out share with its candidates' taste read by ``direction`` (a moment rebuilt from pairs keeps its)."""
    if moment.rows is None:
        return moment
    x = moment.x.copy()
    x[:, _TASTE] = vectors[moment.rows] @ direction
    return replace(moment, x=x)


@dataclass(frozen=True)
class LearntTaste:
    """A refit's held-out shares with the taste the judge may weigh (``learn_taste``)."""

    served: list[ServedMoment]
    direction: np.ndarray | None = None  # learnt on the pairs before the held-out shares; None: no taste

    def final(self, samples: TasteSamples | None, blend: np.ndarray) -> tuple[np.ndarray | None, str]:
        """What the served model keeps of the taste, whichever ranking won: a direction learnt from every pick, and
        a sentence on what it learnt from and how it scored on the held-out shares against the ten nearest papers
        and the default blend (``blend``: its weights), by ROC-AUC and MRR; (None, "") without one."""
        if self.direction is None or samples is None or not self.served:
            return None, ""
        direction = fit_taste(samples)
        if direction is None:
            return None, ""
        x, starts = stacked(self.served)
        scores = {PAPER_MODEL: x[:, _TASTE], TEN_NEAREST: x[:, FEATURES.index("nearby")], BLEND: x @ blend}
        auc = {n: float(roc_auc(v, starts).mean()) for n, v in scores.items()}
        mrr = {n: float(reciprocal_ranks(v, starts).mean()) for n, v in scores.items()}
        note = (
            f"{learnt_from(samples)}; on the latest "
            f"{len(self.served)} held-out shares it had ROC-AUC {auc[PAPER_MODEL]:.2f} (the ten nearest papers "
            f"{auc[TEN_NEAREST]:.2f}, the default blend {auc[BLEND]:.2f}) and MRR {mrr[PAPER_MODEL]:.2f} "
            f"({mrr[TEN_NEAREST]:.2f}, {mrr[BLEND]:.2f})"
        )
        return direction, note


def learn_taste(samples: TasteSamples | None, split: float, served: list[ServedMoment]) -> LearntTaste:
    """The taste learnt from the picks and papers passed over before ``split`` (the first held-out share), and the
    held-out shares' candidates read by it. Without samples or with too few picks, the shares as they were (the
    taste unknown)."""
    direction = fit_taste(samples.before(split)) if samples is not None else None
    if samples is None or direction is None:
        return LearntTaste(served)
    return LearntTaste([served_with_taste(m, direction, samples.vectors) for m in served], direction)


def paper_model_clear(chosen: str, ranks: dict[str, np.ndarray]) -> str:
    """ "" when the judge's choice stands, else the sentence that says the paper model waits: it won without a clear
    lead. It has a weight for each dimension of the vectors, learnt from a few hundred picks at most, so it must
    beat the best other contestant by ``NOISE_ERRORS`` standard errors of their paired difference on the held-out
    shares (the judge then chooses among the others, by its usual rule). Taken on any lead, it lost on the real
    histories (``docs/benchmarks.md``)."""
    if chosen != PAPER_MODEL:
        return ""
    best = max((n for n in ranks if n != PAPER_MODEL), key=lambda n: float(ranks[n].mean()))
    diff = ranks[PAPER_MODEL] - ranks[best]
    if len(diff) >= 2 and float(diff.mean()) > NOISE_ERRORS * float(diff.std(ddof=1) / np.sqrt(len(diff))):
        return ""
    return (
        f"; the paper model's lead ({float(diff.mean()):+.3f}) is within the noise of {len(diff)} shares, so it waits"
    )


def with_shortlist(model: RankerModel, samples: TasteSamples | None) -> RankerModel:
    """The default blend ``model`` as served: with the direction that helps order its first papers
    (``rank/shortlist.py``), learnt from every pick before the refit, and what it learnt from (after the held-out
    figures, when the judge had them; ``describe`` says what it does). As it was with too few picks, and for a
    channel that reads what its field reads (``widely_read``): its picks follow how widely a paper is read for its
    age, which the paper model cannot see, and ordering its shortlist by what the papers are about cost the
    simulated curator half its MRR in those weeks (``docs/benchmarks.md``)."""
    direction = fit_taste(samples, SHORTLIST_RIDGE) if samples is not None and not model.widely_read else None
    if direction is None or samples is None:
        return model
    return replace(model, taste=direction, taste_note=model.taste_note or learnt_from(samples), shortlist=True)


def learnt_from(samples: TasteSamples) -> str:
    """What a direction was learnt from, in a sentence for `status`."""
    picks, passed = len(np.unique(samples.liked_rows)), len(np.unique(samples.passed_rows))
    return f"learnt from {picks} papers the channel picked against {passed} it passed over"
