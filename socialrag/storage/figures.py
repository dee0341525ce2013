"""The figures an admin watches, counted in Postgres across every process (``socialrag.cli.gauges`` turns them into
``/metrics`` and ``paperping status --json``): counts and ages only, never what a member wrote."""

from __future__ import annotations

from datetime import datetime

import psycopg

FIGURES_TIMEOUT_MS = 5000  # a query set that takes longer is cancelled; the last figures stay served


def limit_figures_time(conn: psycopg.Connection) -> None:
    """Cancel this transaction's figure queries past ``FIGURES_TIMEOUT_MS`` (a scrape never waits on a slow base)."""
    conn.execute(f"SET LOCAL statement_timeout = {int(FIGURES_TIMEOUT_MS)}")


def load_events_handled(conn: psycopg.Connection, since: datetime) -> list[tuple[str | None, int]]:
    """Slack events (and clicks) handled since ``since``, by workspace (ids are kept for a day)."""
    rows = conn.execute(
        "SELECT team_id, count(*) FROM processed_events WHERE received_at >= %(s)s GROUP BY team_id", {"s": since}
    ).fetchall()
    return [(r[0], int(r[1])) for r in rows]


def load_post_outcomes(conn: psycopg.Connection) -> list[tuple[str, str, int]]:
    """Recommendations by workspace and status: posted, failed, or on their way (drafted, posting, sending)."""
    rows = conn.execute("SELECT team_id, status, count(*) FROM recommendations GROUP BY team_id, status").fetchall()
    return [(r[0], r[1], int(r[2])) for r in rows]


def load_channel_holds(conn: psycopg.Connection) -> list[tuple[str, str, int]]:
    """Active channels by workspace and state: ``stopped`` (a failure that cannot heal), ``paused`` (by members),
    ``empty`` (its last slot posted nothing), ``posting`` (the rest)."""
    rows = conn.execute(
        """
        SELECT team_id,
               CASE WHEN stopped_reason IS NOT NULL THEN 'stopped' WHEN paused THEN 'paused'
                    WHEN empty_slots > 0 THEN 'empty' ELSE 'posting' END AS state,
               count(*)
          FROM channel_settings WHERE active GROUP BY 1, 2
        """
    ).fetchall()
    return [(r[0], r[1], int(r[2])) for r in rows]


def load_index_queue(conn: psycopg.Connection) -> tuple[int, int, int, int, datetime | None]:
    """The indexing queue: waiting, ready now, leased now, given up, and when its oldest ready item was queued
    (None when nothing is ready)."""
    row = conn.execute(
        """
        SELECT count(*) FILTER (WHERE given_up_at IS NULL),
               count(*) FILTER (WHERE given_up_at IS NULL AND not_before <= now()),
               count(*) FILTER (WHERE given_up_at IS NULL AND lease_until > now()),
               count(*) FILTER (WHERE given_up_at IS NOT NULL),
               min(enqueued_at) FILTER (WHERE given_up_at IS NULL AND not_before <= now())
          FROM index_queue
        """
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2]), int(row[3]), row[4]


def load_fulltext_reading(conn: psycopg.Connection) -> tuple[list[tuple[str, int]], int, datetime | None]:
    """Full texts by status (read, none, unreadable), the papers being read now, and since when the oldest retry
    that is due has been due (None when none is)."""
    rows = conn.execute("SELECT status, count(*) FROM paper_fulltexts GROUP BY status").fetchall()
    row = conn.execute(
        """
        SELECT (SELECT count(*) FROM fulltext_claims WHERE claimed_until > now()),
               (SELECT min(retry_at) FROM paper_fulltexts
                 WHERE status <> 'read' AND retry_at <= now())
        """
    ).fetchone()
    assert row is not None
    return [(r[0], int(r[1])) for r in rows], int(row[0]), row[1]


def load_source_health(conn: psycopg.Connection) -> list[tuple[str, int, bool]]:
    """Every outside source the processes have paced: failures in a row, and whether it is held now."""
    rows = conn.execute(
        "SELECT source, failures, COALESCE(held_until > clock_timestamp(), false) FROM source_pace ORDER BY source"
    ).fetchall()
    return [(r[0], int(r[1]), bool(r[2])) for r in rows]


def load_llm_use(conn: psycopg.Connection, since: datetime) -> list[tuple[str | None, str, int, int, int]]:
    """LLM calls since ``since`` by workspace and outcome: calls, prompt tokens, completion tokens."""
    rows = conn.execute(
        """
        SELECT team_id, outcome, count(*), COALESCE(sum(prompt_tokens), 0), COALESCE(sum(completion_tokens), 0)
          FROM llm_calls WHERE created_at >= %(s)s GROUP BY team_id, outcome
        """,
        {"s": since},
    ).fetchall()
    return [(r[0], r[1], int(r[2]), int(r[3]), int(r[4])) for r in rows]
