"""Where each import or history read stopped, so that a restart goes on from there, and which stored messages a
history read did not return (deleted while PaperPing was not listening)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

HISTORY_SOURCE = "webapi"  # the checkpoints of a channel's history read through the group space's API


@dataclass(frozen=True)
class Checkpoint:
    """Where a history read or an import stopped: the next page's cursor, its own state, and when it finished."""

    cursor: str | None
    state: dict[str, Any]
    completed_at: datetime | None


def load_checkpoint(conn: psycopg.Connection, team_id: str, channel_id: str, source: str) -> Checkpoint | None:
    row = conn.execute(
        """
        SELECT cursor, state, completed_at FROM import_checkpoints
         WHERE team_id = %(t)s AND channel_id = %(c)s AND source = %(s)s
        """,
        {"t": team_id, "c": channel_id, "s": source},
    ).fetchone()
    if row is None:
        return None
    return Checkpoint(row[0], dict(row[1] or {}), row[2])


def record_checkpoint(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    source: str,
    cursor: str | None,
    state: dict[str, Any],
    *,
    completed: bool = False,
) -> None:
    conn.execute(
        """
        INSERT INTO import_checkpoints (team_id, channel_id, source, cursor, state, completed_at)
        VALUES (%(t)s, %(c)s, %(s)s, %(cursor)s, %(state)s, CASE WHEN %(done)s THEN now() END)
        ON CONFLICT (team_id, channel_id, source) DO UPDATE
           SET cursor = EXCLUDED.cursor, state = EXCLUDED.state, updated_at = now(),
               completed_at = EXCLUDED.completed_at
        """,
        {"t": team_id, "c": channel_id, "s": source, "cursor": cursor, "state": Jsonb(state), "done": completed},
    )


def load_unfinished_imports(conn: psycopg.Connection, source: str) -> list[tuple[str, str]]:
    """(team, channel) of active channels whose import from ``source`` started and has not finished."""
    rows = conn.execute(
        """
        SELECT k.team_id, k.channel_id FROM import_checkpoints k
          JOIN channel_settings s USING (team_id, channel_id)
         WHERE k.source = %(s)s AND k.completed_at IS NULL AND s.active
         ORDER BY k.started_at
        """,
        {"s": source},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def history_being_read(conn: psycopg.Connection, team_id: str, channel_id: str) -> bool:
    """The channel's history is still being read through the group space's API (queued or under way)."""
    checkpoint = load_checkpoint(conn, team_id, channel_id, HISTORY_SOURCE)
    return checkpoint is not None and checkpoint.completed_at is None


def load_unreturned_shares(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    oldest: datetime,
    newest: datetime,
    returned: Sequence[str],
) -> list[str]:
    """The ts of the channel's stored messages outside threads' replies posted from ``oldest`` up to (not at)
    ``newest`` that are not among ``returned`` (what a read of that span of the history gave). A digest's
    papers' keys are not listed: they go with their digest."""
    rows = conn.execute(
        """
        SELECT ts FROM messages
         WHERE team_id = %(t)s AND channel_id = %(c)s AND NOT is_reply AND position('/' in ts) = 0
           AND posted_at >= %(oldest)s AND posted_at < %(newest)s AND NOT ts = ANY(%(returned)s::text[])
         ORDER BY ts
        """,
        {"t": team_id, "c": channel_id, "oldest": oldest, "newest": newest, "returned": list(returned)},
    ).fetchall()
    return [r[0] for r in rows]


def load_unreturned_replies(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    roots: Sequence[str],
    newest: datetime,
    returned: Sequence[str],
) -> list[str]:
    """The ts of the stored replies in these threads posted up to ``newest`` that are not among ``returned``
    (what a read of the threads gave)."""
    if not roots:
        return []
    rows = conn.execute(
        """
        SELECT ts FROM messages
         WHERE team_id = %(t)s AND channel_id = %(c)s AND is_reply AND thread_ts = ANY(%(roots)s::text[])
           AND posted_at <= %(newest)s AND NOT ts = ANY(%(returned)s::text[])
         ORDER BY ts
        """,
        {"t": team_id, "c": channel_id, "roots": list(roots), "newest": newest, "returned": list(returned)},
    ).fetchall()
    return [r[0] for r in rows]
