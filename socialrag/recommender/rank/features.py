"""What the calibrated ranking sees of a candidate: a few features computed from what the channel had *before*
the moment ranked (``ChannelState``) and from the candidate itself (``CandidateSet``). Pure (numpy only).

=============  ============================================================================================
similarity     engagement-weighted, cubed mean cosine to the channel's papers (today's score; the focus
               counts as a paper the group engaged with strongly, as before)
nearest        cosine to the single closest paper the channel received well (the strength of h5)
disliked       cosine to the closest paper the channel received badly, or a PaperPing post it ignored
popularity     log popularity as known at that moment, 1 from 1,000 citations or upvotes up
recency        0.5 ** (days since publication / 180)
fresh          0.5 ** (days since publication / 21): with recency, lets a channel that only takes this
               month's papers say so
authors        affinity to authors the channel engaged with (the strength of h2)
venue          affinity to venues the channel engaged with (the strength of h4)
member_author  a member of the channel is an author (h1)
nearby         mean cosine to the ``NEARBY_K`` closest papers the channel received well: a candidate in the
               middle of one of the group's interests, however small a part of the whole that interest is
interest       cosine to the member whose own shares it is closest to (each member's centroid, from members with
               ``MIN_INTEREST_SHARES`` shares), or to a focus or boosted topic (counted twice): a group is a union
               of its members' interests, not their average. Unknown while only one member has an interest: that
               one is the channel's centroid, which ``similarity`` already measures
taste          the channel's model of the paper itself: the candidate's vector read by a direction learnt from the
               papers it picked against those it passed over (``rank/taste.py``). Unknown until a refit learnt one
standing       popularity for its age: the candidate's ``popularity`` less the mean of the ``STANDING_PEERS``
               candidates of about its age on either side (of those with a reading). A count grows with age, so
               among a year's papers ``popularity`` mostly says which are old; this says which are read more than
               their peers. Unknown without a popularity reading, a date, or a peer of known popularity
=============  ============================================================================================

Unknown is not zero. A paper with no popularity reading by then, no known date, no venue or no authors has
that feature *unknown* (NaN), not its lowest value: a pair of papers teaches nothing about a feature unknown
for either of them (``pair_differences``), and a candidate is ranked with an unknown feature at the average
of the candidates that have it (``fill_unknown``), so it is neither helped nor sunk by what nobody knows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

FEATURES: tuple[str, ...] = (
    "similarity",
    "nearest",
    "disliked",
    "popularity",
    "recency",
    "fresh",
    "authors",
    "venue",
    "member_author",
    "nearby",
    "interest",
    "taste",
    "standing",
)
NEARBY_K = 10
MIN_INTEREST_SHARES = 2  # a member with fewer own shares has no interest of their own yet
RECENCY_HALF_LIFE_DAYS = 180.0
FRESH_HALF_LIFE_DAYS = 21.0
POPULARITY_REFERENCE = 1000.0  # a popularity (citations, upvotes) of this or more counts as 1


@dataclass(frozen=True)
class ChannelState:
    """What a channel had at one moment: its papers' vectors and engagement weights, and the affinities.
    Authors and venues are small integer indices (see ``socialrag.recommender.rank.history.Universe``)."""

    vectors: np.ndarray  # (m, d), the channel's papers (and the focus, if any)
    weights: np.ndarray  # (m,), signed engagement weight
    disliked: np.ndarray  # (m,) bool: received badly, or a PaperPing post nobody answered
    author_weight: np.ndarray  # (authors,) positive engagement of the papers each author is on
    venue_weight: np.ndarray  # (venues,)
    member_authors: np.ndarray  # (authors,) bool: a member of the channel
    # (k, d) unit vectors: the centroid of each member's own shares (members with a few shares), and a focus or
    # boosted topic members declared; with how much each counts (a declared one twice as much as a member's)
    interests: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    interest_weights: np.ndarray | None = None
    taste: np.ndarray | None = None  # (d,) the channel's learnt direction (``rank/taste.py``); None: none yet


@dataclass(frozen=True)
class CandidateSet:
    vectors: np.ndarray  # (n, d)
    published: np.ndarray  # (n,) epoch seconds, NaN when unknown
    popularity: np.ndarray  # (n,) as known at the moment ranked; NaN when unknown
    author_flat: np.ndarray  # author index of each (candidate, author) entry
    author_row: np.ndarray  # the candidate of each entry
    venues: np.ndarray  # (n,) venue index or -1


def features(state: ChannelState, cands: CandidateSet, at: float, sims: np.ndarray | None = None) -> np.ndarray:
    """(n, len(FEATURES)) feature matrix, NaN where a feature is unknown for a candidate (no popularity
    reading by ``at``, no date, no venue, no authors); ``sims`` (n, m), the candidates' cosines to the
    channel's papers, may be passed when already known."""
    n = len(cands.popularity)
    x = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return x
    if sims is None:
        sims = cands.vectors @ state.vectors.T if len(state.weights) else np.zeros((n, 0))
    sims = np.maximum(sims, 0.0)
    w = state.weights
    if len(w) and np.abs(w).sum() > 0:
        cubed = sims * sims
        cubed *= sims
        x[:, 0] = cubed @ w / (np.abs(w).sum() + 1e-9)
        liked = w > 0
        if liked.any():
            close = sims[:, liked]  # a copy: ordered in place below, the closest ``k`` last
            k = min(NEARBY_K, close.shape[1])
            close.partition(close.shape[1] - k, axis=1)
            x[:, 1] = close[:, -k:].max(axis=1)
            x[:, FEATURES.index("nearby")] = close[:, -k:].mean(axis=1)
    if state.disliked.any():
        x[:, 2] = sims[:, state.disliked].max(axis=1)
    with np.errstate(invalid="ignore"):
        x[:, 3] = np.minimum(1.0, np.log1p(np.maximum(cands.popularity, 0.0)) / math.log1p(POPULARITY_REFERENCE))
    x[np.isnan(cands.popularity), 3] = np.nan
    age = np.maximum(0.0, (at - cands.published) / 86400.0)  # NaN (unknown) stays NaN
    x[:, 4] = 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)
    x[:, 5] = 0.5 ** (age / FRESH_HALF_LIFE_DAYS)
    flat, row = cands.author_flat, cands.author_row
    if len(flat) and len(state.author_weight):
        x[:, 6] = 1.0 - np.exp(-np.bincount(row, weights=state.author_weight[flat], minlength=n))
        x[:, 8] = np.bincount(row, weights=state.member_authors[flat].astype(np.float64), minlength=n) > 0
    no_authors = np.bincount(row, minlength=n) == 0 if len(flat) else np.ones(n, dtype=bool)
    x[no_authors, 6] = np.nan
    x[no_authors, 8] = np.nan
    known_venue = cands.venues >= 0
    if known_venue.any() and len(state.venue_weight):
        x[known_venue, 7] = 1.0 - np.exp(-state.venue_weight[cands.venues[known_venue]])
    x[~known_venue, 7] = np.nan
    interest = FEATURES.index("interest")
    scale = state.interest_weights if state.interest_weights is not None else np.ones(len(state.interests))
    if len(state.interests) >= 2 or (scale > 1).any():
        x[:, interest] = (np.maximum(cands.vectors @ state.interests.T, 0.0) * scale).max(axis=1)
    else:  # no interest, or a single member's: the channel's centroid, which says nothing ``similarity`` does not
        x[:, interest] = np.nan
    x[:, FEATURES.index("taste")] = taste_scores(state.taste, cands.vectors)
    x[:, STANDING] = standing(x, np.zeros(n, dtype=np.int64))
    return x


def taste_scores(taste: np.ndarray | None, vectors: np.ndarray) -> np.ndarray:
    """Each vector read by the channel's learnt direction; unknown (NaN) without one, or with one learnt on
    another embedding model (its length differs)."""
    if taste is None or len(vectors) == 0 or vectors.shape[1] != len(taste):
        return np.full(len(vectors), np.nan)
    return np.asarray(vectors @ taste, dtype=np.float64)


AGE_PEERS = 20  # an unknown popularity is read as that of this many candidates of about its age on each side
STANDING_PEERS = 10  # a popularity is measured against this many candidates of about its age on each side
POPULARITY, RECENCY, STANDING = (FEATURES.index(f) for f in ("popularity", "recency", "standing"))


def fill_unknown(x: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """The features to rank by: each unknown value replaced by the mean of the candidates that have the
    feature (0 when none has it, which then ranks nobody differently). An unknown popularity of a paper of
    known age is the mean of the ``AGE_PEERS`` known ones on either side of its age: a count grows with age,
    so this week's paper with no reading yet is read like this week's papers, not like last year's.

    ``starts``: ``x`` holds several moments' candidates end to end, each moment's from its row ``starts[i]``
    on (strictly increasing, from 0); each is filled from its own candidates, as if filled alone. None: one
    moment."""
    out = np.array(x, dtype=np.float64)
    missing = np.isnan(out)
    if not missing.any():
        return out
    starts = np.zeros(1, dtype=np.int64) if starts is None else np.asarray(starts, dtype=np.int64)
    moment = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(out))))
    _popularity_by_age(out, moment)
    missing = np.isnan(out)
    known = np.where(missing, 0.0, out)
    if len(starts) == 1:  # one moment: summed as it always was, so serving's scores stay bit for bit the same
        counts, sums = (~missing).sum(axis=0)[None, :], known.sum(axis=0)[None, :]
    else:
        counts = np.add.reduceat((~missing).astype(np.int64), starts, axis=0)
        sums = np.add.reduceat(known, starts, axis=0)
    means = np.divide(sums, counts, out=np.zeros(sums.shape), where=counts > 0)
    rows, cols = np.nonzero(missing)
    out[rows, cols] = means[moment[rows], cols]
    return out


def standing(x: np.ndarray, moment: np.ndarray) -> np.ndarray:
    """The ``standing`` column of features ``x`` (popularity and recency filled in, unknowns NaN) whose rows are
    of the moments ``moment``: each known popularity less the mean of the ``STANDING_PEERS`` known ones of its
    moment on either side of its age, itself left out. NaN where the popularity, the age or every peer is
    unknown."""
    pop = x[:, POPULARITY]
    known = ~np.isnan(pop) & ~np.isnan(x[:, RECENCY])
    total, count = _age_peer_sums(x, moment, known, STANDING_PEERS)
    count -= 1.0  # itself, counted among its peers
    out = np.full(len(x), np.nan)
    some = known & (count > 0)
    out[some] = pop[some] - (total[some] - pop[some]) / count[some]
    return out


def _popularity_by_age(x: np.ndarray, moment: np.ndarray) -> None:
    """Each unknown popularity of known age, as the mean of the ``AGE_PEERS`` known ones of its moment on either
    side of its age (in place); a moment with no known popularity is left to the mean."""
    wanted = np.isnan(x[:, POPULARITY]) & ~np.isnan(x[:, RECENCY])
    total, count = _age_peer_sums(x, moment, wanted, AGE_PEERS)
    some = wanted & (count > 0)
    x[some, POPULARITY] = total[some] / count[some]


def _age_peer_sums(x: np.ndarray, moment: np.ndarray, asked: np.ndarray, peers: int) -> tuple[np.ndarray, np.ndarray]:
    """For each row in ``asked`` of known age, the sum and number of the known popularities of its moment among the
    ``peers`` on either side of its age (a row of known popularity among them, itself included); zeros elsewhere."""
    pop, rec = x[:, POPULARITY], x[:, RECENCY]
    known = ~np.isnan(pop) & ~np.isnan(rec)
    asked = asked & ~np.isnan(rec)
    total, count = np.zeros(len(x)), np.zeros(len(x))
    if not known.any() or not asked.any():
        return total, count
    # the known and the asked of every moment in one order, by moment and age (an unknown paper before known ones
    # of the same age): where a paper falls among its moment's known ones is the count of known before it
    rows = np.flatnonzero(known | asked)
    is_known = known[rows]
    order = np.lexsort((is_known, rec[rows], moment[rows]))
    rows, is_known = rows[order], is_known[order]
    before = np.cumsum(is_known) - is_known
    ages_of = moment[rows[is_known]]
    sums = np.concatenate([[0.0], np.cumsum(pop[rows[is_known]])])
    wanted = asked[rows]
    at, mine = before[wanted], is_known[wanted].astype(np.int64)
    first = np.searchsorted(ages_of, moment[rows[wanted]], side="left")  # the moment's known ones, in that order
    last = np.searchsorted(ages_of, moment[rows[wanted]], side="right")
    lo, hi = np.maximum(first, at - peers), np.minimum(last, at + peers + mine)
    hi = np.maximum(hi, lo)
    total[rows[wanted]] = sums[hi] - sums[lo]
    count[rows[wanted]] = hi - lo
    return total, count


def pair_differences(positives: np.ndarray, negatives: np.ndarray) -> np.ndarray:
    """``positives - negatives`` per pair and feature, 0 where the feature is unknown for either paper: such a
    pair is no evidence about that feature."""
    return np.nan_to_num(np.asarray(positives, dtype=np.float64) - np.asarray(negatives, dtype=np.float64), nan=0.0)
