"""``/readyz`` says whether the database answers and ``/healthz`` only that the process is up; with the database
gone, Slack's requests are answered with an error within Slack's three seconds (so that Slack sends them again)
instead of each holding a thread for the pool's 30, and ``/readyz`` answers without waiting again."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from socialrag.db import Database
from tests.support.harness import Harness, lab_state, message_event
from tests.support.service_lab import event_callback
from tests.support.slack_standin import SlackStandIn


def _base(harness: Harness) -> str:
    return harness.url.removesuffix("/slack/events")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def no_database(tmp_path: Path) -> Iterator[Harness]:
    """The app over HTTP with a database address where nothing listens (a Postgres that went away)."""
    gone = Database(f"postgresql://paperping@127.0.0.1:{_closed_port()}/paperping?connect_timeout=2")
    standin = SlackStandIn(lab_state()).start()
    harness = Harness(gone, standin, tmp_path)
    yield harness
    harness.stop()
    standin.stop()
    gone.close()


def test_ready_when_the_database_answers(harness: Harness) -> None:
    ready = httpx.get(f"{_base(harness)}/readyz", timeout=5)
    assert (ready.status_code, ready.text) == (200, "ready\n")
    assert httpx.get(f"{_base(harness)}/healthz", timeout=5).text == "ok"


def test_without_a_database_slack_gets_errors_quickly_and_readyz_says_why(no_database: Harness) -> None:
    base = _base(no_database)
    started = time.monotonic()
    first = httpx.get(f"{base}/readyz", timeout=10)
    assert first.status_code == 503 and "database" in first.text
    assert time.monotonic() - started < 2.0, "a probe waits a second for the database, not longer"
    assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200, "the process itself is up"

    answers: list[tuple[int, float]] = []

    def send(i: int) -> None:
        body = json.dumps(event_callback(message_event(f"1700000000.00010{i}", "hello"), f"EvGone{i}"))
        sent = time.monotonic()
        status = no_database.signed(body, "application/json").status_code
        answers.append((status, time.monotonic() - sent))

    senders = [threading.Thread(target=send, args=(i,)) for i in range(8)]  # as many as the front has threads
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(timeout=40)
    assert len(answers) == 8
    assert all(status >= 500 for status, _ in answers), "an error, so that Slack sends the event again"
    assert all(took < 3.0 for _, took in answers), answers

    asked = time.monotonic()
    again = httpx.get(f"{base}/readyz", timeout=10)
    assert again.status_code == 503 and "does not answer" in again.text
    assert time.monotonic() - asked < 0.5, "the last answer is given at once while it is fresh"
