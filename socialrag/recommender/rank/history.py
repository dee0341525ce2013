"""A channel's history as arrays, so it can be seen at any past moment: to rank now, to learn from every past
share (``training_set``) and to replay (``socialrag.recommender.rank.evaluate``). Pure (numpy only).

``Universe`` holds the papers in play (the channel's and the candidates'), with vectors, publication
times, popularity readings, authors and venues. ``ChannelHistory`` holds the channel's engagement events.
``state_at(t)`` gives the ``ChannelState`` the ranker sees at ``t``: only what happened before ``t``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cached_property

import numpy as np

from socialrag.knowledge.papers.source import next_month
from socialrag.models import Sentiment
from socialrag.recommender.rank.calibrate import (
    IGNORED_AFTER_DAYS,
    SILENCE_COUNTS_FROM,
)
from socialrag.recommender.rank.engagement import emoji_selectivity, engagement_events
from socialrag.recommender.rank.features import MIN_INTEREST_SHARES, CandidateSet, ChannelState
from socialrag.recommender.rank.window import DAY
from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.rows import PaperInfo, Readings


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

    def popularity_at(self, rows: np.ndarray, t: float, known_by: float | None = None) -> np.ndarray:
        """Each row's last popularity reading at or before ``t``; NaN when none (unknown, not zero), unless
        ``known_by`` is given: then a paper first read after ``t`` but by ``known_by`` gets an estimate of its
        count at ``t`` (``estimate_back``). ``estimated_at`` says which values are estimates."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.full(len(rows), np.nan)
        if not len(rows) or not len(self.reading_t):
            return out
        lo, hi = self.reading_start[rows], self.reading_start[rows + 1]
        at = rows.astype(np.float64) * _ROW_SPAN + float(np.clip(t, -_TIME_SPAN, _TIME_SPAN))
        found = np.clip(np.searchsorted(self._reading_keys, at, side="right"), lo, hi)
        seen = found > lo
        out[seen] = self.reading_v[found[seen] - 1]
        if known_by is not None:
            first = np.minimum(lo, len(self.reading_t) - 1)
            later = ~seen & (hi > lo) & (self.reading_t[first] <= known_by)
            k = first[later]
            out[later] = estimates_back(self.reading_v[k], self.reading_t[k], t, self.published[rows[later]])
        return out

    def estimated_at(self, rows: np.ndarray, t: float, known_by: float) -> np.ndarray:
        """Which rows' popularity at ``t`` is an estimate from a later reading (known by ``known_by``)."""
        return np.isnan(self.popularity_at(rows, t)) & ~np.isnan(self.popularity_at(rows, t, known_by))

    def authors_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(author index, position in ``rows``) of every author entry of these papers."""
        starts, ends = self.author_start[rows], self.author_start[rows + 1]
        flat = np.concatenate([self.author_flat[s:e] for s, e in zip(starts, ends, strict=True)] or [np.zeros(0)])
        return flat.astype(np.int64), np.repeat(np.arange(len(rows)), ends - starts).astype(np.int64)

    def candidates(self, rows: np.ndarray, t: float, known_by: float | None = None) -> CandidateSet:
        flat, owner = self.authors_of(rows)
        popularity = self.popularity_at(rows, t, known_by)
        return CandidateSet(self.vectors[rows], self.published[rows], popularity, flat, owner, self.venues[rows])


DECLARED_INTEREST = 2.0  # a focus or boosted topic counts twice as much as a member's own interest

# ``_reading_keys``: a paper's readings 1e10 s (317 years) after the last paper's; moments clipped to 1843-2096
_ROW_SPAN, _TIME_SPAN = 1e10, 4e9
GROWTH_DAYS = 365.0  # the age at which a paper has half the count it will have a long time after


def estimate_back(count: float, read_at: float, t: float, published: float) -> float:
    """``estimates_back`` of one paper."""
    return float(estimates_back(np.array([count]), np.array([read_at]), t, np.array([published]))[0])


def estimates_back(count: np.ndarray, read_at: np.ndarray, t: float, published: np.ndarray) -> np.ndarray:
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
    """Papers with a vector; ``readings`` (epoch seconds, value; or ``Readings``, as a refit loads them) default
    to each info's popularity, known from always (right for a ranking at the moment the infos were loaded)."""
    ids = [pid for pid in infos if pid in vectors]
    packed = _reading_arrays(ids, readings) if isinstance(readings, Readings) else None
    author_index: dict[int, int] = {}
    venue_index: dict[int, int] = {}
    flat: list[int] = []
    a_start = [0]
    r_start = [0]
    r_t: list[float] = []
    r_v: list[float] = []
    published: list[float] = []
    earliest: list[float] = []
    available: list[float] = []
    venues = []
    for pid in ids:
        info = infos[pid]
        for a in info.authors:
            flat.append(author_index.setdefault(a.author_id, len(author_index)))
        a_start.append(len(flat))
        if packed is None:
            own = readings.get(pid, ()) if isinstance(readings, Mapping) else ()
            if readings is None and info.popularity is not None:
                own = [(-np.inf, info.popularity)]
            for t, v in sorted(own):
                r_t.append(t)
                r_v.append(v)
            r_start.append(len(r_t))
        first, middle, last = known_period(info)
        earliest.append(first)
        published.append(middle)
        available.append(last)
        venues.append(venue_index.setdefault(info.venue_id, len(venue_index)) if info.venue_id is not None else -1)
    dim = next(iter(vectors.values())).shape[0] if vectors else 0
    return Universe(
        np.array(ids, dtype=np.int64),
        np.stack([vectors[p] for p in ids]).astype(np.float32) if ids else np.zeros((0, dim), dtype=np.float32),
        np.array(published, dtype=np.float64),
        *(
            packed
            or (np.array(r_start, dtype=np.int64), np.array(r_t, dtype=np.float64), np.array(r_v, dtype=np.float64))
        ),
        np.array(flat, dtype=np.int64),
        np.array(a_start, dtype=np.int64),
        np.array(venues, dtype=np.int64),
        np.array(list(author_index), dtype=np.int64),
        len(venue_index),
        np.array(earliest, dtype=np.float64),
        np.array(available, dtype=np.float64),
    )


def _reading_arrays(ids: Sequence[int], readings: Readings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start of each paper's readings, their moments, their values) for the papers ``ids``, in that order, each
    paper's readings in time order; the readings of papers not in ``ids`` are left out."""
    order = np.argsort(np.asarray(ids, dtype=np.int64), kind="stable")
    ranked = np.asarray(ids, dtype=np.int64)[order]
    at = np.clip(np.searchsorted(ranked, readings.paper_ids), 0, max(0, len(ranked) - 1))
    ours = ranked[at] == readings.paper_ids if len(ranked) else np.zeros(len(readings.paper_ids), dtype=bool)
    row = order[at[ours]]
    t, v = readings.at[ours], readings.values[ours]
    sort = np.lexsort((t, row))
    start = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=len(ids)))]).astype(np.int64)
    return start, t[sort].astype(np.float64), v[sort].astype(np.float64)


def known_period(info: PaperInfo) -> tuple[float, float, float]:
    """(first, middle, last) moment a paper may have come out, from its date and how far it is known: a day,
    a month, or only the year. NaN three times when nothing is known."""
    start = info.publication_date
    if start is None:
        if info.year is None:
            return (float("nan"),) * 3
        start, end = date(info.year, 1, 1), date(info.year + 1, 1, 1)
    elif info.date_precision == "month":
        end = next_month(start)
    elif info.date_precision == "year":
        end = date(start.year + 1, 1, 1)
    else:
        return (_epoch(start),) * 3
    first, after = _epoch(start), _epoch(end)
    return first, (first + after) / 2.0, after - DAY


def _epoch(day: date | datetime | None) -> float:
    """Seconds since the epoch of a publication date (a date counts from its start, UTC), NaN if unknown."""
    if day is None:
        return float("nan")
    if not isinstance(day, datetime):
        day = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return day.timestamp()


@dataclass(frozen=True)
class ChannelHistory:
    universe: Universe
    rows: np.ndarray  # (m,) universe rows of the channel's papers, by first appearance
    first_at: np.ndarray  # (m,) first share by anyone, PaperPing included
    member_first: np.ndarray  # (m,) first share by a member (NaN for a paper only PaperPing posted)
    post_at: np.ndarray  # (m,) PaperPing's post (NaN if none)
    answered_at: np.ndarray  # (m,) first reply or positive reaction after PaperPing's post (NaN if none)
    heard_at: np.ndarray  # (m,) first answer of any kind after PaperPing's post, a not-for-us included (NaN if none)
    ev_paper: np.ndarray  # engagement events: channel paper position, time, signed value
    ev_t: np.ndarray
    ev_v: np.ndarray
    member_authors: np.ndarray  # (n_authors,) bool: the author is a member of the channel
    half_life_days: float
    sharer: np.ndarray | None = None  # (m,) the member who shared the paper first (an index), -1 when PaperPing did

    @cached_property
    def _interest_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """At each position, the sum of the vectors of its sharer's papers up to it and how many there are, and
        for each prefix of the papers the position of each member's latest (-1: none yet), so that the members'
        interests at any moment are a few lookups: the papers are in order of first share."""
        sharer = self.sharer if self.sharer is not None else np.full(len(self.rows), -1)
        vectors = self.universe.vectors[self.rows]
        sums = np.zeros(vectors.shape, dtype=np.float64)
        counts = np.zeros(len(self.rows), dtype=np.int64)
        latest = np.full((len(self.rows) + 1, int(sharer.max(initial=-1)) + 1), -1, dtype=np.int32)
        running: dict[int, tuple[np.ndarray, int]] = {}
        for k, member in enumerate(sharer.tolist()):
            latest[k + 1] = latest[k]
            if member < 0:
                continue
            total, n = running.get(member, (np.zeros(vectors.shape[1]), 0))
            running[member] = (total + vectors[k], n + 1)
            sums[k], counts[k] = running[member]
            latest[k + 1, member] = k
        return sums, counts, latest

    def interests_at(self, known: int) -> np.ndarray:
        """The unit centroid of each member's own shares among the first ``known`` papers, for members with at
        least ``MIN_INTEREST_SHARES`` of them."""
        if self.sharer is None or known == 0:
            return np.zeros((0, self.universe.vectors.shape[1]), dtype=np.float32)
        sums, counts, latest = self._interest_sums
        last = latest[known]
        last = last[last >= 0]
        last = last[counts[last] >= MIN_INTEREST_SHARES]
        centres = sums[last]
        norms = np.linalg.norm(centres, axis=1, keepdims=True)
        return (centres / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    @cached_property
    def _authors(self) -> tuple[np.ndarray, np.ndarray]:
        """(author index, position of the channel paper) of every author entry of the channel's papers."""
        return self.universe.authors_of(self.rows)

    def silence_counts(self, t: float) -> bool:
        """Whether a PaperPing post nobody answered means anything at ``t``: only in a channel that answered (in
        any way) at least ``SILENCE_COUNTS_FROM`` of its posts old enough to judge. A lab that reads without
        reacting is not read as disliking everything it was sent."""
        judged = self.post_at + IGNORED_AFTER_DAYS * DAY < t
        if not judged.any():
            return False
        heard = self.heard_at[judged] <= self.post_at[judged] + IGNORED_AFTER_DAYS * DAY
        return float(heard.mean()) >= SILENCE_COUNTS_FROM

    def state_at(
        self,
        t: float,
        focus: np.ndarray | None = None,
        *,
        vectors: bool = True,
        steering: Sequence[tuple[np.ndarray, bool]] = (),
    ) -> tuple[ChannelState, np.ndarray]:
        """What the ranker sees at ``t``, and the positions (into ``rows``) of the papers it includes; without
        ``vectors``, none of its papers' vectors (for a caller that gives ``features`` the similarities).
        ``steering`` holds the topics members boosted (True) or muted (False), as directions."""
        known = np.flatnonzero(self.first_at < t)
        mask = self.ev_t < t
        decayed = self.ev_v[mask] * 0.5 ** (np.maximum(0.0, t - self.ev_t[mask]) / (self.half_life_days * DAY))
        w_all = np.bincount(self.ev_paper[mask], weights=decayed, minlength=len(self.rows))
        w = w_all[known]
        posted = self.post_at[known]
        answered = self.answered_at[known]
        ignored = (posted + IGNORED_AFTER_DAYS * DAY < t) & ~(answered < t) & np.isnan(self.member_first[known])
        ignored &= self.silence_counts(t)
        disliked = (w < 0) | ignored
        u = self.universe
        chosen = u.vectors[self.rows[known]] if vectors or focus is not None else u.vectors[:0]
        positive_all = np.where(self.first_at < t, np.maximum(w_all, 0.0), 0.0)
        authors, owners = self._authors
        author_w = np.bincount(authors, weights=positive_all[owners], minlength=u.n_authors)
        v = u.venues[self.rows]
        venue_w = np.bincount(v[v >= 0], weights=positive_all[v >= 0], minlength=u.n_venues)
        strongest = max(1.0, float(w.max()) if len(w) else 1.0)
        # the focus and a boosted topic count as a paper the group engaged with twice as strongly as with any
        # other; a muted topic as one it received as badly as it liked its favourite
        extra = [(focus, True)] if focus is not None else []
        for direction, boosted in [*extra, *steering]:
            chosen = np.vstack([chosen, direction[None, :].astype(chosen.dtype)])
            w = np.append(w, 2.0 * strongest if boosted else -strongest)
            disliked = np.append(disliked, not boosted)
        # members' own shares are the group's interests, and so are a focus and a boosted topic, which members
        # declared: a candidate on them is measured against them alone
        declared = [d / (np.linalg.norm(d) or 1.0) for d, boosted in [*extra, *steering] if boosted]
        interests = self.interests_at(len(known))
        scale = np.ones(len(interests))
        if declared:
            interests = np.vstack([interests, np.stack(declared).astype(np.float32)])
            scale = np.append(scale, np.full(len(declared), DECLARED_INTEREST))
        state = ChannelState(chosen, w, disliked, author_w, venue_w, self.member_authors, interests, scale)
        return state, known


def build_history(
    ctx: ChannelContext,
    universe: Universe,
    half_life_days: float,
    overrides: Mapping[str, Sentiment] | None = None,
) -> ChannelHistory:
    """The channel's papers that are in ``universe``, with their engagement events (as ``rank`` counts them)."""
    index = universe.index
    bots = frozenset(uid for uid, m in ctx.members.items() if m.is_bot)
    papers = [(pid, p) for pid, p in ctx.papers.items() if pid in index]
    papers.sort(key=lambda item: (min(s.at for s in item[1].shares), item[0]))
    selectivity = emoji_selectivity(p for _, p in papers)
    ev_p: list[int] = []
    ev_t: list[float] = []
    ev_v: list[float] = []
    first, member_first, post_at, answered, any_answer = [], [], [], [], []
    sharers: dict[str, int] = {}
    sharer: list[int] = []
    for k, (_, paper) in enumerate(papers):
        first.append(min(s.at for s in paper.shares).timestamp())
        by_members = [s.at.timestamp() for s in paper.shares if s.user_id not in bots]
        member_first.append(min(by_members) if by_members else np.nan)
        opener = min(paper.shares, key=lambda s: s.at)
        by_bot = opener.user_id is None or opener.user_id in bots
        sharer.append(-1 if by_bot else sharers.setdefault(str(opener.user_id), len(sharers)))
        bot_shares = [s.at.timestamp() for s in paper.shares if s.user_id in bots]  # PaperPing's own posts
        post = min(bot_shares) if bot_shares else np.nan
        post_at.append(post)
        events = engagement_events(paper, selectivity, overrides or ctx.emoji_overrides, bots)
        answers = [at.timestamp() for at, v in events if v > 0 and not np.isnan(post) and at.timestamp() > post]
        answered.append(min(answers) if answers else np.nan)
        heard = [at.timestamp() for at, v in events if v != 0 and not np.isnan(post) and at.timestamp() > post]
        any_answer.append(min(heard) if heard else np.nan)
        for at, v in events:
            ev_p.append(k)
            ev_t.append(at.timestamp())
            ev_v.append(v)
    members_wrote = {aid for m in ctx.members.values() if m.in_channel and not m.is_bot for aid in m.author_ids}
    member_authors = (
        np.isin(universe.author_ids, list(members_wrote)) if members_wrote else np.zeros(universe.n_authors, dtype=bool)
    )
    return ChannelHistory(
        universe,
        np.array([index[pid] for pid, _ in papers], dtype=np.int64),
        np.array(first, dtype=np.float64),
        np.array(member_first, dtype=np.float64),
        np.array(post_at, dtype=np.float64),
        np.array(answered, dtype=np.float64),
        np.array(any_answer, dtype=np.float64),
        np.array(ev_p, dtype=np.int64),
        np.array(ev_t, dtype=np.float64),
        np.array(ev_v, dtype=np.float64),
        member_authors,
        half_life_days,
        np.array(sharer, dtype=np.int64),
    )


def pool_rows(universe: Universe, t: float, window_days: float, exclude: np.ndarray) -> np.ndarray:
    """Universe rows a ranking at ``t`` could have offered: published in the window before ``t``."""
    out = universe.available
    ok = (out < t) & (out >= t - window_days * DAY)
    ok[exclude] = False
    return np.flatnonzero(ok)
