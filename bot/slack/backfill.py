"""Backfill a channel's history through the Slack Web API, checkpointed so a killed process resumes.

``conversations.history`` pages (newest first) give the messages that share papers; each page is written
together with the cursor of the next one. Then ``conversations.replies`` fetches the threads of those
messages, each thread written with the list of threads still to do. ``429`` answers are waited out as
``Retry-After`` says; when the workspace gives only 15 messages a page (Slack's tier for non-Marketplace
apps), the backfill slows to one request a minute instead of failing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from slack_sdk import WebClient

from bot.slack.members import read_members
from bot.slack.pacer import HistoryPacer
from bot.slack.payloads import channel_from_slack, member_from_slack, message_from_slack
from socialrag import storage
from socialrag.db import Database
from socialrag.errors import BadRecord, InputError, SourceError
from socialrag.knowledge import IndexStats, ThreadTracker, index_messages
from socialrag.models import Channel, Message

log = logging.getLogger(__name__)

SOURCE = storage.checkpoints.HISTORY_SOURCE  # where a channel's history read stopped


@dataclass
class BackfillReport:
    channel: Channel
    pages: int = 0
    threads: int = 0
    resumed: bool = False
    stats: IndexStats = field(default_factory=IndexStats)


def _page_messages(data: Any, channel: Channel, domain: str | None, tracker: ThreadTracker) -> list[Message]:
    kept = []
    for position, raw in enumerate(data.get("messages") or (), 1):
        try:
            m = (
                message_from_slack(raw, channel.team_id, channel.channel_id, domain=domain)
                if isinstance(raw, dict)
                else None
            )
        except BadRecord as exc:
            log.warning("#%s: message %d of a history page: %s; skipped", channel.name, position, exc)
            continue
        if m is not None and tracker.keep(m):
            kept.append(m)
    return kept


def backfill_channel(
    db: Database,
    client: WebClient,
    channel_id: str,
    *,
    pacer: HistoryPacer | None = None,
    restart: bool = False,
) -> BackfillReport:
    """Import one channel's papers, threads and reactions from the Web API, resuming a saved checkpoint."""
    pacer = pacer or HistoryPacer()
    auth = pacer.call(client.auth_test)
    team_id = str(auth["team_id"])
    domain = str(auth.get("url") or "").removeprefix("https://").split(".slack.com")[0] or None
    info = pacer.call(client.conversations_info, channel=channel_id)
    channel = channel_from_slack(info["channel"], team_id)
    if channel is None:
        raise InputError(f"Slack did not describe channel {channel_id}")
    # each (re)join reads the members and replaces the stored list: one who left meanwhile is no longer one
    members = read_members(pacer.call, client, channel_id)
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, team_id, name=auth.get("team"), domain=domain)
        storage.workspaces.upsert_channel(conn, channel if members is None else replace(channel, member_ids=()))
        if members is not None:
            storage.workspaces.replace_channel_members(conn, team_id, channel_id, members, datetime.now(UTC))
        saved = None if restart else storage.checkpoints.load_checkpoint(conn, team_id, channel.channel_id, SOURCE)
        tracker = ThreadTracker(storage.messages.load_thread_roots(conn, team_id, channel.channel_id))
    report = BackfillReport(channel)
    state: dict[str, Any] = {"phase": "history", "threads": [], "users": []}
    cursor: str | None = None
    if saved and not saved.completed_at:
        state, cursor, report.resumed = dict(saved.state), saved.cursor, True
        log.info("resuming the backfill of #%s at %s", channel.name, state.get("phase"))
    run = _Run(db, client, channel, domain, tracker, pacer, report, state)
    if state["phase"] == "history":
        _history(run, cursor)
    _threads(run)
    _members(db, client, team_id, pacer, state)
    with db.connection() as conn:
        storage.checkpoints.record_checkpoint(conn, team_id, channel.channel_id, SOURCE, None, state, completed=True)
    return report


@dataclass
class _Run:
    """One backfill in progress: where it reads, where it writes, and its checkpointed state."""

    db: Database
    client: WebClient
    channel: Channel
    domain: str | None
    tracker: ThreadTracker
    pacer: HistoryPacer
    report: BackfillReport
    state: dict[str, Any]

    def fetch(self, method: Callable[..., Any], **kwargs: Any) -> tuple[list[Message], str | None]:
        """One page: the messages to keep and the cursor of the next page (None at the end)."""
        asked = self.pacer.page_size
        data = self.pacer.call(method, channel=self.channel.channel_id, limit=asked, **kwargs)
        self.pacer.after_page(asked, len(data.get("messages") or ()), bool(data.get("has_more")))
        kept = _page_messages(data, self.channel, self.domain, self.tracker)
        return kept, (data.get("response_metadata") or {}).get("next_cursor") or None

    def save(self, kept: list[Message], cursor: str | None) -> None:
        """Write a page's messages together with the checkpoint that says what comes next. A member on the
        forget list is never written into it."""
        team = self.channel.team_id
        with self.db.connection() as conn:
            forgotten = storage.privacy.load_forgotten(conn, [team])
            users = {*self.state["users"], *_users(kept)}
            self.state["users"] = sorted(u for u in users if (team, u) not in forgotten)
            self.report.stats.add(index_messages(conn, kept))
            storage.checkpoints.record_checkpoint(conn, team, self.channel.channel_id, SOURCE, cursor, self.state)


def _history(run: _Run, cursor: str | None) -> None:
    while True:
        kept, next_cursor = run.fetch(run.client.conversations_history, cursor=cursor)
        run.state["threads"] += [m.ts for m in kept if m.reply_count and not m.is_reply]
        if next_cursor is None:
            run.state["phase"] = "threads"
        run.save(kept, next_cursor)
        run.report.pages += 1
        if next_cursor is None:
            return
        cursor = next_cursor


def _threads(run: _Run) -> None:
    while run.state["threads"]:
        root = run.state["threads"][0]
        cursor: str | None = None
        kept: list[Message] = []
        while True:
            page, cursor = run.fetch(run.client.conversations_replies, ts=root, cursor=cursor)
            kept += [m for m in page if m.is_reply]
            if cursor is None:
                break
        run.state["threads"] = run.state["threads"][1:]
        run.save(kept, None)
        run.report.threads += 1


def _users(messages: list[Message]) -> set[str]:
    found = {m.user_id for m in messages if m.user_id and m.user_id.startswith(("U", "W"))}
    return found | {r.user_id for m in messages for r in m.reactions}


def _members(db: Database, client: WebClient, team_id: str, pacer: HistoryPacer, state: dict[str, Any]) -> None:
    with db.connection() as conn:
        known = storage.workspaces.load_member_ids(conn, team_id)
        forgotten = storage.privacy.load_forgotten(conn, [team_id])
    members = []
    for user_id in state["users"]:
        if user_id in known or (team_id, user_id) in forgotten:  # Slack is not asked about a forgotten member
            continue
        try:
            data = pacer.call(client.users_info, user=user_id)
        except SourceError as exc:
            log.warning("users.info %s: %s", user_id, exc)
            continue
        member = member_from_slack(data["user"], team_id)
        if member:
            members.append(member)
    with db.connection() as conn:
        storage.workspaces.upsert_members(conn, members)
        storage.workspaces.update_team_timezone(conn, team_id)
