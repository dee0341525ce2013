"""Backfill a channel's history through the Slack Web API, checkpointed so a killed process resumes.

``conversations.history`` pages (newest first) give the messages that share papers; each page is written
together with the cursor of the next one. Then ``conversations.replies`` fetches the threads of those
messages, each page of a thread written with the list of threads still to do and where that thread stands.
``429`` answers are waited out as ``Retry-After`` says; when the workspace gives only 15 messages a page (Slack's
tier for non-Marketplace apps), the backfill slows to one request a minute instead of failing.

Every read goes through the whole history Slack gives, so it also tells what was deleted while PaperPing was not
listening: a stored message within the span a page covers that the page did not return, and a stored reply its
thread no longer has, is noted in the checkpoint; when the read completes, those leave the base as a deletion
does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from slack_sdk import WebClient

from bot.slack.members import read_members
from bot.slack.pacer import HistoryPacer
from bot.slack.payloads import channel_from_slack, member_from_slack, message_from_slack, parse_ts
from socialrag import knowledge, storage
from socialrag.db import Database
from socialrag.errors import BadRecord, InputError, SourceError
from socialrag.knowledge import IndexStats, ThreadTracker, index_messages
from socialrag.models import Channel, Message

log = logging.getLogger(__name__)

SOURCE = storage.checkpoints.HISTORY_SOURCE  # where a channel's history read stopped
READING_LOCK = 7_301  # the advisory locks, by channel, of history reads under way
Gone = Callable[[psycopg.Connection], list[str]]  # the ts of stored messages a page shows deleted
# how far this machine's clock may be from Slack's: a message posted this close to the start of a read may be one
# the read could not see, so it is never taken for deleted
CLOCK_SKEW = timedelta(minutes=5)
TOMBSTONE = "/tombstone"  # marks a returned ts that is a tombstone: in the page's span, yet not a returned message


@dataclass
class BackfillReport:
    channel: Channel
    pages: int = 0
    threads: int = 0
    resumed: bool = False
    removed: int = 0  # stored messages Slack no longer returned (deleted meanwhile)
    unshared: int = 0  # stored messages that went with a share Slack returned edited to link no paper
    stats: IndexStats = field(default_factory=IndexStats)


def _page_messages(
    data: Any, channel: Channel, domain: str | None, tracker: ThreadTracker
) -> tuple[list[Message], list[Message]]:
    """A page's messages to keep, and those not kept that were edited and link no paper (a stored share among them
    lost its link in an edit PaperPing did not hear: ``knowledge.record_unshared_copies``)."""
    kept, edited = [], []
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
        elif m is not None and (copy := knowledge.unshared_copy(m)) is not None:
            edited.append(copy)
    return kept, edited


def backfill_channel(
    db: Database,
    client: WebClient,
    channel_id: str,
    *,
    pacer: HistoryPacer | None = None,
    restart: bool = False,
) -> BackfillReport:
    """Import one channel's papers, threads and reactions from the Web API, resuming a saved checkpoint. One
    process reads a channel's history at a time: another that is reading it already is an ``InputError``."""
    with db.connection(autocommit=True) as lock:
        if not storage.locks.try_named_lock(lock, READING_LOCK, channel_id):
            raise InputError(f"the history of {channel_id} is already being read by another process")
        try:
            return _backfill(db, client, channel_id, pacer or HistoryPacer(), restart)
        finally:
            storage.locks.release_named_lock(lock, READING_LOCK, channel_id)


def _backfill(db: Database, client: WebClient, channel_id: str, pacer: HistoryPacer, restart: bool) -> BackfillReport:
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
    read_from = (datetime.now(UTC) - CLOCK_SKEW).isoformat()
    state: dict[str, Any] = {"phase": "history", "threads": [], "users": [], "read_from": read_from, "gone": []}
    cursor: str | None = None
    if saved and not saved.completed_at and not _not_begun(saved.state, saved.cursor):
        state, cursor, report.resumed = dict(saved.state), saved.cursor, True
        log.info("resuming the backfill of #%s at %s", channel.name, state.get("phase"))
    run = _Run(db, client, channel, domain, tracker, pacer, report, state)
    if state["phase"] == "history":
        _history(run, cursor)
    _threads(run)
    _members(db, client, team_id, pacer, state)
    _complete(db, report, state)
    return report


def _complete(db: Database, report: BackfillReport, state: dict[str, Any]) -> None:
    """The whole history was read: the stored messages it showed deleted leave the base as a deletion does (a
    read begun before such messages were noted removes nothing), and the checkpoint says the read is done."""
    team, channel = report.channel.team_id, report.channel.channel_id
    gone = state.pop("gone", [])
    state.pop("newest", None)
    with db.connection() as conn:
        report.removed = knowledge.record_deletions(conn, team, channel, gone)
        storage.checkpoints.record_checkpoint(conn, team, channel, SOURCE, None, state, completed=True)
    if report.removed:
        log.info("#%s: %d stored messages are no longer in Slack; removed", report.channel.name, report.removed)
    if report.unshared:
        log.info(
            "#%s: %d stored messages went with shares edited to link no paper", report.channel.name, report.unshared
        )


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
    fetched_at: datetime | None = None  # when the first page not yet saved was asked for, less CLOCK_SKEW
    cursors: set[str | None] = field(default_factory=set)  # the cursors given in this paging (history, a thread)
    edited: list[Message] = field(default_factory=list)  # the edited copies without a link of the pages not saved

    def fetch(self, method: Callable[..., Any], **kwargs: Any) -> tuple[list[Message], str | None, list[str]]:
        """One page: the messages to keep, the cursor of the next page (None at the end), and the ts of every
        message it returned (kept or not; a tombstone, the place of a deleted thread's first message, is marked
        ``TOMBSTONE`` so that the message it stands for is taken for deleted). A cursor this read was given
        before is Slack's error, never read again."""
        asked = self.pacer.page_size
        self.fetched_at = self.fetched_at or datetime.now(UTC) - CLOCK_SKEW
        data = self.pacer.call(method, channel=self.channel.channel_id, limit=asked, **kwargs)
        self.pacer.after_page(asked, len(data.get("messages") or ()), bool(data.get("has_more")))
        cursor = (data.get("response_metadata") or {}).get("next_cursor") or None
        if cursor is not None and (cursor in self.cursors or cursor == kwargs.get("cursor")):
            raise SourceError("slack", f"{method.__name__} gave back a cursor it gave before; the read stops")
        self.cursors.add(cursor)
        kept, edited = _page_messages(data, self.channel, self.domain, self.tracker)
        self.edited += edited
        returned = [
            raw["ts"] + (TOMBSTONE if raw.get("subtype") == "tombstone" else "")
            for raw in data.get("messages") or ()
            if isinstance(raw, dict) and _time(raw.get("ts"))
        ]
        return kept, cursor, returned

    def save(self, kept: list[Message], cursor: str | None, gone: Gone | None = None) -> None:
        """Write a page's messages together with the checkpoint that says what comes next, with the stored
        messages the page shows deleted (``gone``, read on the same connection). A member on the forget list is
        never written into it."""
        team = self.channel.team_id
        with self.db.connection() as conn:
            forgotten = storage.privacy.load_forgotten(conn, [team])
            users = {*self.state["users"], *_users(kept)}
            self.state["users"] = sorted(u for u in users if (team, u) not in forgotten)
            if gone is not None:
                self.state["gone"] = sorted({*self.state["gone"], *gone(conn)})
            self.report.unshared += knowledge.record_unshared_copies(conn, self.edited)
            self.report.stats.add(index_messages(conn, kept, read_at=self.fetched_at))
            self.fetched_at, self.edited = None, []
            storage.checkpoints.record_checkpoint(conn, team, self.channel.channel_id, SOURCE, cursor, self.state)

    def read_from(self) -> datetime | None:
        """When this read began, less ``CLOCK_SKEW``: every message Slack had by then, it returns (None for a
        read begun before this was noted, which takes nothing for deleted)."""
        value = self.state.get("read_from")
        return datetime.fromisoformat(value) if isinstance(value, str) and "gone" in self.state else None

    def gone_from_page(self, kept: list[Message], returned: list[str]) -> Gone | None:
        """What a history page (newest first) shows deleted: the stored messages posted between its oldest
        message and the newer edge of what was read before it (for the first page, the read's start) that it did
        not return, and the stored replies of its shares that have none any more. Nothing older than the oldest
        message the read returned is taken for deleted: Slack may merely hide it (a free workspace's 90 days, a
        history imported from elsewhere), and when it says the channel was made does not tell."""
        read_from, times = self.read_from(), [t for t in (_time(ts.removesuffix(TOMBSTONE)) for ts in returned) if t]
        returned = [ts for ts in returned if not ts.endswith(TOMBSTONE)]
        if read_from is None or not times:
            return None
        newest = self.state.get("newest")
        upper = datetime.fromisoformat(newest) if isinstance(newest, str) else max([read_from, *times])
        oldest = min(times)
        self.state["newest"] = oldest.isoformat()
        bare = [m.ts for m in kept if not m.is_reply and not m.reply_count]
        team, channel = self.channel.team_id, self.channel.channel_id
        return lambda conn: [
            *storage.checkpoints.load_unreturned_shares(conn, team, channel, oldest, upper, returned),
            *storage.checkpoints.load_unreturned_replies(conn, team, channel, bare, read_from, []),
        ]

    def gone_from_thread(self, root: str, returned: list[str]) -> Gone | None:
        """The stored replies of a thread read to its end that it did not return (one posted after the read
        began and after every reply it returned may be newer than the read, and stays)."""
        read_from = self.read_from()
        if read_from is None:
            return None
        upper = max([read_from, *(t for t in map(_time, returned) if t is not None)])
        team, channel = self.channel.team_id, self.channel.channel_id
        return lambda conn: storage.checkpoints.load_unreturned_replies(conn, team, channel, [root], upper, returned)


def _history(run: _Run, cursor: str | None) -> None:
    while True:
        kept, next_cursor, returned = run.fetch(run.client.conversations_history, cursor=cursor)
        run.state["threads"] += [m.ts for m in kept if m.reply_count and not m.is_reply]
        if next_cursor is None:
            run.state["phase"] = "threads"
        run.save(kept, next_cursor, run.gone_from_page(kept, returned))
        run.report.pages += 1
        if next_cursor is None:
            return
        cursor = next_cursor


def _threads(run: _Run) -> None:
    """Read the threads of the shares, each page written with where the thread's read stands (``thread``: its
    cursor and the replies it returned so far), so that a read cut short goes on at that page: on Slack's slow
    tier a thread of thousands of replies takes hours."""
    while run.state["threads"]:
        root = run.state["threads"][0]
        partial = run.state.get("thread") or {}
        resumed = partial.get("root") == root
        cursor: str | None = partial.get("cursor") if resumed else None
        returned: list[str] = list(partial.get("seen") or ()) if resumed else []
        run.cursors = set()  # a thread's cursors are its own
        while True:
            page, cursor, seen = run.fetch(run.client.conversations_replies, ts=root, cursor=cursor)
            returned += seen
            replies = [m for m in page if m.is_reply]
            if cursor is None:
                break
            run.state["thread"] = {"root": root, "cursor": cursor, "seen": returned}
            run.save(replies, None)
        run.state["threads"] = run.state["threads"][1:]
        run.state.pop("thread", None)
        run.save(replies, None, run.gone_from_thread(root, returned))
        run.report.threads += 1


def _not_begun(state: dict[str, Any], cursor: str | None) -> bool:
    """A checkpoint that only notes a read is to come (joining, an invitation: no page read yet): the read starts
    as a new one, so that it also looks for what was deleted."""
    return cursor is None and state.get("phase") == "history" and "gone" not in state


def _time(ts: object) -> datetime | None:
    """A returned message's time, as its stored row has it (None for a ts that is not Slack's)."""
    try:
        return parse_ts(ts)[1]
    except BadRecord:
        return None


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
