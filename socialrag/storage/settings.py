"""Channel and member settings as typed rows, and each channel's reading of emoji.

Each settings table has one list of fields, the dataclass below: its defaults are what a channel or member
without a row gets, and its field names are the only columns a caller may set.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from socialrag.models import Sentiment, Style
from socialrag.storage.locks import hold_forget_lists, hold_lock
from socialrag.storage.privacy import FORMER_STEWARD, is_forgotten

DEFAULT_SOURCES = ("catalog", "semanticscholar", "arxiv", "openalex", "biorxiv", "medrxiv", "pubmed")


@dataclass(frozen=True)
class ChannelSettings:
    """One channel's settings (``channel_settings``); a channel without a row has these defaults."""

    style: Style | None = None
    sources: list[str] = field(default_factory=lambda: list(DEFAULT_SOURCES))
    frequency: str = "every-other-day"
    paused: bool = False
    timezone: str | None = None
    post_start_hour: int = 9
    post_end_hour: int = 17
    weekdays_only: bool = True
    active: bool = False
    next_post_at: datetime | None = None
    last_post_at: datetime | None = None
    step_down_reason: str | None = None
    focus_text: str | None = None
    focus_expires_at: datetime | None = None
    slot_at: datetime | None = None
    failures: int = 0
    stopped_reason: str | None = None
    report_monthly: bool = False
    report_last_at: datetime | None = None
    arxiv_categories: list[str] = field(default_factory=list)
    focus_paper_ids: list[int] = field(default_factory=list)
    empty_reason: str | None = None
    empty_at: datetime | None = None
    activated_at: datetime | None = None
    invited_by: str | None = None  # the member who invited PaperPing into the channel
    locked: bool = False  # settings changed only by that member and the workspace's admins
    report_claimed_until: datetime | None = None
    report_retry_at: datetime | None = None
    report_failures: int = 0
    report_stopped_reason: str | None = None
    report_asked_at: datetime | None = None  # the last on-demand report
    report_uploading_at: datetime | None = None  # the monthly report's upload began (cleared once it is settled)
    export_asked_at: datetime | None = None  # the last `/paperping export`
    post_asked_at: datetime | None = None  # the last post asked for now (`now`, `start-over`), whatever came of it
    zotero_group_id: str | None = None  # the Zotero group library saved papers go to (`/paperping zotero`)
    zotero_collection: str | None = None  # and the collection in it (None: the library's top level)
    share_context: bool = False  # a short reply with context on each paper a member shares (`/paperping context`)
    digest_size: int | None = None  # papers in the weekly digest (frequency `weekly-digest`); None: single posts
    explanation_length: str = "normal"  # `short` or `normal` (`/paperping length`)
    language: str | None = None  # the language the `llm` style writes in (`/paperping language`); None: English
    # what members named for the new sources: {"biorxiv": [categories], "medrxiv": [...], "pubmed": "query"}
    source_terms: dict[str, Any] = field(default_factory=dict)
    sources_chosen: bool = False  # members set the sources (each then runs as named; else the defaults' rules)
    follow_ups: bool = True  # replies in a shared paper's thread when it is published, updated or built on
    fulltext: bool = True  # PaperPing reads the open-access full text of the channel's papers (`/paperping fulltext`)


@dataclass(frozen=True)
class MemberSettings:
    """One member's own controls (``member_settings``): mentions on or off, the linked Semantic Scholar author
    id or ORCID, and the author names they confirmed as their own."""

    mentions_enabled: bool = True
    s2_author_id: str | None = None
    orcid: str | None = None
    confirmed_names: list[str] = field(default_factory=list)
    picks_enabled: bool = False  # a weekly direct message of papers for this member (`/paperping for-me`)
    picks_next_at: datetime | None = None  # when the next one is due
    picks_stopped_reason: str | None = None  # why Slack's refusal stopped them (until `for-me on` again)
    picks_attempt_at: datetime | None = None  # a DM whose answer Slack never gave: when it was tried
    my_papers_channels: list[str] = field(default_factory=list)  # channels that hear of their new papers


_TABLES: dict[type, tuple[str, str]] = {
    ChannelSettings: ("channel_settings", "channel_id"),
    MemberSettings: ("member_settings", "user_id"),
}


def _columns(kind: type) -> list[str]:
    return [f.name for f in fields(kind)]


def _load_settings(conn: psycopg.Connection, kind: type, team_id: str, key: str) -> Any:
    table, key_column = _TABLES[kind]
    columns = _columns(kind)
    row = conn.execute(
        # table and column names come from the dataclass and _TABLES, never from input
        f"SELECT {', '.join(columns)} FROM {table} WHERE team_id = %(t)s AND {key_column} = %(k)s",
        {"t": team_id, "k": key},
    ).fetchone()
    if row is None:
        return kind()
    values = dict(zip(columns, row, strict=True))
    return kind(**{k: list(v) if isinstance(v, list | tuple) else v for k, v in values.items()})


def _upsert_settings(conn: psycopg.Connection, kind: type, team_id: str, key: str, values: dict[str, Any]) -> None:
    table, key_column = _TABLES[kind]
    unknown = set(values) - set(_columns(kind))
    if unknown:
        raise ValueError(f"unknown {table.replace('_', ' ')}: {', '.join(sorted(unknown))}")
    columns = list(values)
    updates = [f"{c} = EXCLUDED.{c}" for c in columns] + ["updated_at = now()"]
    conn.execute(
        # one statement; the table and column names are the dataclass's fields (checked above), never input
        f"INSERT INTO {table} (team_id, {key_column}{''.join(', ' + c for c in columns)})"
        f" VALUES (%(_t)s, %(_k)s{''.join(f', %({c})s' for c in columns)})"
        f" ON CONFLICT (team_id, {key_column}) DO " + ("UPDATE SET " + ", ".join(updates) if columns else "NOTHING"),
        {"_t": team_id, "_k": key, **{k: Jsonb(v) if isinstance(v, dict) else v for k, v in values.items()}},
    )


def load_channel_settings(conn: psycopg.Connection, team_id: str, channel_id: str) -> ChannelSettings:
    """The channel's settings (defaults when it has none yet)."""
    found: ChannelSettings = _load_settings(conn, ChannelSettings, team_id, channel_id)
    return found


# the channel's asks with a cooldown: `now` (and a focus's first post), `export`, `report`
ASKS = ("post_asked_at", "export_asked_at", "report_asked_at")


def take_ask(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    now: datetime,
    cooldown: timedelta,
    column: str = "post_asked_at",
) -> datetime | None:
    """Note a member's ask now in the channel (None: noted, go ahead), or when the last ask was, while it is
    younger than ``cooldown``; ``column`` (one of ``ASKS``) says which ask. One statement: two asks at once never
    both go ahead, whichever of their times is the earlier (each is its own arrival's). Only an ask noted more than
    ``cooldown`` ahead of ``now`` (a clock set back since) is not waited for."""
    if column not in ASKS:
        raise ValueError(f"unknown ask {column!r}")
    params = {"t": team_id, "c": channel_id, "now": now, "since": now - cooldown, "ahead": now + cooldown}
    row = conn.execute(  # the column is one of ASKS (checked above), never input
        f"""
        INSERT INTO channel_settings (team_id, channel_id, {column}) VALUES (%(t)s, %(c)s, %(now)s)
        ON CONFLICT (team_id, channel_id) DO UPDATE SET {column} = EXCLUDED.{column}, updated_at = now()
         WHERE channel_settings.{column} IS NULL OR channel_settings.{column} <= %(since)s
            OR channel_settings.{column} > %(ahead)s
        RETURNING {column}
        """,
        params,
    ).fetchone()
    if row is not None:
        return None
    held = conn.execute(
        f"SELECT {column} FROM channel_settings WHERE team_id = %(t)s AND channel_id = %(c)s", params
    ).fetchone()
    return held[0] if held else None


def give_back_ask(conn: psycopg.Connection, team_id: str, channel_id: str, taken: datetime, column: str) -> None:
    """Undo ``take_ask`` when nothing came of the ask, unless a later ask has taken it since."""
    if column not in ASKS:
        raise ValueError(f"unknown ask {column!r}")
    conn.execute(  # the column is one of ASKS (checked above), never input
        f"UPDATE channel_settings SET {column} = NULL"
        f" WHERE team_id = %(t)s AND channel_id = %(c)s AND {column} = %(at)s",
        {"t": team_id, "c": channel_id, "at": taken},
    )


def load_member_setting(conn: psycopg.Connection, team_id: str, user_id: str) -> MemberSettings:
    """A member's own controls (defaults when they set none)."""
    found: MemberSettings = _load_settings(conn, MemberSettings, team_id, user_id)
    return found


def move_next_post(
    conn: psycopg.Connection, team_id: str, channel_id: str, seen: datetime | None, to: datetime
) -> bool:
    """Move the channel's next post to ``to``, unless a slot is open (a post under way or asked for now) or the
    next post moved since it was read as ``seen`` (a worker took the slot meanwhile)."""
    return (
        conn.execute(
            """
            UPDATE channel_settings SET next_post_at = %(to)s
             WHERE team_id = %(t)s AND channel_id = %(c)s AND slot_at IS NULL
               AND next_post_at IS NOT DISTINCT FROM %(seen)s
            """,
            {"t": team_id, "c": channel_id, "seen": seen, "to": to},
        ).rowcount
        > 0
    )


def upsert_channel_setting(conn: psycopg.Connection, team_id: str, channel_id: str, **values: Any) -> None:
    """Set some of a channel's settings (any field of ``ChannelSettings``)."""
    _upsert_settings(conn, ChannelSettings, team_id, channel_id, values)


def record_inviter(conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str) -> None:
    """The member who invited PaperPing into the channel, its steward: set once, by the first invitation. A
    member who removes PaperPing and invites it back does not take the steward's place (an admin can change
    anything). A member on the workspace's forget list is not kept: the channel is steered by its workspace's
    admins, as after their forget-me (``FORMER_STEWARD``)."""
    hold_forget_lists(conn, [team_id])
    conn.execute(
        """
        INSERT INTO channel_settings (team_id, channel_id, invited_by)
        VALUES (%(t)s, %(c)s,
                CASE WHEN EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
                     THEN %(former)s ELSE %(u)s END)
        ON CONFLICT (team_id, channel_id) DO UPDATE
            SET invited_by = COALESCE(channel_settings.invited_by, EXCLUDED.invited_by), updated_at = now()
        """,
        {"t": team_id, "c": channel_id, "u": user_id, "former": FORMER_STEWARD},
    )


def upsert_member_setting(conn: psycopg.Connection, team_id: str, user_id: str, **values: Any) -> bool:
    """Set some of a member's own settings (any field of ``MemberSettings``). False: nothing is kept, the member is
    on the workspace's forget list."""
    hold_forget_lists(conn, [team_id])
    if is_forgotten(conn, (team_id,), user_id):
        return False
    _upsert_settings(conn, MemberSettings, team_id, user_id, values)
    return True


def claim_picks_attempt(conn: psycopg.Connection, team_id: str, user_id: str, now: datetime) -> datetime | None:
    """Mark a try of the member's picks under way from ``now``, unless one is already (another process's at
    work, or one whose answer never came): None when this one is marked, else the try found. Under the row's
    lock, so that the weekly run and `for-me now` at the same moment never both send."""
    hold_forget_lists(conn, [team_id])
    row = conn.execute(
        "SELECT picks_attempt_at FROM member_settings WHERE team_id = %(t)s AND user_id = %(u)s FOR UPDATE",
        {"t": team_id, "u": user_id},
    ).fetchone()
    if row is not None and row[0] is not None:
        return row[0]
    upsert_member_setting(conn, team_id, user_id, picks_attempt_at=now)
    return None


def load_emoji_overrides(conn: psycopg.Connection, team_id: str, channel_id: str) -> dict[str, Sentiment]:
    rows = conn.execute(
        "SELECT emoji, sentiment FROM emoji_sentiments WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"t": team_id, "c": channel_id},
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def upsert_emoji_override(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    emoji: str,
    sentiment: Sentiment,
    *,
    most: int | None = None,
) -> bool:
    """Set how the channel reads an emoji by hand; False (nothing set) when it reads ``most`` others by hand
    already. Counted under the channel's lock, so members setting readings at once never pass it."""
    params = {"t": team_id, "c": channel_id, "e": emoji, "s": sentiment, "most": most}
    hold_lock(conn, f"emoji:{team_id}:{channel_id}")
    cur = conn.execute(
        """
        INSERT INTO emoji_sentiments (team_id, channel_id, emoji, sentiment)
        SELECT %(t)s, %(c)s, %(e)s, %(s)s
         WHERE %(most)s::int IS NULL
            OR (SELECT count(*) FROM emoji_sentiments
                 WHERE team_id = %(t)s AND channel_id = %(c)s AND emoji <> %(e)s) < %(most)s::int
        ON CONFLICT (team_id, channel_id, emoji) DO UPDATE SET sentiment = EXCLUDED.sentiment, updated_at = now()
        """,
        params,
    )
    return cur.rowcount > 0


def delete_emoji_override(conn: psycopg.Connection, team_id: str, channel_id: str, emoji: str) -> None:
    """Forget the reading a member set by hand: the learnt one, or the default, applies again."""
    conn.execute(
        "DELETE FROM emoji_sentiments WHERE team_id = %(t)s AND channel_id = %(c)s AND emoji = %(e)s",
        {"t": team_id, "c": channel_id, "e": emoji},
    )


def schedule_first_post(conn: psycopg.Connection, team_id: str, channel_id: str, at: datetime) -> None:
    """A channel PaperPing just joined: its first slot, unless one is already set."""
    conn.execute(
        "UPDATE channel_settings SET next_post_at = COALESCE(next_post_at, %(at)s)"
        " WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"at": at, "t": team_id, "c": channel_id},
    )
