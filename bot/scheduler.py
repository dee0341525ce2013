"""Posting on schedule: each process ticks, claims due channels in Postgres, and posts one recommendation per slot.

A slot's recommendation row is written before posting; a post carries the slot in its message metadata, so a
process that died between posting and recording is found out by the next one (it reads the channel's latest
messages) instead of posting twice. A failed post (Slack or LLM down) keeps its slot and is retried.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk import WebClient

from bot.backfill import history_being_read
from bot.blocks import build_blocks, build_digest_blocks, build_digest_text, build_fallback_text
from bot.pacing import SlackPacer
from bot.slack_io import message_from_slack
from socialrag import storage
from socialrag.config import DEFAULT_EMBED_MODEL
from socialrag.db import Database
from socialrag.errors import ConfigError, PaperPingError, PermanentError
from socialrag.knowledge import enough_to_post, record_own_digest, record_own_post
from socialrag.models import Digest, Draft, NoPost, Style, digest_json, draft_json
from socialrag.recommender import (
    DIGEST,
    DIGEST_DEFAULT,
    SILENT_TO_STEP_DOWN,
    empty_retry_wait,
    index_wait,
    next_slot,
    quiet_until,
    read_reception,
    should_step_down,
    step_down,
)

log = logging.getLogger(__name__)

EVENT_TYPE = "paperping_recommendation"
MAX_HISTORY_PAGES = 20  # a busy channel's messages since the slot opened, 200 a page
# (team id, channel id, slot time, the channel's chosen style or None) -> the draft to post, or why there is none
Recommend = Callable[[str, str, datetime, Style | None], Draft | NoPost | None]
# (team id, channel id, slot time, papers) -> the weekly digest to post, or why there is none
RecommendDigest = Callable[[str, str, datetime, int], Digest | NoPost]
ClientFor = Callable[[str], WebClient]


def now_utc() -> datetime:
    return datetime.now(UTC)


def post_draft(client: WebClient, draft: Draft | Digest, slot_key: str, pacer: SlackPacer) -> dict[str, Any]:
    """chat.postMessage with Block Kit, a plain-text fallback and the slot in the message metadata."""
    if isinstance(draft, Digest):
        first, text, blocks = draft.drafts[0], build_digest_text(draft), build_digest_blocks(draft)
    else:
        first, text, blocks = draft, build_fallback_text(draft), build_blocks(draft)
    response = pacer.post(
        client.chat_postMessage,
        channel=draft.channel_id,
        text=text,
        blocks=blocks,
        unfurl_links=False,
        unfurl_media=False,
        metadata={"event_type": EVENT_TYPE, "event_payload": {"slot_key": slot_key, "paper_id": first.paper.paper_id}},
    )
    return dict(response.data) if hasattr(response, "data") else dict(response)


def find_posted(client: WebClient, channel_id: str, slot_key: str, since: datetime, pacer: SlackPacer) -> str | None:
    """The ts of a post of this slot already in the channel (a process died before recording it)."""
    cursor: str | None = None
    for _ in range(MAX_HISTORY_PAGES):
        data = pacer.call(
            client.conversations_history,
            channel=channel_id,
            oldest=f"{since.timestamp() - 60:.6f}",
            include_all_metadata=True,
            limit=200,
            cursor=cursor,
        )
        for msg in data.get("messages") or ():
            meta = msg.get("metadata") or {}
            if meta.get("event_type") == EVENT_TYPE and (meta.get("event_payload") or {}).get("slot_key") == slot_key:
                return str(msg["ts"])
        cursor = (data.get("response_metadata") or {}).get("next_cursor") or None
        if not data.get("has_more") or cursor is None:
            return None
    return None


class LeaseKeeper:
    """Renews a worker's lease on a slot while it works (a recommendation may wait minutes on Semantic
    Scholar or the LLM); ``lost`` turns true when another worker has taken the slot over."""

    def __init__(self, renew: Callable[[], bool], every: float) -> None:
        self._renew, self._every = renew, every
        self._stop = threading.Event()
        self.lost = False
        self._thread = threading.Thread(target=self._run, daemon=True, name="slot-lease")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                if not self._renew():
                    self.lost = True
                    return
            except PaperPingError as exc:  # the database restarting: try again at the next turn
                log.warning("could not renew a slot lease: %s", exc)
            except Exception:
                log.exception("could not renew a slot lease")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@dataclass
class Worker:
    """One process's share of the posting: claim, recommend, post, record, schedule the next slot."""

    db: Database
    client_for: ClientFor
    recommend: Recommend
    clock: Callable[[], datetime] = now_utc
    lease: timedelta = timedelta(minutes=10)
    retry_after: timedelta = timedelta(minutes=5)
    max_backoff: timedelta = timedelta(hours=6)
    pacer: SlackPacer = field(default_factory=SlackPacer)
    stopping: threading.Event = field(default_factory=threading.Event)
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}")
    renew_every: float | None = None  # seconds between lease renewals (default: a third of the lease)
    refit: Callable[[datetime], int] | None = None  # relearns the channels' rankings that are due
    reports: Callable[[datetime], int] | None = None  # posts the monthly reports that are due
    library: Callable[[datetime], int] | None = None  # sends saved papers to the channels' Zotero libraries
    digest: RecommendDigest | None = None  # the weekly digest of a channel that chose one
    personal: Callable[[datetime], int] | None = None  # sends the members' weekly personal picks that are due
    # `paperping run` indexes in the background: a slot waits (bounded) while the channel is being indexed
    wait_for_index: bool = False
    embed_model: str = DEFAULT_EMBED_MODEL  # whose vectors count as indexed

    def tick(self, max_posts: int = 100) -> int:
        """Serve due channels until none is left, ``max_posts`` are served, or the process is stopping."""
        served = 0
        try:
            while served < max_posts and not self.stopping.is_set() and self.serve_one():
                served += 1
            if self.refit is not None and not self.stopping.is_set():
                self.refit(self.clock())
            if self.reports is not None and not self.stopping.is_set():
                self.reports(self.clock())
            if self.library is not None and not self.stopping.is_set():
                self.library(self.clock())
            if self.personal is not None and not self.stopping.is_set():
                self.personal(self.clock())
            self._prune()
        except PaperPingError as exc:  # the database is away: the next tick retries
            log.warning("tick stopped: %s", exc)
        return served

    def serve_one(self) -> bool:
        now = self.clock()
        with self.db.connection() as conn:
            due = storage.posts.claim_due_channel(conn, now, now + self.lease)
            if due is None:
                return False
            wait = quiet_until(now, due.slot_at, due.last_activity_at)
            if wait is None and self.wait_for_index:  # a joined channel's first post waits for its history
                wait = index_wait(now, due.slot_at, self._indexing(conn, due))
            if wait is not None:
                storage.posts.schedule_next(conn, due.team_id, due.channel_id, wait, keep_slot=True)
                return True
            slot_key = due.slot_at.astimezone(UTC).isoformat()
            rec = storage.posts.open_slot(conn, due.team_id, due.channel_id, slot_key, due.style)
            held = storage.posts.take_slot(conn, rec.id, self.worker_id, now, now + self.lease)
        if not held:
            log.info("#%s: slot %s is being served by another worker", due.channel_id, slot_key)
            return True
        keeper = LeaseKeeper(lambda: self._renew(due, rec.id), self.renew_every or self.lease.total_seconds() / 3)
        try:
            self._serve(due, slot_key, rec, now, keeper)
        except Exception as exc:  # one channel's failure, whatever it is, never stops the others
            self._failed(due, rec, now, exc)
        finally:
            keeper.stop()
        return True

    def _indexing(self, conn: Any, due: storage.posts.DueChannel) -> bool:
        """Too little of the channel is indexed yet to post from (``enough_to_post``: all of it, or its newest
        papers while the rest of the history is read)."""
        reading = history_being_read(conn, due.team_id, due.channel_id)
        progress = storage.queue.load_index_progress(conn, due.team_id, due.channel_id, self.embed_model)
        return not enough_to_post(progress, reading)

    def _renew(self, due: storage.posts.DueChannel, rec_id: int) -> bool:
        with self.db.connection() as conn:
            until = self.clock() + self.lease
            return storage.posts.renew_lease(conn, rec_id, due.team_id, due.channel_id, self.worker_id, until)

    def _failed(self, due: storage.posts.DueChannel, rec: storage.posts.SlotRow, now: datetime, exc: Exception) -> None:
        permanent = isinstance(exc, PermanentError | ConfigError)
        try:
            self._record_failure(due, rec, now, exc, permanent)
        except PaperPingError as db_exc:
            log.warning(
                "#%s: could not record a failed post (%s); its lease runs out and it is retried", due.channel_id, db_exc
            )

    def _record_failure(
        self, due: storage.posts.DueChannel, rec: storage.posts.SlotRow, now: datetime, exc: Exception, permanent: bool
    ) -> None:
        slot_key = due.slot_at.astimezone(UTC).isoformat()
        with self.db.connection() as conn:
            storage.posts.record_failed(conn, rec.id)
            failures = storage.posts.record_channel_failure(
                conn, due.team_id, due.channel_id, permanent=permanent, reason=str(exc)
            )
            if permanent:
                log.warning("#%s: posting stopped, it cannot succeed: %s", due.channel_id, exc)
                return
            wait = min(self.max_backoff, self.retry_after * 2 ** max(0, failures - 1))
            storage.posts.schedule_next(conn, due.team_id, due.channel_id, now + wait, keep_slot=True)
        if isinstance(exc, PaperPingError | OSError):
            log.warning("#%s: post of slot %s failed, retrying in %s: %s", due.channel_id, slot_key, wait, exc)
        else:
            log.exception("#%s: post of slot %s failed unexpectedly, retrying in %s", due.channel_id, slot_key, wait)

    def _prune(self) -> None:
        """Forget Slack event ids old enough that Slack no longer retries them, expired OAuth states, and the LLM
        call counts of hours that limit nothing any more."""
        with self.db.connection() as conn:
            storage.slack_events.prune_processed_events(conn, self.clock() - timedelta(days=1))
            storage.installs.prune_oauth_states(conn, datetime.now(UTC))
            storage.usage.prune_llm_usage(conn, datetime.now(UTC) - timedelta(hours=2))

    def _serve(
        self,
        due: storage.posts.DueChannel,
        slot_key: str,
        rec: storage.posts.SlotRow,
        now: datetime,
        keeper: LeaseKeeper,
    ) -> None:
        client = self.client_for(due.team_id)
        ts = rec.message_ts if rec.status == "posted" else None
        if ts is None and rec.status != "drafted" and rec.created_at < now - timedelta(seconds=1):
            # an earlier attempt may have posted before it died or failed: look before posting again
            ts = find_posted(client, due.channel_id, slot_key, rec.created_at, self.pacer)
        if ts is None:
            if due.frequency == DIGEST and self.digest is not None:
                draft: Draft | Digest | NoPost | None = self.digest(
                    due.team_id, due.channel_id, now, due.digest_size or DIGEST_DEFAULT
                )
            else:
                draft = self.recommend(due.team_id, due.channel_id, now, due.style)
            if not isinstance(draft, Draft | Digest):
                self._empty(due, now, draft.reason if draft else "no candidate was found")
                return
            first = draft.drafts[0] if isinstance(draft, Digest) else draft
            with self.db.connection() as conn:
                drafted = not keeper.lost and storage.posts.record_draft(
                    conn,
                    rec.id,
                    first.paper.paper_id,
                    first.style,
                    first.score,
                    digest_json(draft) if isinstance(draft, Digest) else draft_json(draft),
                    worker=self.worker_id,
                    length=due.explanation_length,
                )
                sending = drafted and storage.posts.start_sending(
                    conn, rec.id, self.worker_id, self.clock() + self.lease
                )
            if not sending:
                log.warning("#%s: slot %s was taken over by another worker; not posting", due.channel_id, slot_key)
                return
            response = post_draft(client, draft, slot_key, self.pacer)
            ts = str(response["ts"])
            self._index_post(draft, response)
        with self.db.connection() as conn:
            storage.posts.record_posted(conn, rec.id, ts, now)
        self._finish(due, now, posted=True)

    def _index_post(self, draft: Draft | Digest, response: dict[str, Any]) -> None:
        """Store PaperPing's own post, linked to its papers, so reactions and replies to it feed back."""
        raw = dict(response.get("message") or {})
        raw.setdefault("ts", response["ts"])
        raw.setdefault("type", "message")
        message = message_from_slack(raw, draft.team_id, draft.channel_id)
        if message is None:
            return
        with self.db.connection() as conn:
            if isinstance(draft, Digest):
                record_own_digest(conn, message, [d.paper for d in draft.drafts])
            else:
                record_own_post(conn, message, draft.paper)

    def _empty(self, due: storage.posts.DueChannel, now: datetime, reason: str) -> None:
        """Nothing to post: keep why, and try the same slot again within hours (backing off, capped)."""
        with self.db.connection() as conn:
            tries = storage.posts.record_empty_slot(conn, due.team_id, due.channel_id, reason, now)
            again = next_slot(
                now + empty_retry_wait(tries),
                None,
                due.frequency,
                due.timezone,
                due.start_hour,
                due.end_hour,
                due.weekdays_only,
            )
            storage.posts.schedule_next(conn, due.team_id, due.channel_id, again, keep_slot=True)
        log.warning("#%s: nothing to post (%s); trying again at %s", due.channel_id, reason, f"{again:%a %H:%M} UTC")

    def _finish(self, due: storage.posts.DueChannel, now: datetime, *, posted: bool) -> None:
        frequency = due.frequency
        with self.db.connection() as conn:
            if posted:
                # the post just made has had no time to draw anything; judge the ones before it
                readings = storage.settings.load_emoji_overrides(conn, due.team_id, due.channel_id)
                rows = storage.posts.load_post_engagement(conn, due.team_id, due.channel_id, SILENT_TO_STEP_DOWN + 1)
                why = should_step_down([read_reception(r["emoji"], r["replies"], readings) for r in rows[1:]])
                if why and frequency not in ("weekly", DIGEST):
                    frequency = step_down(frequency)
                    storage.posts.record_step_down(conn, due.team_id, due.channel_id, frequency, why)
            last = now if posted else due.last_post_at
            nxt = next_slot(
                now + timedelta(minutes=1),
                last or now,
                frequency,
                due.timezone,
                due.start_hour,
                due.end_hour,
                due.weekdays_only,
            )
            storage.posts.schedule_next(conn, due.team_id, due.channel_id, nxt, posted_at=now if posted else None)
