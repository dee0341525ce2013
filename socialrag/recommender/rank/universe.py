"""The papers a ranking has in play (``Universe``: the channel's and the candidates'), as arrays: vectors,
publication times, popularity readings, authors and venues. A refit reads them as arrays straight from storage
(``PaperArrays``); a replay or a ranking built from ``PaperInfo`` rows converts those first, so both go through
``universe_from_arrays``. Pure (numpy only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cached_property

import numpy as np

from socialrag.recommender.rank.features import CandidateSet
from socialrag.recommender.rank.window import DAY
from socialrag.rows import PaperArrays, PaperInfo, Readings


@dataclass(frozen=True)
class Universe:
    ids: np.ndarray  # (n,) paper ids
    vectors: np.ndarray  # (n, d)
    published: np.ndarray  # (n,) epoch seconds, NaN when unknown
    reading_start: np.ndarray  # (n+1,) offsets into reading_t / reading_v, per paper
    reading_t: np.ndarray  # popularity readings, by paper, in time order
    reading_v: np.ndarray
    author_flat: np.ndarray  # author index of each (paper, author) entry
    author_start: np.ndarray  # (n+1,) offsets into author_flat
    venues: np.ndarray  # (n,) venue index or -1
    author_ids: np.ndarray  # author index -> author id
    n_venues: int
    # the first and the last day a paper may have come out, as far as its date is known (a day, a month, a
    # year; NaN when unknown); ``published`` is the middle of that stretch
    earliest: np.ndarray
    available: np.ndarray

    @property
    def n_authors(self) -> int:
        return len(self.author_ids)

    @property
    def index(self) -> dict[int, int]:
        return {int(pid): i for i, pid in enumerate(self.ids)}

    @cached_property
    def _reading_keys(self) -> np.ndarray:
        """Each popularity reading as one number that sorts by paper, then time: the readings of many papers
        at one moment are then found in one ``searchsorted``."""
        owner = np.repeat(np.arange(len(self.ids), dtype=np.float64), np.diff(self.reading_start))
        return owner * _ROW_SPAN + np.clip(self.reading_t, -_TIME_SPAN, _TIME_SPAN)

    def popularity_at(self, rows: np.ndarray, t: float | np.ndarray, known_by: float | None = None) -> np.ndarray:
        """Each row's last popularity reading at or before ``t`` (one moment, or one per row); NaN when none
        (unknown, not zero), unless ``known_by`` is given: then a paper first read after ``t`` but by ``known_by``
        gets an estimate of its count at ``t`` (``estimate_back``). ``estimated_at`` says which are estimates."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.full(len(rows), np.nan)
        if not len(rows) or not len(self.reading_t):
            return out
        t = np.broadcast_to(np.asarray(t, dtype=np.float64), rows.shape)
        lo, hi = self.reading_start[rows], self.reading_start[rows + 1]
        at = rows.astype(np.float64) * _ROW_SPAN + np.clip(t, -_TIME_SPAN, _TIME_SPAN)
        found = np.clip(np.searchsorted(self._reading_keys, at, side="right"), lo, hi)
        seen = found > lo
        out[seen] = self.reading_v[found[seen] - 1]
        if known_by is not None:
            first = np.minimum(lo, len(self.reading_t) - 1)
            later = ~seen & (hi > lo) & (self.reading_t[first] <= known_by)
            k = first[later]
            out[later] = estimates_back(self.reading_v[k], self.reading_t[k], t[later], self.published[rows[later]])
        return out

    def estimated_at(self, rows: np.ndarray, t: float | np.ndarray, known_by: float) -> np.ndarray:
        """Which rows' popularity at ``t`` (one moment, or one per row) is an estimate from a later reading (known
        by ``known_by``)."""
        return np.isnan(self.popularity_at(rows, t)) & ~np.isnan(self.popularity_at(rows, t, known_by))

    def authors_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(author index, position in ``rows``) of every author entry of these papers."""
        rows = np.asarray(rows, dtype=np.int64)
        owner, at = spans(self.author_start[rows], np.diff(self.author_start)[rows])
        return self.author_flat[at].astype(np.int64), owner

    def candidates(self, rows: np.ndarray, t: float, known_by: float | None = None) -> CandidateSet:
        flat, owner = self.authors_of(rows)
        popularity = self.popularity_at(rows, t, known_by)
        return CandidateSet(self.vectors[rows], self.published[rows], popularity, flat, owner, self.venues[rows])


def spans(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranges of an array (range ``i`` starts at ``starts[i]`` and holds ``counts[i]`` elements), laid end to end:
    for each element, the range it is in and its place in the array."""
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    before = np.cumsum(counts) - counts  # elements of the ranges before each
    return owner, np.asarray(starts, dtype=np.int64)[owner] + np.arange(len(owner), dtype=np.int64) - before[owner]


# ``_reading_keys``: a paper's readings 1e10 s (317 years) after the last paper's; moments clipped to 1843-2096
_ROW_SPAN, _TIME_SPAN = 1e10, 4e9
GROWTH_DAYS = 365.0  # the age at which a paper has half the count it will have a long time after


def estimate_back(count: float, read_at: float, t: float, published: float) -> float:
    """``estimates_back`` of one paper."""
    return float(estimates_back(np.array([count]), np.array([read_at]), t, np.array([published]))[0])


def estimates_back(count: np.ndarray, read_at: np.ndarray, t: float | np.ndarray, published: np.ndarray) -> np.ndarray:
    """Papers' counts at ``t`` from ones read later: counts grow with age ``a`` as ``a / (a + GROWTH_DAYS)``
    (fast at first, then levelling off), so the count then is the later one times the ratio of the two. NaN
    when a paper's date is unknown; 0 before it came out; the count itself when it was read before it came out."""
    then = np.maximum(0.0, (t - published) / DAY)
    later = np.maximum(0.0, (read_at - published) / DAY)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = count * (then / (then + GROWTH_DAYS)) / (later / (later + GROWTH_DAYS))
    out = np.where(later <= 0.0, count, scaled).astype(np.float64)
    out[np.isnan(published)] = np.nan
    return out


def build_universe(
    infos: Mapping[int, PaperInfo],
    vectors: Mapping[int, np.ndarray],
    readings: Mapping[int, Sequence[tuple[float, float]]] | Readings | None = None,
) -> Universe:
    """Papers with a vector, from their ``PaperInfo``; ``readings`` (epoch seconds, value; or ``Readings``)
    default to each info's popularity, known from always (right for a ranking at the moment the infos were
    loaded)."""
    if readings is None:
        readings = {pid: [(-np.inf, float(i.popularity))] for pid, i in infos.items() if i.popularity is not None}
    if not isinstance(readings, Readings):
        own = [(pid, t, v) for pid, values in readings.items() for t, v in values]
        readings = Readings(
            np.array([r[0] for r in own], dtype=np.int64),
            np.array([r[1] for r in own], dtype=np.float64),
            np.array([r[2] for r in own], dtype=np.float64),
        )
    return universe_from_arrays(paper_arrays(infos), vectors, readings)


def paper_arrays(infos: Mapping[int, PaperInfo]) -> PaperArrays:
    """``PaperInfo`` rows as the arrays storage hands a refit."""
    precision = {"month": 1, "year": 2}
    values = list(infos.values())
    dates = [i.publication_date for i in values]
    return PaperArrays(
        np.array([i.paper_id for i in values], dtype=np.int64),
        np.array([-1 if i.venue_id is None else i.venue_id for i in values], dtype=np.int64),
        np.array([i.year or 0 for i in values], dtype=np.int64),
        np.array([_epoch(d) for d in dates], dtype=np.float64),
        np.array([precision.get(i.date_precision or "", 0) for i in values], dtype=np.int64),
        np.array([i.paper_id for i in values for _ in i.authors], dtype=np.int64),
        np.array([a.author_id for i in values for a in i.authors], dtype=np.int64),
    )


def universe_from_arrays(papers: PaperArrays, vectors: Mapping[int, np.ndarray], readings: Readings) -> Universe:
    """The papers with a vector, in ``papers``' order, with their readings, authors (in order) and venues."""
    has = np.array([int(p) in vectors for p in papers.paper_ids.tolist()], dtype=bool)
    keep = np.flatnonzero(has)
    ids = papers.paper_ids[keep]
    dim = next(iter(vectors.values())).shape[0] if vectors else 0
    vecs = np.stack([vectors[p] for p in ids.tolist()]) if len(ids) else np.zeros((0, dim))
    earliest, published, available = known_periods(papers.dates[keep], papers.precision[keep], papers.years[keep])
    rows = _rows_in(ids, papers.author_paper)
    ours = rows >= 0
    order = np.argsort(rows[ours], kind="stable")  # grouped by paper, each paper's authors in their order
    author_ids, author_flat = np.unique(papers.author_ids[ours][order], return_inverse=True)
    author_start = np.concatenate([[0], np.cumsum(np.bincount(rows[ours], minlength=len(ids)))]).astype(np.int64)
    venue_ids = papers.venue_ids[keep]
    known_venues, venue_index = np.unique(venue_ids[venue_ids >= 0], return_inverse=True)
    venues = np.full(len(ids), -1, dtype=np.int64)
    venues[venue_ids >= 0] = venue_index
    return Universe(
        ids,
        vecs.astype(np.float32),
        published,
        *_reading_arrays(ids.tolist(), readings),
        author_flat.astype(np.int64).ravel(),
        author_start,
        venues,
        author_ids.astype(np.int64),
        len(known_venues),
        earliest,
        available,
    )


def _reading_arrays(ids: Sequence[int], readings: Readings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start of each paper's readings, their moments, their values) for the papers ``ids``, in that order, each
    paper's readings in time order; the readings of papers not in ``ids`` are left out."""
    of = _rows_in(np.asarray(ids, dtype=np.int64), np.asarray(readings.paper_ids, dtype=np.int64))
    ours = of >= 0
    row = of[ours]
    t, v = readings.at[ours], readings.values[ours]
    sort = np.lexsort((t, row))
    start = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=len(ids)))]).astype(np.int64)
    return start, t[sort].astype(np.float64), v[sort].astype(np.float64)


def _rows_in(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The row of each of ``wanted`` among ``ids`` (distinct paper ids), -1 for one that is not among them."""
    if not len(ids):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    ranked = ids[order]
    at = np.clip(np.searchsorted(ranked, wanted), 0, len(ranked) - 1)
    return np.where(ranked[at] == wanted, order[at], -1).astype(np.int64)


def known_periods(dates: np.ndarray, precision: np.ndarray, years: np.ndarray) -> tuple[np.ndarray, ...]:
    """(first, middle, last) moment each paper may have come out, from the first day of its date (epoch seconds,
    NaN when unknown), how far that date is known (0 a day, 1 a month, 2 a year) and its year (0 when unknown):
    a paper known to the day came out then; one known to its month or year, or with only a year, within that
    stretch (``published`` is its middle). NaN three times when nothing is known."""
    day = np.where(np.isnan(dates), 0.0, dates / DAY).astype("int64").astype("datetime64[D]")
    by_year = np.isnan(dates) & (years > 0)
    start = np.where(by_year, (years - 1970).astype("datetime64[Y]").astype("datetime64[D]"), day)
    whole_year = by_year | (~np.isnan(dates) & (precision == 2))
    next_month = (start.astype("datetime64[M]") + 1).astype("datetime64[D]")
    next_year = (start.astype("datetime64[Y]") + 1).astype("datetime64[D]")
    end = np.where(whole_year, next_year, np.where(precision == 1, next_month, start))
    first = start.astype("int64") * DAY
    after = end.astype("int64") * DAY
    spans = end > start
    exact = np.where(np.isnan(dates), first, dates)  # a date known to the day keeps its moment, as stored
    last = np.where(spans, after - DAY, exact)
    middle = np.where(spans, (first + after) / 2.0, exact)
    first = np.where(spans, first, exact)
    unknown = np.isnan(dates) & ~by_year
    nan = np.full(len(dates), np.nan)
    return tuple(np.where(unknown, nan, v.astype(np.float64)) for v in (first, middle, last))


def _epoch(day: date | datetime | None) -> float:
    """Seconds since the epoch of a publication date (a date counts from its start, UTC), NaN if unknown."""
    if day is None:
        return float("nan")
    if not isinstance(day, datetime):
        day = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return day.timestamp()
