"""Slack events handled once: an event's id is recorded in the transaction that stores what it brought, and a
resent copy of an event already recorded is acknowledged and dropped."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware

from socialrag import storage
from socialrag.db import Database

log = logging.getLogger(__name__)


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


def mark_handled(conn: psycopg.Connection, body: dict[str, Any]) -> None:
    """Record that the event (or click) of ``body`` was handled, on ``conn``: it commits with what it stored."""
    key = handled_id(body)
    if key:
        team = body.get("team_id") or (body.get("team") or {}).get("id")
        storage.slack_events.record_event(conn, key, team)


class Deduplicate(Middleware):
    """Slack resends an event it thinks was missed; a copy of one already handled is acknowledged and dropped.

    Events are handled before Slack gets its answer (``process_before_response``), and each listener records
    its event as handled only when it is done (``mark_handled``, in the transaction of what it stored): an
    event whose handling failed (the database restarting, say) is answered with an error and sent again by
    Slack instead of being lost.
    Handling an event twice changes nothing, so two copies arriving together need no lock."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Any) -> BoltResponse | None:
        event_id = handled_id(req.body) if isinstance(req.body, dict) else None
        if event_id:
            with self.db.connection() as conn:
                seen = storage.slack_events.event_seen(conn, str(event_id))
            if seen:
                log.info("event %s seen before; ignored", event_id)
                req.context["paperping_duplicate"] = True  # counted by bot.slack.metrics
                return BoltResponse(status=200, body="")
        return next()
