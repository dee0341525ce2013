"""Slack event ids already handled, so that a retried event is not handled twice."""

from __future__ import annotations

from datetime import datetime

import psycopg


def record_event(conn: psycopg.Connection, event_id: str, team_id: str | None) -> bool:
    """Remember a Slack event id; False when it was seen before (a retry)."""
    row = conn.execute(
        "INSERT INTO processed_events (event_id, team_id) VALUES (%(e)s, %(t)s) ON CONFLICT DO NOTHING RETURNING 1",
        {"e": event_id, "t": team_id},
    ).fetchone()
    return row is not None


def event_seen(conn: psycopg.Connection, event_id: str) -> bool:
    """Whether a Slack event id was handled before."""
    return conn.execute("SELECT 1 FROM processed_events WHERE event_id = %(e)s", {"e": event_id}).fetchone() is not None


def prune_processed_events(conn: psycopg.Connection, before: datetime) -> int:
    """Forget event ids received before ``before`` (Slack stops retrying an event within hours)."""
    return conn.execute("DELETE FROM processed_events WHERE received_at < %(b)s", {"b": before}).rowcount
