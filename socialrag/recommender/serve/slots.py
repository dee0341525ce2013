"""Step 4, a scheduled post's life: claim the due channel, wait for quiet and for the index, open and take the
slot, renew its lease, recommend, record the draft, post, record the post, read the reception, step down when
the channel stopped answering, and schedule the next slot.

The group space's side is an ``Outlet``: it sends a draft (``post``) and looks a slot's post up in the channel
(``find_posted``); it decides nothing. A slot's recommendation row is written before posting and a post carries
its slot, so a process that died between posting and recording is found out by the next one instead of posting
twice, and a slot whose sender stopped before the group space had the post (killed, or unable to record its
failure) is sent by the worker that takes it over once the lease lapses. A failed post (the group space or the
LLM down) keeps its slot and is retried, backing off; one that cannot succeed stops the channel and says why.
Each process runs one ``SlotWorker``; due channels are claimed in Postgres with ``FOR UPDATE SKIP LOCKED``, so
two processes never serve the same slot.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

import psycopg

from socialrag import storage
from socialrag.config import DEFAULT_EMBED_MODEL
from socialrag.db import Database
from socialrag.errors import ConfigError, PaperPingError, PermanentError
from socialrag.knowledge.live import record_own_digest, record_own_post
from socialrag.knowledge.readiness import enough_to_post
from socialrag.models import (
    Digest,
    Draft,
    Message,
    NoPost,
    Style,
    digest_from_json,
    digest_json,
    draft_from_json,
    draft_json,
)
from socialrag.recommender.serve.schedule import (
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

LLM_OUTPUT_KEPT = timedelta(days=30)  # what the model wrote is kept this long (to see what it wrote), then cleared


@dataclass(frozen=True)
class Posted:
    """What the group space answered to a post: its id (Slack's ts) and the post as the knowledge base keeps it
    (None when there is nothing of it to keep)."""

    ts: str
    message: Message | None


class Outlet(Protocol):
    """The group space's side of a slot: it sends and it looks up, and decides nothing."""

    def ready(self, team_id: str) -> None:
        """Raise when nothing can be posted for this team now (no token, or one the key cannot open), before any
        recommendation is made for nothing."""

    def post(self, draft: Draft | Digest, slot_key: str) -> Posted:
        """Send ``draft`` to its channel, marked with ``slot_key``."""

    def find_posted(self, team_id: str, channel_id: str, slot_key: str, since: datetime) -> Posted | None:
        """PaperPing's own post of ``slot_key`` in the channel since ``since`` (a process died before recording it),
        or None: a message another app or a member posted with the same mark is not it."""


class SlotChooser(Protocol):
    """What a slot posts: the channel's pick (``socialrag.recommender.serve.service.Recommender`` is one)."""

    def draft_for_slot(
        self, team_id: str, channel_id: str, at: datetime, style: Style | None
    ) -> Draft | Digest | NoPost:
        """The draft for one channel's slot at ``at`` (the first day's papers to rate, a digest), or why there is
        none."""

    def digest_for_slot(self, team_id: str, channel_id: str, at: datetime, size: int) -> Digest | NoPost:
        """A digest channel's papers of the week at ``at`` (or the first day's papers to rate), or why there are
        none."""


# A chore of the tick: given the time, does what is due (relearn rankings, post reports...), returns how many
Chore = Callable[[datetime], int]


def now_utc() -> datetime:
    return datetime.now(UTC)


def slot_key_of(slot_at: datetime) -> str:
    return slot_at.astimezone(UTC).isoformat()


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
class SlotWorker:
    """One process's share of the posting: claim, recommend, post, record, schedule the next slot."""

    db: Database
    outlet: Outlet
    chooser: SlotChooser
    clock: Callable[[], datetime] = now_utc
    lease: timedelta = timedelta(minutes=10)
    retry_after: timedelta = timedelta(minutes=5)
    max_backoff: timedelta = timedelta(hours=6)
    stopping: threading.Event = field(default_factory=threading.Event)
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}")
    renew_every: float | None = None  # seconds between lease renewals (default: a third of the lease)
    # what else the tick does when the due slots are served, in order: relearn rankings, reports, Zotero, picks
    chores: Sequence[Chore] = ()
    # `paperping run` indexes in the background: a slot waits (bounded) while the channel is being indexed
    wait_for_index: bool = False
    embed_model: str = DEFAULT_EMBED_MODEL  # whose vectors count as indexed

    def tick(self, max_posts: int = 100) -> int:
        """Serve due channels until none is left, ``max_posts`` are served, or the process is stopping; then
        the chores."""
        served = 0
        try:
            while served < max_posts and not self.stopping.is_set() and self.serve_one():
                served += 1
            for chore in self.chores:
                if self.stopping.is_set():
                    break
                chore(self.clock())
            self._prune()
        except PaperPingError as exc:  # the database is away: the next tick retries
            log.warning("tick stopped: %s", exc)
        return served

    def serve_one(self) -> bool:
        """Claim one due channel and serve its slot (or put it off); False when none is due."""
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
            slot_key = slot_key_of(due.slot_at)
            rec = storage.posts.open_slot(conn, due.team_id, due.channel_id, slot_key, due.style)
            held = storage.posts.take_slot(conn, rec.id, self.worker_id, now, now + self.lease)
        if not held and rec.status == "posted":
            # its post went out and was recorded, then the next slot was never scheduled (a kill, the database
            # refusing): close it now, or the channel would be claimed every lease and never post again
            log.warning("#%s: slot %s was posted but never closed; scheduling the next one", due.channel_id, slot_key)
            self._finish(due, now, posted=True)
            return True
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

    def _indexing(self, conn: psycopg.Connection, due: storage.posts.DueChannel) -> bool:
        """Too little of the channel is indexed yet to post from (``enough_to_post``: all of it, or its newest
        papers while the rest of the history is read)."""
        reading = storage.checkpoints.history_being_read(conn, due.team_id, due.channel_id)
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
        except Exception as db_exc:  # whatever it is, the other channels go on
            # the slot keeps its status (``sending`` too): when its lease runs out the channel is due again, and
            # the worker that takes it looks for the post in the channel and sends it only if it is not there
            log.warning(
                "#%s: could not record a failed post (%s); its lease runs out and it is retried",
                due.channel_id,
                db_exc,
                exc_info=not isinstance(db_exc, PaperPingError),
            )

    def _record_failure(
        self, due: storage.posts.DueChannel, rec: storage.posts.SlotRow, now: datetime, exc: Exception, permanent: bool
    ) -> None:
        slot_key = slot_key_of(due.slot_at)
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
        """Forget event ids old enough that Slack no longer retries them, deletions and removed reactions older
        than ``storage.deletions.KEPT``, expired OAuth states, the LLM call counts of hours that limit nothing any
        more, and what the model wrote longer ago than ``LLM_OUTPUT_KEPT``."""
        with self.db.connection() as conn:
            storage.slack_events.prune_processed_events(conn, self.clock() - timedelta(days=1))
            storage.deletions.prune_deletions(conn, self.clock() - storage.deletions.KEPT)
            storage.installs.prune_oauth_states(conn, datetime.now(UTC))
            storage.usage.prune_llm_usage(conn, datetime.now(UTC) - timedelta(hours=2))
            storage.llm_log.prune_llm_outputs(conn, datetime.now(UTC) - LLM_OUTPUT_KEPT)

    def _serve(
        self,
        due: storage.posts.DueChannel,
        slot_key: str,
        rec: storage.posts.SlotRow,
        now: datetime,
        keeper: LeaseKeeper,
    ) -> None:
        self.outlet.ready(due.team_id)
        found = Posted(rec.message_ts, None) if rec.status == "posted" and rec.message_ts is not None else None
        if found is None and rec.status != "drafted" and rec.created_at < now - timedelta(seconds=1):
            # an earlier attempt may have posted before it died or failed: look before posting again
            found = self.outlet.find_posted(due.team_id, due.channel_id, slot_key, rec.created_at)
            if found is None and rec.status == "sending":  # its sender stopped before the post went out: ours now
                log.warning(
                    "#%s: slot %s was cut short before its post went out; sending it again", due.channel_id, slot_key
                )
        if found is not None:  # stored and recorded from the slot's own draft, as if just sent
            self._record_posted(due, rec.id, found, self._stored_draft(rec.id), now)
            return
        self._release_unsent(due, rec.id, now)
        draft = self._choose(due, now)
        if not isinstance(draft, Draft | Digest):
            self._empty(due, now, draft.reason)
            return
        if not self._start_sending(due, rec, draft, keeper):
            log.warning("#%s: slot %s taken over, or names a member now forgotten", due.channel_id, slot_key)
            return
        self._record_posted(due, rec.id, self.outlet.post(draft, slot_key), draft, now)

    def _record_posted(
        self, due: storage.posts.DueChannel, rec_id: int, posted: Posted, draft: Draft | Digest | None, now: datetime
    ) -> None:
        """In one transaction, so that a process killed in between leaves none of it half done: the post stored
        as PaperPing's share of its papers (reactions and replies to it feed back), a followed author's paper in
        it waiting no more, and the slot recorded as posted with the post's ts (which marks it PaperPing's own);
        then the next slot is scheduled. What the database refuses of the first two is undone alone: the slot is
        recorded all the same (else every retry would find the post and be refused again)."""
        drafts = () if draft is None else draft.drafts if isinstance(draft, Digest) else (draft,)
        with self.db.connection() as conn, conn.transaction():
            try:
                with conn.transaction():  # a savepoint
                    if posted.message is not None and isinstance(draft, Digest):
                        record_own_digest(conn, posted.message, [d.paper for d in drafts])
                    elif posted.message is not None and drafts:
                        record_own_post(conn, posted.message, drafts[0].paper)
                    papers = [d.paper.paper_id for d in drafts]
                    storage.followed_authors.mark_news_posted(conn, due.team_id, due.channel_id, papers, now)
            except Exception as exc:  # whatever it is: a lost connection fails the record below too
                log.warning("slot %d: its post is recorded, not stored: %s", rec_id, exc, exc_info=True)
            storage.posts.record_posted(conn, rec_id, posted.ts, now)
        self._finish(due, now, posted=True)

    def _stored_draft(self, rec_id: int) -> Draft | Digest | None:
        """The draft the slot recorded before sending (None: none, or one this release cannot read)."""
        with self.db.connection() as conn:
            data = storage.posts.load_slot_draft(conn, rec_id)
        try:
            return (digest_from_json(data) or draft_from_json(data)) if data else None
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            log.warning("slot %d: its stored draft is unreadable (%s); the post is recorded, not stored", rec_id, exc)
            return None

    def _release_unsent(self, due: storage.posts.DueChannel, slot_id: int, now: datetime) -> None:
        """An earlier try of this slot drafted the first day's post and it never went out (whether or not the try
        lived to store its draft): what it offered is offered again."""
        with self.db.connection() as conn:
            team, channel = due.team_id, due.channel_id
            if storage.topic_steering.release_unsent_onboarding(conn, team, channel, slot_id, due.slot_at, now):
                log.info("#%s: the first day's papers never went out; offering them again", due.channel_id)

    def _choose(self, due: storage.posts.DueChannel, now: datetime) -> Draft | Digest | NoPost:
        if due.frequency == DIGEST:
            return self.chooser.digest_for_slot(due.team_id, due.channel_id, now, due.digest_size or DIGEST_DEFAULT)
        return self.chooser.draft_for_slot(due.team_id, due.channel_id, now, due.style)

    def _start_sending(
        self, due: storage.posts.DueChannel, rec: storage.posts.SlotRow, draft: Draft | Digest, keeper: LeaseKeeper
    ) -> bool:
        """Record the draft and move the slot to sending, unless another worker took it over meanwhile."""
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
            return drafted and storage.posts.start_sending(conn, rec.id, self.worker_id, self.clock() + self.lease)

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
        """Read how the channel received the posts before this one, step down when it stopped answering, and
        schedule the next slot."""
        frequency = due.frequency
        with self.db.connection() as conn:
            if posted:
                # the post just made has had no time to draw anything; judge the ones before it
                readings = storage.settings.load_emoji_overrides(conn, due.team_id, due.channel_id)
                rows = storage.posts.load_post_engagement(conn, due.team_id, due.channel_id, SILENT_TO_STEP_DOWN + 1)
                why = should_step_down([read_reception(r.emoji, r.replies, readings) for r in rows[1:]])
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
