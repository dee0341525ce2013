"""Channel member lists as Slack says them. Each (re)join and the hourly sweep read ``conversations.members``
and replace the stored list; before anything of a channel reaches a member in private (the personal-picks DM,
App Home), a list older than a day is read again, and a channel whose list cannot be read is left out of what
that member sees (``storage.workspaces.load_member_channels(current=True)``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError

log = logging.getLogger(__name__)

Call = Callable[..., Any]  # a pacer's ``call``: a Web API method with its 429s waited out
SWEEP_LIMIT = 50  # member lists the hourly sweep reads at most
RETRY_AFTER = timedelta(minutes=15)  # a list Slack would not give, asked for again before a member's use after this


def read_members(call: Call, client: WebClient, channel_id: str) -> tuple[str, ...] | None:
    """Every member of the channel (``conversations.members``, all pages); None when Slack would not say (not in
    the channel any more, an error, still rate limited)."""
    found: list[str] = []
    cursor: str | None = None
    for _ in range(100):
        try:
            data = call(client.conversations_members, channel=channel_id, limit=1000, cursor=cursor)
        except (PaperPingError, OSError) as exc:  # Slack's refusal, or no connection to it: not known now
            log.warning("conversations.members %s: %s", channel_id, exc)
            return None
        found += [m for m in data.get("members") or () if isinstance(m, str)]
        cursor = (data.get("response_metadata") or {}).get("next_cursor") or None
        if cursor is None:
            return tuple(found)
    return None


def refresh_members(db: Database, call: Call, client: WebClient, team_id: str, channel_id: str, now: datetime) -> bool:
    """Read the channel's members and replace the stored list; False when Slack would not say (the old list
    stays, and stays stale)."""
    members = read_members(call, client, channel_id)
    if members is None:
        return False
    with db.connection() as conn:
        dropped = storage.workspaces.replace_channel_members(conn, team_id, channel_id, members, now)
    if dropped:
        log.info("%s: %d stored members are no longer in the channel", channel_id, dropped)
    return True


def refresh_for_member(
    db: Database,
    call: Call,
    client: WebClient,
    team_id: str,
    user_id: str,
    now: datetime,
    *,
    channel_id: str | None = None,
    limit: int = SWEEP_LIMIT,
) -> None:
    """Before something reaches a member in private: read again the lists of their channels older than a day (with
    ``channel_id``, that channel's only), ``limit`` at most (the hourly sweep reads the others). Each try is noted:
    a list Slack would not give is not asked for again within ``RETRY_AFTER``, however many members ask meanwhile
    (what is stored is used, as when the read fails)."""
    with db.connection() as conn:
        stale = storage.workspaces.load_stale_member_lists(
            conn,
            now - storage.workspaces.MEMBER_LIST_FRESH,
            team_id=team_id,
            user_id=user_id,
            tried_before=now - RETRY_AFTER,
        )
    wanted = [(team, channel) for team, channel in stale if channel_id is None or channel == channel_id]
    for team, channel in wanted[:limit]:
        with db.connection() as conn:
            storage.workspaces.record_member_list_try(conn, team, channel, now)
        refresh_members(db, call, client, team, channel, now)


def refresh_stale_lists(db: Database, call: Call, client_for: Callable[[str], WebClient], now: datetime) -> int:
    """The hourly sweep: read again the member lists older than a day (``SWEEP_LIMIT`` at most, those tried longest
    ago first); how many. Each try is noted, read or not: a list Slack never gives waits behind the others."""
    with db.connection() as conn:
        stale = storage.workspaces.load_stale_member_lists(conn, now - storage.workspaces.MEMBER_LIST_FRESH)
    done = 0
    for team, channel in stale[:SWEEP_LIMIT]:
        with db.connection() as conn:
            storage.workspaces.record_member_list_try(conn, team, channel, now)
        try:
            client = client_for(team)
        except PaperPingError as exc:
            log.warning("member list of %s: %s", channel, exc)
            continue
        done += refresh_members(db, call, client, team, channel, now)
    return done


def refresh_team_lists(db: Database, call: Call, client: WebClient, team_id: str, now: datetime) -> int:
    """Read again the member lists of the workspace's active channels (``SWEEP_LIMIT`` at most), whatever their
    age: after `remember-me`, a member is in the channels Slack says again. Returns how many were read."""
    with db.connection() as conn:
        channels = storage.workspaces.load_stale_member_lists(conn, None, team_id=team_id)
    return sum(refresh_members(db, call, client, team, channel, now) for team, channel in channels[:SWEEP_LIMIT])
