"""Joining a channel (``member_joined_channel`` naming PaperPing) when Slack refuses the hello, through the real
bolt app against the Slack stand-in."""

from __future__ import annotations

import threading
import time
from typing import Any

from socialrag import storage
from socialrag.db import Database
from tests.support.harness import Harness, T
from tests.support.slack_standin import Call

JOINED = {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "inviter": "U1"}


def test_a_channel_where_apps_may_not_post_is_joined_without_the_hello(harness: Harness, db: Database) -> None:
    """A channel where only admins may post refuses the hello for good (``restricted_action``): no copy of the
    event would do better, so PaperPing joins without it, once, and its first post says why it cannot post."""

    def refused(call: Call, answer: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False, "error": "restricted_action"}

    harness.standin.rewrite["chat.postMessage"] = refused
    assert harness.event({**JOINED, "event_ts": "1.0"}, event_id="EvJoin").status_code == 200
    harness.event({**JOINED, "event_ts": "1.0"}, event_id="EvJoin")  # Slack's copy, had the first failed
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert s.active and s.activated_at is not None and s.invited_by == "U1"
    hellos = [c for c in harness.standin.calls_to("chat.postMessage") if c.params.get("text", "").startswith("Hi, I")]
    assert len(hellos) == 1, "the hello is tried once"


def test_a_hello_slack_fails_on_every_copy_still_leaves_the_channel_joined(harness: Harness, db: Database) -> None:
    """Slack fails the hello (a server error) on the event and on each copy it sends again: each copy but the last
    leaves the channel to the next, which tries the hello again; Slack's last copy joins the channel without the
    hello, so the channel still gets its posts."""

    def failing(call: Call, answer: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False, "error": "internal_error"}

    harness.standin.rewrite["chat.postMessage"] = failing
    for retry in (None, 1, 2):
        harness.event({**JOINED, "event_ts": "1.0"}, event_id="EvJoin", retry=retry)
        with db.connection() as conn:
            assert storage.settings.load_channel_settings(conn, T, "C1").activated_at is None, retry
    harness.event({**JOINED, "event_ts": "1.0"}, event_id="EvJoin", retry=3)  # Slack sends it no more after this
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert s.active and s.activated_at is not None and s.next_post_at is not None
    hellos = [c for c in harness.standin.calls_to("chat.postMessage") if c.params.get("text", "").startswith("Hi, I")]
    assert len(hellos) == 4, "the hello was tried by each copy"


def test_a_copy_at_work_when_slacks_last_copy_is_refused_joins_without_the_hello(
    harness: Harness, db: Database
) -> None:
    """Slack's second copy of the invitation is still saying the hello (Slack slow, then failing) when its last copy
    comes: the last copy is told the event is busy (503), so Slack sends no more. The copy at work, when its hello
    fails, knows no copy follows and joins the channel without the hello, instead of leaving it to a copy that
    will never come."""
    standin = harness.standin

    def failing(call: Call, answer: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False, "error": "internal_error"}

    standin.rewrite["chat.postMessage"] = failing
    standin.hold = lambda call: call.method == "chat.postMessage"
    standin.hold_seconds = 3.0
    answers: list[int] = []
    at_work = threading.Thread(
        target=lambda: answers.append(
            harness.event({**JOINED, "event_ts": "1.0"}, event_id="EvJoin", retry=2).status_code
        )
    )
    at_work.start()
    time.sleep(1.0)  # the copy at work waits on the hello
    assert harness.event({**JOINED, "event_ts": "1.0"}, event_id="EvJoin", retry=3).status_code == 503
    at_work.join(30)
    assert answers == [200], answers
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert s.active and s.activated_at is not None and s.invited_by == "U1"
