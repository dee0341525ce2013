"""Each channel's calibrated ranker: the papers it learns from, fitting it (``refit_channel``) and reading the
latest fit back (``load_fit``). The rows are kept by ``socialrag.storage.rankers``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import psycopg

from socialrag.config import DEFAULT_POPULARITY_WEIGHT
from socialrag.recommender.rank.calibrate import RankerModel, default_model
from socialrag.recommender.rank.guard import MAX_WINDOW_DAYS
from socialrag.recommender.rank.history import build_history
from socialrag.recommender.rank.training import training_set
from socialrag.recommender.rank.universe import Universe, universe_from_arrays
from socialrag.recommender.retrieve.context import load_channel_context
from socialrag.storage.embeddings import load_vectors
from socialrag.storage.rankers import load_fits, load_paper_arrays, load_readings, sample_pool, save_fit


def load_universe(conn: psycopg.Connection, model: str, paper_ids: Sequence[int], channel: tuple[str, str]) -> Universe:
    """These papers (those with a vector, as ``channel`` sees them) with their authors, venues and popularity
    readings."""
    ids = list(dict.fromkeys(paper_ids))
    vectors = load_vectors(conn, model, ids, channel=channel)
    return universe_from_arrays(load_paper_arrays(conn, ids), vectors, load_readings(conn, ids))


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
) -> RankerModel:
    """Learn the channel's weights from its history before ``now`` (today unless replaying the past) and store
    them dated ``now``; the fit in use at ``now`` stays in use unless the new one beats it (``fit_guarded``)."""
    now = now or datetime.now(UTC)
    ctx = load_channel_context(conn, team_id, channel_id, now, model)
    current = load_fit(conn, team_id, channel_id, popularity_weight, as_of=now)
    if not ctx.papers:
        prior = default_model(popularity_weight)
        fitted = RankerModel(prior.weights, prior.scales, prior.prior, 0, 0, now, decision="nothing shared yet")
    else:
        first = min(s.at for p in ctx.papers.values() for s in p.shares)
        if pool is None:
            pool = sample_pool(conn, model, first - timedelta(days=window_days or MAX_WINDOW_DAYS))
        universe = load_universe(conn, model, [*ctx.papers, *pool], (team_id, channel_id))
        history = build_history(ctx, universe, half_life_days)
        pairs = training_set(history, window_days=window_days, known_by=now.timestamp())
        fitted = pairs.fit(popularity_weight, before=now.timestamp(), now=now, current=current)
    save_fit(
        conn, team_id, channel_id, fitted.fitted_at or datetime.now(UTC), fitted.to_json(), fitted.shares, fitted.pairs
    )
    return fitted


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
