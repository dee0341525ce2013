"""What the Slack listeners share: settings, the database, the recommender, and small Slack look-ups."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.pacing import SlackPacer
from bot.slack_io import channel_from_slack
from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.models import Channel
from socialrag.recommender import next_slot

log = logging.getLogger(__name__)


FEW_SHARES = 5  # below this, a channel is asked for a focus to start from


def history_note(papers: int, first_share_at: datetime | None) -> str:
    """What PaperPing tells a channel once its history is read (Slack's free plan shows apps 90 days of it)."""
    since = f" since {first_share_at:%d %b %Y}" if first_share_at else ""
    found = f"I read this channel's history: {papers} paper{'s' if papers != 1 else ''} shared here{since}."
    if papers >= FEW_SHARES:
        return f"{found} I'm looking them up now; `/paperping status` shows how far I am and when I post next."
    return (
        f"{found} That is little to go on (on Slack's free plan, apps can read only the last 90 days). Tell me "
        "what to look for: `/paperping focus` with topic words or a few paper links, or "
        "`/paperping sources arxiv cs.CL` for new arXiv papers in those categories."
    )


@dataclass
class AppContext:
    settings: Settings
    db: Database
    pacer: SlackPacer = field(default_factory=SlackPacer)  # the one pace of Slack calls in this process
    _bot_users: dict[str, str] = field(default_factory=dict)
    _domains: dict[str, str | None] = field(default_factory=dict)
    _known_channels: set[tuple[str, str]] = field(default_factory=set)
    # set by `paperping run`: wakes this process's scheduler so that `/paperping now` posts at once
    wake_scheduler: Callable[[], None] | None = None
    # set by `paperping run`: wakes this process's indexer so that focus links are looked up at once
    wake_indexer: Callable[[], None] | None = None

    def bot_user_id(self, client: WebClient, team_id: str) -> str | None:
        if team_id not in self._bot_users:
            auth = client.auth_test()
            self._bot_users[team_id] = str(auth.get("user_id") or "")
            domain = str(auth.get("url") or "").removeprefix("https://").split(".slack.com")[0] or None
            self._domains[team_id] = domain
            with self.db.connection() as conn:
                storage.workspaces.upsert_team(conn, team_id, name=auth.get("team"), domain=domain)
        return self._bot_users[team_id] or None

    def domain(self, team_id: str) -> str | None:
        if team_id not in self._domains:
            with self.db.connection() as conn:
                self._domains[team_id] = storage.workspaces.load_team_domain(conn, team_id)
        return self._domains[team_id]

    def ensure_channel(self, client: WebClient, team_id: str, channel_id: str) -> None:
        """The workspace and channel rows, created on first sight (their name from ``conversations.info``)."""
        if (team_id, channel_id) in self._known_channels:
            return
        with self.db.connection() as conn:
            known = any(c[:2] == (team_id, channel_id) for c in storage.workspaces.find_channels(conn, channel_id))
        if not known:
            self.bot_user_id(client, team_id)
            try:
                info = client.conversations_info(channel=channel_id)["channel"]
                channel = channel_from_slack(info, team_id) or Channel(team_id, channel_id, channel_id)
            except SlackApiError as exc:
                log.warning("conversations.info %s: %s", channel_id, exc.response.get("error"))
                channel = Channel(team_id, channel_id, channel_id)
            with self.db.connection() as conn:
                storage.workspaces.upsert_team(conn, team_id)
                storage.workspaces.upsert_channel(conn, channel)
        self._known_channels.add((team_id, channel_id))

    def is_member(self, client: WebClient, channel_id: str) -> bool:
        """Whether PaperPing is in the channel (``conversations.info``'s ``is_member``). A private channel it is
        not in answers ``channel_not_found``; when Slack cannot say, it is taken to be in."""
        try:
            info = client.conversations_info(channel=channel_id)["channel"]
        except SlackApiError as exc:
            return exc.response.get("error") not in ("channel_not_found", "not_in_channel")
        return bool(info.get("is_member", True))

    def activate_channel(self, team_id: str, channel_id: str, now: datetime | None = None) -> None:
        """PaperPing is in the channel: schedule its first post (settings keep their defaults)."""
        now = now or datetime.now(UTC)
        with self.db.connection() as conn:
            current = storage.settings.load_channel_settings(conn, team_id, channel_id)
            storage.settings.upsert_channel_setting(
                conn,
                team_id,
                channel_id,
                active=True,
                stopped_reason=None,
                failures=0,
                activated_at=current.activated_at if current.active else now,
            )
            first = next_slot(
                now,
                None,
                current.frequency,
                current.timezone,
                current.post_start_hour,
                current.post_end_hour,
                current.weekdays_only,
            )
            storage.settings.schedule_first_post(conn, team_id, channel_id, first)

    def queue_backfill(self, team_id: str, channel_id: str) -> None:
        """Note that the channel's history is to be read, before reading starts, so that a restarted process
        finishes it (``resume_backfills``)."""
        from bot.backfill import SOURCE

        with self.db.connection() as conn:
            saved = storage.checkpoints.load_checkpoint(conn, team_id, channel_id, SOURCE)
            if saved is None or saved["completed_at"] is not None:
                state = {"phase": "history", "threads": [], "users": []}
                storage.checkpoints.record_checkpoint(conn, team_id, channel_id, SOURCE, None, state)

    def backfill(self, client: WebClient, team_id: str, channel_id: str) -> None:
        """The channel's history, in the background after joining; failures are logged, not raised."""
        from bot.backfill import backfill_channel

        try:
            report = backfill_channel(self.db, client, channel_id)
            log.info("backfilled #%s: %s", report.channel.name, report.stats)
            self.say_what_was_read(client, team_id, channel_id)
        except (PaperPingError, SlackApiError, OSError) as exc:
            log.warning("backfill of %s failed: %s", channel_id, exc)
        except Exception:
            log.exception("backfill of %s failed", channel_id)

    def say_what_was_read(self, client: WebClient, team_id: str, channel_id: str) -> None:
        """After the history is read: how much, and with little history, how to give PaperPing a start."""
        with self.db.connection() as conn:
            counts = storage.messages.load_channel_counts(conn, team_id, channel_id)
            first = storage.messages.load_first_share_at(conn, team_id, channel_id)
        self.pacer.post(client.chat_postMessage, channel=channel_id, text=history_note(counts["papers"], first))

    def resume_backfills(self, client_for: Callable[[str], WebClient]) -> list[threading.Thread]:
        """Finish, in the background, the backfills a stopped process left unfinished."""
        from bot.backfill import SOURCE

        with self.db.connection() as conn:
            pending = storage.checkpoints.load_unfinished_imports(conn, SOURCE)
        threads = []
        for team_id, channel_id in pending:
            try:
                client = client_for(team_id)
            except PaperPingError as exc:
                log.warning("cannot resume the backfill of %s: %s", channel_id, exc)
                continue
            log.info("resuming the backfill of %s", channel_id)
            thread = threading.Thread(
                target=self.backfill, args=(client, team_id, channel_id), daemon=True, name=f"backfill-{channel_id}"
            )
            thread.start()
            threads.append(thread)
        return threads

    def mark_handled(self, body: dict[str, Any]) -> None:
        """Remember that an event was handled, so that Slack's resend of it is dropped (``Deduplicate``)."""
        event_id = body.get("event_id")
        if event_id:
            with self.db.connection() as conn:
                storage.slack_events.record_event(conn, str(event_id), body.get("team_id"))

    def index_soon(self) -> None:
        """Ask the indexer to look now (a member is waiting on it); without one, its next run does it."""
        if self.wake_indexer is not None:
            self.wake_indexer()

    def post_soon(self, team_id: str, channel_id: str) -> None:
        """Ask the scheduler to look now (the channel was made due); without one, the next tick posts."""
        if self.wake_scheduler is not None:
            self.wake_scheduler()
