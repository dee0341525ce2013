"""Slack's copies of an event: Slack sends an event again when its answer takes more than 3 seconds, often while the
first copy is still being handled. Such a copy is answered 503 at once (Slack sends it again later) and nothing is
done twice; once the first is handled, a copy is acknowledged and dropped. A copy of an event whose listener failed
is handled, and so is one whose first handler died with its process, once its claim has lapsed."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import httpx

from bot.slack.dedupe import LEASE
from socialrag import storage
from socialrag.db import Database
from tests.support.harness import SECRET, Harness, T, count, message_event
from tests.support.service_lab import event_callback, slack_headers

PAPER = "<https://arxiv.org/abs/1706.03762|Attention is all you need>"


def send(h: Harness, body: str, retry: int | None = None) -> tuple[int, float]:
    """Post a signed copy of ``body`` (Slack's ``retry``-th resend, if given); its status and seconds taken."""
    headers = slack_headers(body, "application/json", SECRET)
    if retry is not None:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    started = time.monotonic()
    answer = httpx.post(h.url, content=body, headers=headers, timeout=20)
    return answer.status_code, time.monotonic() - started


def test_a_copy_sent_while_the_first_is_handled_does_nothing_twice(harness: Harness) -> None:
    standin = harness.standin
    standin.hold = lambda call: call.method == "assistant.threads.setStatus"  # Slack slow: the first takes 4 s
    standin.hold_seconds = 4.0
    question = {
        "type": "message",
        "channel": "DU2",
        "channel_type": "im",
        "user": "U2",
        "text": "what did we read last week?",
        "ts": "1700003000.000100",
        "event_ts": "1700003000.000100",
    }
    body = json.dumps(event_callback(question, "EvDM1"))
    answers: dict[str, tuple[int, float]] = {}
    first = threading.Thread(target=lambda: answers.setdefault("first", send(harness, body)))
    first.start()
    time.sleep(3.1)  # Slack stops waiting after 3 s and sends its first copy
    status, seconds = send(harness, body, retry=1)
    assert status == 503 and seconds < 1.5, "told at once to send it again later"
    first.join()
    harness.settle(60)
    assert answers["first"][0] == 200
    assert len(standin.calls_to("assistant.threads.setStatus")) == 1, "the question is answered once"
    assert len(standin.calls_to("chat.startStream")) <= 1
    assert send(harness, body, retry=2)[0] == 200, "a copy after the first was handled is acknowledged"
    harness.settle(60)
    assert len(standin.calls_to("assistant.threads.setStatus")) == 1


def test_a_copy_of_an_event_whose_listener_failed_is_handled(harness: Harness, db: Database) -> None:
    harness.standin.fail_next["auth.test"] = 1  # the channel's first sight asks Slack, which errs once
    body = json.dumps(event_callback(message_event("1700000000.000100", PAPER), "EvF1"))
    assert send(harness, body)[0] == 500
    assert count(db, "SELECT count(*) FROM messages") == 0
    assert send(harness, body, retry=1)[0] == 200, "the failed copy let its claim go"
    assert count(db, "SELECT count(*) FROM messages WHERE team_id = %s", T) == 1
    assert send(harness, body, retry=2)[0] == 200
    assert count(db, "SELECT count(*) FROM messages") == 1


def test_a_claim_whose_process_died_is_taken_over_once_it_lapses(harness: Harness, db: Database) -> None:
    with db.connection() as conn:  # two copies claimed by processes killed before they stored anything
        for event_id in ("EvOld", "EvNew"):
            assert storage.slack_events.claim_event(conn, event_id, T, LEASE) == "claimed"
        conn.execute(
            "UPDATE processed_events SET received_at = now() - %(age)s WHERE event_id = 'EvOld'",
            {"age": LEASE + timedelta(minutes=1)},
        )
    fresh = json.dumps(event_callback(message_event("1700000001.000100", PAPER), "EvNew"))
    assert send(harness, fresh, retry=1)[0] == 503, "claimed a moment ago: maybe still at work"
    lapsed = json.dumps(event_callback(message_event("1700000002.000100", PAPER), "EvOld"))
    assert send(harness, lapsed, retry=3)[0] == 200
    with db.connection() as conn:
        stored = conn.execute("SELECT ts FROM messages").fetchall()
    assert stored == [("1700000002.000100",)], "only the lapsed claim was taken over and handled"
