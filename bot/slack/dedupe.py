"""Slack events handled once. An event's id is claimed before its listener runs and marked handled in the
transaction that stores what it brought; a copy Slack resends is dropped once the first is handled, and told to
come back later while the first is still being handled."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import psycopg
from slack_bolt import BoltContext, BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware

from bot.slack.metrics import DUPLICATE
from socialrag import storage
from socialrag.db import Database

log = logging.getLogger(__name__)

CLAIMED = "paperping_claimed"  # the event id this request claimed, in its context, until it is handled
# How long a claim stands without its event being handled. Slack sends a copy again at once, a minute later and
# five minutes after that; a claim whose process died before handling its event is taken over by the last copy,
# while a listener that waits out Slack's rate limits (up to five minutes) is never run twice.
LEASE = timedelta(minutes=5)
RETRY = "paperping_retry"  # which of Slack's copies of the event this request is (0: the first), in its context
LAST_RETRY = 3  # Slack sends an event again at most three times (x-slack-retry-num 1 to 3)


def handled_id(body: dict[str, Any]) -> str | None:
    """What makes a request one of its kind: an event's id, or for a click on a button the member, the message,
    the button and the moment of the click (a click delivered twice must not undo itself)."""
    if body.get("event_id"):
        return str(body["event_id"])
    if body.get("type") == "block_actions" and body.get("actions"):
        action = body["actions"][0] if isinstance(body["actions"][0], dict) else {}
        user = (body.get("user") or {}).get("id")
        where = (body.get("container") or {}).get("message_ts") or (body.get("view") or {}).get("id")
        if user and action.get("action_ts"):
            return f"action:{user}:{where}:{action.get('action_id')}:{action['action_ts']}"[:200]
    return None


def retry_number(req: BoltRequest) -> int:
    """Which of Slack's copies of an event ``req`` is: 0 for the first, 1 to 3 for the copies sent again (HTTP and
    Socket Mode alike give it as ``x-slack-retry-num``); a header that is not a small number counts as 0."""
    raw = (req.headers.get("x-slack-retry-num") or ["0"])[0]
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 2 else 0


def is_last_copy(context: BoltContext) -> bool:
    """Whether Slack sends this event no more after this copy: a failure now is not retried."""
    return int(context.get(RETRY) or 0) >= LAST_RETRY


def no_copy_left(db: Database, context: BoltContext) -> bool:
    """Asked when a copy's work fails: whether Slack sends the event no more. True for Slack's last copy, and for
    an earlier copy still at work when the last one came and was refused (503) for it. A failure to read that is
    taken as a copy still to come, as before."""
    if is_last_copy(context):
        return True
    key = context.get(CLAIMED)
    if not key:
        return False
    try:
        with db.connection() as conn:
            return storage.slack_events.last_copy_refused(conn, str(key))
    except psycopg.Error:
        log.warning("could not read whether Slack's last copy of event %s came", key, exc_info=True)
        return False


def mark_handled(conn: psycopg.Connection, body: dict[str, Any]) -> None:
    """Record that the event (or click) of ``body`` was handled, on ``conn``: it commits with what it stored."""
    key = handled_id(body)
    if key:
        team = body.get("team_id") or (body.get("team") or {}).get("id")
        storage.slack_events.record_handled(conn, key, team)


def release_claim(db: Database, context: BoltContext) -> None:
    """The listener of a claimed event failed: let go of the claim, so that Slack's next copy is handled. When
    the database cannot be reached for that either, the claim lapses after ``LEASE``."""
    key = context.get(CLAIMED)
    if not key:
        return
    try:
        with db.connection() as conn:
            storage.slack_events.release_event(conn, str(key))
    except Exception:
        log.warning("the claim on event %s could not be let go; a copy after %s handles it", key, LEASE, exc_info=True)


class Deduplicate(Middleware):
    """Each event is handled by one copy at a time, and once.

    Events are handled before Slack gets its answer (``process_before_response``), and Slack sends a copy again
    when the answer takes more than 3 seconds, often while the first copy is still at work. So the event's id is
    claimed before its listener runs. A copy of a handled event is acknowledged and dropped; a copy of one still
    being handled is answered 503 (Slack sends it again later, and by then the first copy is done, or has failed
    and let the claim go). Slack's last copy, refused so, is written down: the copy at work then knows that no
    copy follows (``no_copy_left``). Each listener marks its event handled (``mark_handled``, in the transaction of
    what it stored); when it fails, ``release_claim`` lets the claim go so that Slack's next copy is handled."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Any) -> BoltResponse | None:
        body = req.body if isinstance(req.body, dict) else {}
        key = handled_id(body)
        if key is None:
            return next()
        if not body.get("event_id"):  # a click: its listener records it (bot.listeners.actions)
            with self.db.connection() as conn:
                seen = storage.slack_events.event_seen(conn, key)
            return self._drop(req, key, "seen before") if seen else next()
        team = req.context.team_id or body.get("team_id")
        with self.db.connection() as conn:
            claim = storage.slack_events.claim_event(conn, key, team, LEASE)
        if claim == "claimed":
            req.context[CLAIMED] = key
            req.context[RETRY] = retry_number(req)
            return next()
        if claim == "handled":
            return self._drop(req, key, "handled before")
        req.context[DUPLICATE] = True
        retry = retry_number(req)
        if retry >= LAST_RETRY:  # Slack sends no copy after this one: the copy at work must not count on one
            with self.db.connection() as conn:
                storage.slack_events.record_last_copy_refused(conn, key, team)
        log.info("event %s (Slack's retry %d) is still being handled; Slack is asked to send it later", key, retry)
        return BoltResponse(status=503, body="")

    @staticmethod
    def _drop(req: BoltRequest, key: str, why: str) -> BoltResponse:
        log.info("event %s %s; ignored", key, why)
        req.context[DUPLICATE] = True
        return BoltResponse(status=200, body="")
