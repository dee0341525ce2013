"""A message that mentions PaperPing is answered once, however often it is edited: Slack sends ``app_mention``
again, under a new event id and with ``edited``, each time such a message is edited, through the real bolt app
against the Slack stand-in."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from socialrag.db import Database
from tests.slack.test_group_memory import lab, wait
from tests.support.slack_standin import SlackStandIn

pytestmark = pytest.mark.slow


def edited(ts: str, text: str) -> dict[str, Any]:
    """The event Slack sends when the member edits their message at ``ts`` to read ``text``."""
    now = f"{time.time():.6f}"
    return {
        "type": "app_mention",
        "channel": "C1",
        "user": "U2",
        "text": text,
        "ts": ts,
        "event_ts": now,
        "edited": {"user": "U2", "ts": now},
    }


def in_thread(standin: SlackStandIn, ts: str) -> list[dict[str, Any]]:
    return [p for p in standin.posts if p.get("thread_ts") == ts]


def test_an_edited_mention_is_not_answered_again(db: Database, tmp_path: Path) -> None:
    """A member fixes a typo in their question 30 s after PaperPing answered it: the channel got a second answer
    (and the model a second call) for each edit. Now the message's one answer stands; a bare mention answered with
    a hint, edited to ask a question, is answered once."""
    harness, standin = lab(db, tmp_path)
    try:
        ts = f"{time.time() - 30:.6f}"
        question = "<@UBOT> what have we read about tables?"
        harness.event(
            {"type": "app_mention", "channel": "C1", "user": "U2", "text": question, "ts": ts, "event_ts": ts}
        )
        assert "TaBERT" in wait(lambda: in_thread(standin, ts))[0]["text"]
        harness.settle()
        with db.connection() as conn:  # the member's 20 s have passed
            conn.execute("DELETE FROM member_cooldowns")
        harness.event(edited(ts, question.replace("tables", "tables and text")))
        harness.event(edited(ts, question.replace("tables", "tabular data")))
        harness.settle()
        time.sleep(0.5)
        assert len(in_thread(standin, ts)) == 1, [p["text"][:60] for p in in_thread(standin, ts)]

        bare = f"{time.time():.6f}"
        harness.event({"type": "app_mention", "channel": "C1", "user": "U3", "text": "<@UBOT>", "ts": bare})
        assert (
            "Mention me with a question" in wait(lambda: [e for e in standin.ephemeral if e["user"] == "U3"])[0]["text"]
        )
        harness.event({**edited(bare, question), "user": "U3"})
        assert "TaBERT" in wait(lambda: in_thread(standin, bare))[0]["text"], "its first question is answered"
        harness.settle()
        with db.connection() as conn:
            conn.execute("DELETE FROM member_cooldowns")
        harness.event({**edited(bare, question + " and text"), "user": "U3"})
        harness.settle()
        time.sleep(0.5)
        assert len(in_thread(standin, bare)) == 1
    finally:
        harness.stop()
        standin.stop()


def test_a_member_list_slack_will_not_give_is_not_asked_for_on_each_mention(db: Database, tmp_path: Path) -> None:
    """A channel's stored member list is a day old and Slack fails ``conversations.members``: each mention asked
    Slack again, so a row of mentions made a row of failing calls. Now the failed try is noted and the list is not
    asked for again within ``RETRY_AFTER``; the mentions are answered from what is stored."""
    from datetime import UTC, datetime, timedelta

    from bot.slack.members import RETRY_AFTER

    harness, standin = lab(db, tmp_path)
    try:
        with db.connection() as conn:
            conn.execute("UPDATE channels SET members_read_at = %(at)s", {"at": datetime.now(UTC) - timedelta(days=2)})
        standin.rewrite["conversations.members"] = lambda call, answer: {"ok": False, "error": "internal_error"}
        question = "<@UBOT> what have we read about tables?"
        asked = []
        for user in ("U2", "U3"):
            ts = f"{time.time():.6f}"
            asked.append(ts)
            harness.event({"type": "app_mention", "channel": "C1", "user": user, "text": question, "ts": ts})
            wait(lambda ts=ts: in_thread(standin, ts))  # answered, from what is stored
        tries = [c for c in standin.calls_to("conversations.members") if c.params.get("channel") == "C1"]
        assert len(tries) == 1, f"{len(tries)} failing reads of one list for two mentions"
        with db.connection() as conn:  # past the back-off, the next mention asks Slack again
            conn.execute("UPDATE channels SET members_tried_at = members_tried_at - %(b)s", {"b": RETRY_AFTER})
        ts = f"{time.time():.6f}"
        harness.event({"type": "app_mention", "channel": "C1", "user": "U1", "text": question, "ts": ts})
        wait(lambda: in_thread(standin, ts))
        tries = [c for c in standin.calls_to("conversations.members") if c.params.get("channel") == "C1"]
        assert len(tries) == 2
    finally:
        harness.stop()
        standin.stop()
