"""Each channel's calibrated ranker in the knowledge base: loading the papers it learns from, fitting it
(``refit_channel``), and keeping every fit with its date (``channel_rankers``)."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg.types.json import Jsonb

from socialrag.calibrate import RankerModel, default_model
from socialrag.history import Universe, build_history, build_universe, training_set
from socialrag.social import load_channel_context, load_paper_infos, load_vectors

log = logging.getLogger(__name__)
POOL_SIZE = 4000  # catalog papers a refit samples its passed-over papers from
REFIT_AFTER = timedelta(days=7)


def load_readings(conn: psycopg.Connection, paper_ids: Sequence[int]) -> dict[int, list[tuple[float, float]]]:
    """Every popularity reading of these papers, as (epoch seconds, value)."""
    out: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for pid, at, value in conn.execute(
        "SELECT paper_id, observed_at, value FROM paper_popularity WHERE paper_id = ANY(%(ids)s::bigint[])",
        {"ids": list(paper_ids)},
    ).fetchall():
        out[pid].append((at.timestamp(), value))
    return out


def load_universe(conn: psycopg.Connection, model: str, paper_ids: Sequence[int]) -> Universe:
    """These papers (those with a vector) with their authors, venues and popularity readings."""
    ids = list(dict.fromkeys(paper_ids))
    return build_universe(load_paper_infos(conn, ids), load_vectors(conn, model, ids), load_readings(conn, ids))


def sample_pool(conn: psycopg.Connection, model: str, since: datetime, limit: int = POOL_SIZE) -> list[int]:
    """Up to ``limit`` papers with a vector published since ``since``, at random (the papers a channel could
    have been offered and was not)."""
    rows = conn.execute(
        """
        SELECT p.id FROM papers p JOIN paper_embeddings e ON e.paper_id = p.id AND e.model = %(m)s
         WHERE p.publication_date >= %(since)s ORDER BY random() LIMIT %(n)s
        """,
        {"m": model, "since": since.date(), "n": limit},
    ).fetchall()
    return [r[0] for r in rows]


def refit_channel(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    model: str,
    *,
    half_life_days: float = 60.0,
    popularity_weight: float = 0.05,
    window_days: float = 365.0,
    now: datetime | None = None,
    pool: Sequence[int] | None = None,
) -> RankerModel:
    """Learn the channel's weights from all of its history and store them with today's date."""
    now = now or datetime.now(UTC)
    ctx = load_channel_context(conn, team_id, channel_id, now, model)
    if not ctx.papers:
        prior = default_model(popularity_weight)
        fitted = RankerModel(prior.weights, prior.scales, prior.prior, 0, 0, now)
    else:
        first = min(s.at for p in ctx.papers.values() for s in p.shares)
        if pool is None:
            pool = sample_pool(conn, model, first - timedelta(days=window_days))
        universe = load_universe(conn, model, [*ctx.papers, *pool])
        history = build_history(ctx, universe, half_life_days)
        fitted = training_set(history, window_days=window_days).fit(popularity_weight, now=now)
    save_fit(conn, team_id, channel_id, fitted)
    return fitted


def save_fit(conn: psycopg.Connection, team_id: str, channel_id: str, model: RankerModel) -> None:
    conn.execute(
        """
        INSERT INTO channel_rankers (team_id, channel_id, fitted_at, model, shares, pairs)
        VALUES (%(t)s, %(c)s, %(at)s, %(m)s, %(s)s, %(p)s)
        """,
        {
            "t": team_id,
            "c": channel_id,
            "at": model.fitted_at or datetime.now(UTC),
            "m": Jsonb(model.to_json()),
            "s": model.shares,
            "p": model.pairs,
        },
    )


def load_fit(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    popularity_weight: float = 0.05,
    as_of: datetime | None = None,
) -> RankerModel:
    """The channel's latest fit (before ``as_of``), or the default blend if it has none."""
    row = conn.execute(
        """
        SELECT model, shares, pairs, fitted_at FROM channel_rankers
         WHERE team_id = %(t)s AND channel_id = %(c)s AND (%(as_of)s::timestamptz IS NULL OR fitted_at <= %(as_of)s)
         ORDER BY fitted_at DESC, id DESC LIMIT 1
        """,
        {"t": team_id, "c": channel_id, "as_of": as_of},
    ).fetchone()
    if row is None:
        return default_model(popularity_weight)
    return RankerModel.from_json(row[0], row[1], row[2], row[3], popularity_weight)


def channels_to_refit(conn: psycopg.Connection, now: datetime, limit: int = 20) -> list[tuple[str, str]]:
    """Channels whose fit is older than a week, or older than feedback they got since (a new share, a
    reaction or a reply), oldest first. A channel never fitted comes first."""
    rows = conn.execute(
        """
        WITH latest AS (
            SELECT DISTINCT ON (team_id, channel_id) team_id, channel_id, fitted_at FROM channel_rankers
             ORDER BY team_id, channel_id, fitted_at DESC)
        SELECT c.team_id, c.channel_id, l.fitted_at FROM channels c
          LEFT JOIN latest l ON (l.team_id, l.channel_id) = (c.team_id, c.channel_id)
         WHERE EXISTS (SELECT 1 FROM message_papers mp WHERE (mp.team_id, mp.channel_id) = (c.team_id, c.channel_id))
           AND (l.fitted_at IS NULL OR l.fitted_at < %(stale)s
                OR EXISTS (SELECT 1 FROM messages m WHERE (m.team_id, m.channel_id) = (c.team_id, c.channel_id)
                              AND m.posted_at > l.fitted_at + interval '1 hour')
                OR EXISTS (SELECT 1 FROM reactions r WHERE (r.team_id, r.channel_id) = (c.team_id, c.channel_id)
                              AND r.reacted_at > l.fitted_at + interval '1 hour'))
         ORDER BY l.fitted_at NULLS FIRST LIMIT %(n)s
        """,
        {"stale": now - REFIT_AFTER, "n": limit},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def fit_history(conn: psycopg.Connection, team_id: str, channel_id: str, limit: int = 10) -> list[RankerModel]:
    """The channel's latest fits, newest first (for `status`)."""
    rows = conn.execute(
        """
        SELECT model, shares, pairs, fitted_at FROM channel_rankers WHERE team_id = %(t)s AND channel_id = %(c)s
         ORDER BY fitted_at DESC, id DESC LIMIT %(n)s
        """,
        {"t": team_id, "c": channel_id, "n": limit},
    ).fetchall()
    return [RankerModel.from_json(r[0], r[1], r[2], r[3], 0.05) for r in rows]
