"""What PaperPing does when it is in a channel: schedule the first post, read the history (in the background,
resumed after a restart) and tell the channel what it found."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.pacer import SlackPacer
from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.recommender import next_slot

log = logging.getLogger(__name__)


FEW_SHARES = 5  # below this, a channel is asked for a focus to start from
# history reads one process takes up at once from unfinished checkpoints (at a start, then hourly): a workspace of
# thousands of channels is read a few at a time, not with a thread for each
MOST_RESUMED = 8


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


def joined(s: storage.settings.ChannelSettings) -> bool:
    """Whether PaperPing is in the channel by its own arrival: a settings row a command made before PaperPing
    arrived is active by the schema's default but was never activated."""
    return s.active and s.activated_at is not None


@dataclass
class ChannelStarts:
    db: Database
    pacer: SlackPacer
    _reading: set[tuple[str, str]] = field(default_factory=set)  # channels whose history this process reads now
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def is_in(self, team_id: str, channel_id: str) -> bool:
        """Whether the channel is active by PaperPing's own arrival (not only by a settings row a command made)."""
        with self.db.connection() as conn:
            return joined(storage.settings.load_channel_settings(conn, team_id, channel_id))

    def activate(self, team_id: str, channel_id: str, now: datetime | None = None) -> bool:
        """PaperPing is in the channel: schedule its first post (settings keep their defaults). Returns whether
        the channel was inactive until now (a first invitation, or one after PaperPing was removed)."""
        now = now or datetime.now(UTC)
        with self.db.connection() as conn:
            current = storage.settings.load_channel_settings(conn, team_id, channel_id)
            was_in = joined(current)
            storage.settings.upsert_channel_setting(
                conn,
                team_id,
                channel_id,
                active=True,
                stopped_reason=None,
                failures=0,
                activated_at=current.activated_at if was_in else now,
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
        return not was_in

    def queue_backfill(self, team_id: str, channel_id: str) -> None:
        """Note that the channel's history is to be read, before reading starts, so that a restarted process
        finishes it (``resume_backfills``)."""
        from bot.slack.backfill import SOURCE

        with self.db.connection() as conn:
            saved = storage.checkpoints.load_checkpoint(conn, team_id, channel_id, SOURCE)
            if saved is None or saved.completed_at is not None:
                state = {"phase": "history", "threads": [], "users": []}
                storage.checkpoints.record_checkpoint(conn, team_id, channel_id, SOURCE, None, state)

    def start_backfill(self, client: WebClient, team_id: str, channel_id: str) -> threading.Thread | None:
        """Read the channel's history in a background thread, unless this process is reading it already."""
        with self._lock:
            if (team_id, channel_id) in self._reading:
                return None
            self._reading.add((team_id, channel_id))
        thread = threading.Thread(
            target=self.backfill, args=(client, team_id, channel_id), daemon=True, name=f"backfill-{channel_id}"
        )
        thread.start()
        return thread

    def backfill(self, client: WebClient, team_id: str, channel_id: str) -> None:
        """The channel's history (the thread ``start_backfill`` starts); failures are logged, not raised."""
        from bot.slack.backfill import backfill_channel

        try:
            report = backfill_channel(self.db, client, channel_id)
            log.info("backfilled #%s: %s", report.channel.name, report.stats)
            self.say_what_was_read(client, team_id, channel_id)
        except (PaperPingError, SlackApiError, OSError) as exc:
            log.warning("backfill of %s failed: %s", channel_id, exc)
        except Exception:
            log.exception("backfill of %s failed", channel_id)
        finally:
            with self._lock:
                self._reading.discard((team_id, channel_id))

    def say_what_was_read(self, client: WebClient, team_id: str, channel_id: str) -> None:
        """After the history is read: how much, and with little history, how to give PaperPing a start."""
        with self.db.connection() as conn:
            counts = storage.messages.load_channel_counts(conn, team_id, channel_id)
            first = storage.messages.load_first_share_at(conn, team_id, channel_id)
        self.pacer.post(client.chat_postMessage, channel=channel_id, text=history_note(counts["papers"], first))

    def resume_backfills(self, client_for: Callable[[str], WebClient]) -> list[threading.Thread]:
        """Finish, in the background, the backfills a stopped process left unfinished, or Slack broke off (an error,
        a timeout): ``MOST_RESUMED`` reads at once in this process at most, the others at a later call."""
        from bot.slack.backfill import SOURCE

        with self.db.connection() as conn:
            pending = storage.checkpoints.load_unfinished_imports(conn, SOURCE)
        threads = []
        for team_id, channel_id in pending:
            with self._lock:
                if len(self._reading) >= MOST_RESUMED:
                    break
                if (team_id, channel_id) in self._reading:
                    continue
            try:
                client = client_for(team_id)
            except PaperPingError as exc:
                log.warning("cannot resume the backfill of %s: %s", channel_id, exc)
                continue
            log.info("resuming the backfill of %s", channel_id)
            thread = self.start_backfill(client, team_id, channel_id)
            if thread is not None:
                threads.append(thread)
        return threads
