"""Slack event ids: claimed while an event is being handled, then kept as handled, so that a resent event is not
handled twice (and a click delivered twice does not undo itself)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

import psycopg

Claim = Literal["claimed", "handled", "busy"]


def record_event(conn: psycopg.Connection, event_id: str, team_id: str | None) -> bool:
    """Remember a Slack event id as handled; False when it was seen before (a retry)."""
    row = conn.execute(
        "INSERT INTO processed_events (event_id, team_id) VALUES (%(e)s, %(t)s) ON CONFLICT DO NOTHING RETURNING 1",
        {"e": event_id, "t": team_id},
    ).fetchone()
    return row is not None


def claim_event(conn: psycopg.Connection, event_id: str, team_id: str | None, lease: timedelta) -> Claim:
    """Claim an event id before its handling starts: ``claimed`` when it was unknown, or claimed more than
    ``lease`` ago and never handled (its handler died with its process); ``handled`` when it was handled;
    ``busy`` while another copy is being handled."""
    row = conn.execute(
        """
        INSERT INTO processed_events (event_id, team_id, handled_at) VALUES (%(e)s, %(t)s, NULL)
        ON CONFLICT (event_id) DO UPDATE SET received_at = now()
         WHERE processed_events.handled_at IS NULL AND processed_events.received_at < now() - %(lease)s
        RETURNING 1
        """,
        {"e": event_id, "t": team_id, "lease": lease},
    ).fetchone()
    if row is not None:
        return "claimed"
    found = conn.execute(
        "SELECT handled_at IS NOT NULL FROM processed_events WHERE event_id = %(e)s", {"e": event_id}
    ).fetchone()
    return "handled" if found is not None and found[0] else "busy"


LAST_COPY_REFUSED = "#last-copy-refused"  # an event id with this after it: Slack's last copy came while it was busy


def record_last_copy_refused(conn: psycopg.Connection, event_id: str, team_id: str | None) -> None:
    """Slack's last copy of an event came while another copy was at work and was refused: Slack sends it no more,
    so the copy at work is the last chance. Kept as a row of its own (handled, pruned with the event's)."""
    record_event(conn, event_id + LAST_COPY_REFUSED, team_id)


def last_copy_refused(conn: psycopg.Connection, event_id: str) -> bool:
    """Whether Slack's last copy of the event was refused while another copy was at work."""
    return event_seen(conn, event_id + LAST_COPY_REFUSED)


def record_handled(conn: psycopg.Connection, event_id: str, team_id: str | None) -> None:
    """Mark an event id handled (claimed or not): a copy that arrives from now on is dropped."""
    conn.execute(
        """
        INSERT INTO processed_events (event_id, team_id) VALUES (%(e)s, %(t)s)
        ON CONFLICT (event_id) DO UPDATE SET handled_at = now() WHERE processed_events.handled_at IS NULL
        """,
        {"e": event_id, "t": team_id},
    )


def release_event(conn: psycopg.Connection, event_id: str) -> None:
    """Let go of the claim on an event whose handling failed, so that Slack's next copy is handled."""
    conn.execute("DELETE FROM processed_events WHERE event_id = %(e)s AND handled_at IS NULL", {"e": event_id})


def event_seen(conn: psycopg.Connection, event_id: str) -> bool:
    """Whether a Slack event id was handled before."""
    return conn.execute("SELECT 1 FROM processed_events WHERE event_id = %(e)s", {"e": event_id}).fetchone() is not None


def prune_processed_events(conn: psycopg.Connection, before: datetime) -> int:
    """Forget event ids received before ``before`` (Slack stops retrying an event within hours)."""
    return conn.execute("DELETE FROM processed_events WHERE received_at < %(b)s", {"b": before}).rowcount
