"""Each channel's calibrated ranker: the papers it learns from, fitting it (``refit_channel``) and reading the
latest fit back (``load_fit``). The rows are kept by ``socialrag.storage.rankers``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import psycopg

from socialrag.config import DEFAULT_POPULARITY_WEIGHT
from socialrag.db import Connect
from socialrag.recommender.rank.calibrate import RankerModel, default_model
from socialrag.recommender.rank.guard import MAX_WINDOW_DAYS
from socialrag.recommender.rank.history import build_history
from socialrag.recommender.rank.training import training_set
from socialrag.recommender.rank.universe import Universe, universe_from_arrays
from socialrag.recommender.retrieve.context import ChannelContext, load_channel_context
from socialrag.rows import Share
from socialrag.storage.context_rows import load_shares
from socialrag.storage.embeddings import load_vectors
from socialrag.storage.rankers import load_fits, load_paper_arrays, load_readings, sample_pool, save_fit


def load_universe(
    conn: psycopg.Connection,
    model: str,
    paper_ids: Sequence[int],
    channel: tuple[str, str],
    *,
    vectors_on: psycopg.Connection | None = None,
) -> Universe:
    """These papers (those with a vector, as ``channel`` sees them) with their authors, venues and popularity
    readings; with ``vectors_on``, their vectors are read on that connection while the rest is read on ``conn``."""
    ids = list(dict.fromkeys(paper_ids))
    if vectors_on is None:
        vectors = load_vectors(conn, model, ids, channel=channel)
        return universe_from_arrays(load_paper_arrays(conn, ids), vectors, load_readings(conn, ids))
    with ThreadPoolExecutor(max_workers=1) as thread:
        later = thread.submit(load_vectors, vectors_on, model, ids, channel=channel)
        arrays, readings = load_paper_arrays(conn, ids), load_readings(conn, ids)
        return universe_from_arrays(arrays, later.result(), readings)


def refit_channel(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    model: str,
    *,
    half_life_days: float = 60.0,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    window_days: float | None = None,
    now: datetime | None = None,
    pool: Sequence[int] | None = None,
    connect: Connect | None = None,
) -> RankerModel:
    """Learn the channel's weights from its history before ``now`` (today unless replaying the past) and store
    them dated ``now``; the fit in use at ``now`` stays in use unless the new one beats it (``fit_guarded``).
    With ``connect`` (more connections, as ``Database.connection`` gives them), the catalog's papers are read
    on two of them while the channel's history is read on ``conn`` (``read_together``)."""
    now = now or datetime.now(UTC)
    ctx, universe = read_together(conn, team_id, channel_id, model, now, window_days, pool, connect)
    current = load_fit(conn, team_id, channel_id, popularity_weight, as_of=now)
    if universe is None:
        prior = default_model(popularity_weight)
        fitted = RankerModel(prior.weights, prior.scales, prior.prior, 0, 0, now, decision="nothing shared yet")
    else:
        history = build_history(ctx, universe, half_life_days)
        pairs = training_set(history, window_days=window_days, known_by=now.timestamp())
        fitted = pairs.fit(popularity_weight, before=now.timestamp(), now=now, current=current)
        fitted = replace(fitted, taste_model=model if fitted.taste is not None else "")
    save_fit(
        conn, team_id, channel_id, fitted.fitted_at or datetime.now(UTC), fitted.to_json(), fitted.shares, fitted.pairs
    )
    return fitted


def read_together(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    model: str,
    now: datetime,
    window_days: float | None = None,
    pool: Sequence[int] | None = None,
    connect: Connect | None = None,
) -> tuple[ChannelContext, Universe | None]:
    """The channel's history as of ``now`` and the papers it is ranked among (its own and ``pool``, else a sample
    of the catalog's since ``window_days`` before its first share); None for the papers when it shared nothing.
    Most of these reads is the database's own work: with ``connect``, the catalog's papers, their readings and
    their vectors are read on two more connections while the channel's history is read on ``conn``, so that
    the database works on more than one core. Either way the same rows are read."""
    since = timedelta(days=window_days or MAX_WINDOW_DAYS)

    def ranked_among(
        on: psycopg.Connection, shared: Mapping[int, Sequence[Share]], second: psycopg.Connection | None = None
    ) -> Universe:
        first = min(s.at for shares in shared.values() for s in shares)
        others = pool if pool is not None else sample_pool(on, model, first - since)
        return load_universe(on, model, [*shared, *others], (team_id, channel_id), vectors_on=second)

    if connect is None:
        ctx = load_channel_context(conn, team_id, channel_id, now, model)
        shared = {pid: paper.shares for pid, paper in ctx.papers.items()}
        return ctx, ranked_among(conn, shared) if shared else None
    with connect() as catalog, connect() as second, ThreadPoolExecutor(max_workers=1) as thread:
        history = thread.submit(load_channel_context, conn, team_id, channel_id, now, model)
        shared = load_shares(catalog, team_id, channel_id, now)  # the channel's papers, as the history has them
        universe = ranked_among(catalog, shared, second) if shared else None
        return history.result(), universe


def load_fit(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
    as_of: datetime | None = None,
) -> RankerModel:
    """The channel's latest fit (before ``as_of``), or the default blend if it has none."""
    rows = load_fits(conn, team_id, channel_id, as_of=as_of)
    if not rows:
        return default_model(popularity_weight)
    return RankerModel.from_json(*rows[0], popularity_weight)


def fit_history(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    limit: int = 10,
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT,
) -> list[RankerModel]:
    """The channel's latest fits, newest first (for `status`)."""
    return [RankerModel.from_json(*r, popularity_weight) for r in load_fits(conn, team_id, channel_id, limit=limit)]
