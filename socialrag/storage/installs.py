"""Queries of workspace installations (OAuth): one row per workspace, and one-time OAuth ``state`` values."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg


def upsert_installation(conn: psycopg.Connection, values: dict[str, Any]) -> None:
    """``values``: team_id, team_name, bot_token, bot_user_id, bot_id, installer_id, scopes. The installer is not
    kept when they are on the workspace's forget list (as forget-me clears it)."""
    conn.execute(
        """
        INSERT INTO installations (team_id, team_name, bot_token, bot_user_id, bot_id, installer_id, scopes)
        VALUES (%(team_id)s, %(team_name)s, %(bot_token)s, %(bot_user_id)s, %(bot_id)s,
                CASE WHEN EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(team_id)s
                                     AND user_id = %(installer_id)s) THEN NULL ELSE %(installer_id)s END,
                %(scopes)s)
        ON CONFLICT (team_id) DO UPDATE SET team_name = EXCLUDED.team_name, bot_token = EXCLUDED.bot_token,
            bot_user_id = EXCLUDED.bot_user_id, bot_id = EXCLUDED.bot_id, installer_id = EXCLUDED.installer_id,
            scopes = EXCLUDED.scopes, installed_at = now()
        """,
        values,
    )


@dataclass(frozen=True)
class InstallationRow:
    """A workspace's installation of PaperPing, its bot token as stored (encrypted)."""

    team_id: str
    team_name: str | None
    bot_token: str
    bot_user_id: str | None
    bot_id: str | None
    installed_at: datetime


def load_installation(conn: psycopg.Connection, team_id: str | None) -> InstallationRow | None:
    row = conn.execute(
        "SELECT team_id, team_name, bot_token, bot_user_id, bot_id, installed_at FROM installations"
        " WHERE team_id = %(t)s",
        {"t": team_id},
    ).fetchone()
    if row is None:
        return None
    return InstallationRow(*row)


def delete_installation(conn: psycopg.Connection, team_id: str | None) -> None:
    conn.execute("DELETE FROM installations WHERE team_id = %(t)s", {"t": team_id})


def installed_since(conn: psycopg.Connection, team_id: str, when: datetime) -> bool:
    """Whether the workspace's installation was made (or made again) at ``when`` or later."""
    row = conn.execute(
        "SELECT 1 FROM installations WHERE team_id = %(t)s AND installed_at >= %(w)s", {"t": team_id, "w": when}
    ).fetchone()
    return row is not None


def use_oauth_state(conn: psycopg.Connection, state: str, expires_at: datetime) -> bool:
    """Record a valid OAuth state as used (``oauth_states`` holds the states that came back, until they
    expire); True the first time, False if it was used before."""
    conn.execute("DELETE FROM oauth_states WHERE expires_at < now()")
    row = conn.execute(
        "INSERT INTO oauth_states (state, expires_at) VALUES (%(s)s, %(e)s) ON CONFLICT DO NOTHING RETURNING 1",
        {"s": state, "e": expires_at},
    ).fetchone()
    return row is not None


def prune_oauth_states(conn: psycopg.Connection, now: datetime) -> int:
    return conn.execute("DELETE FROM oauth_states WHERE expires_at < %(n)s", {"n": now}).rowcount


def load_stored_tokens(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """(team id, bot token as stored) of every installation."""
    rows = conn.execute("SELECT team_id, bot_token FROM installations ORDER BY team_id").fetchall()
    return [(r[0], r[1]) for r in rows]


def update_bot_token(conn: psycopg.Connection, team_id: str, stored: str) -> None:
    conn.execute("UPDATE installations SET bot_token = %(b)s WHERE team_id = %(t)s", {"b": stored, "t": team_id})
