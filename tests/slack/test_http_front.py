"""The production HTTP front: a huge or endless body is refused before it is read, slow clients hold sockets
and not threads, a silent connection is dropped, and a signed event is answered meanwhile."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from bot.slack.http_front import MAX_BODY_BYTES, HttpFront
from socialrag.db import Database
from tests.support.harness import SECRET, Harness
from tests.support.service_lab import signed_post


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def _answer(sock: socket.socket) -> bytes:
    sock.settimeout(10)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data


@pytest.fixture
def front(harness: Harness) -> Iterator[int]:
    yield int(harness.url.split(":")[2].split("/")[0])


def test_a_huge_declared_body_is_refused_unread(front: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    sock = _connect(front)
    sock.sendall(
        b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 150000000\r\n\r\n" + b"x" * 1000
    )
    answer = _answer(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    assert "Traceback" not in caplog.text


def test_an_endless_chunked_body_is_cut_at_the_cap(front: int) -> None:
    sock = _connect(front)
    sock.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n%s\r\n" % (64_000, b"y" * 64_000)
    try:
        for _ in range(2 * MAX_BODY_BYTES // 64_000):
            sock.sendall(chunk)
    except OSError:
        pass  # the server stopped reading and closed
    answer = _answer(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 413") or answer == b"", answer[:100]


def test_slow_clients_hold_no_threads_and_a_signed_event_is_answered(harness: Harness) -> None:
    # every client here comes from 127.0.0.1: no cap per address in this front (it has a test of its own)
    front = HttpFront(harness.app, "127.0.0.1", 0, signing_secret=SECRET, peer_connections=0).start()
    url = f"http://127.0.0.1:{front.port}/slack/events"
    threads_before = threading.active_count()
    slow = []
    for _ in range(300):
        sock = _connect(front.port)
        sock.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Le")  # and then nothing more
        slow.append(sock)
    try:
        time.sleep(0.5)
        assert threading.active_count() - threads_before < 10, "slow clients hold sockets, not threads"
        body = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "x"})
        started = time.monotonic()
        answer = signed_post(url, body, "application/json", SECRET)
        assert answer.status_code == 200 and "c-123" in answer.text
        assert time.monotonic() - started < 3.0, "answered within Slack's three seconds"
    finally:
        for sock in slow:
            sock.close()
        front.stop()


def test_a_silent_connection_is_dropped(db: Database, harness: Harness) -> None:
    front = HttpFront(harness.app, "127.0.0.1", 0, signing_secret=SECRET, read_timeout=1).start()
    try:
        sock = _connect(front.port)
        sock.settimeout(10)
        started = time.monotonic()
        assert sock.recv(100) == b"", "closed by the server"
        assert time.monotonic() - started < 8
        sock.close()
    finally:
        front.stop()


def test_stopping_when_the_wake_up_pipe_was_closed_under_it(harness: Harness, caplog: pytest.LogCaptureFixture) -> None:
    """A file descriptor closed twice elsewhere in the process can be the event loop's wake-up pipe: stopping
    says so, closes the sockets from the stopping thread, and frees the port instead of raising."""
    import os

    front = HttpFront(harness.app, "127.0.0.1", 0, signing_secret=SECRET).start()
    port = front.port
    os.close(front.server.trigger.trigger)
    with caplog.at_level(logging.WARNING, logger="bot.slack.http_front"):
        front.stop()
    assert "could not be woken" in caplog.text
    assert not front._thread.is_alive()
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


def test_unsigned_requests_are_still_refused(harness: Harness) -> None:
    body = json.dumps({"type": "event_callback", "event": {"type": "message"}})
    assert signed_post(harness.url, body, "application/json", "wrong-secret").status_code == 401


def test_events_share_the_process_pool_of_connections(harness: Harness, db: Database) -> None:
    """Each event used to open three connections of its own; now the process keeps one pool, so 30 events open
    at most a pool's worth of sessions (Postgres counts every session opened: ``pg_stat_database.sessions``)."""
    from socialrag.db import POOL_SIZE
    from tests.support.harness import message_event

    def opened() -> int:
        with db.connect(autocommit=True) as conn:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()").fetchone()
        return int(row[0]) if row else 0

    harness.event(message_event("1700000000.000100", "<https://arxiv.org/abs/2401.10000>"))  # the pool opens
    before = opened()
    for i in range(1, 31):
        harness.event(message_event(f"17000000{i:02d}.000100", f"<https://arxiv.org/abs/2401.{10000 + i}>"))
    assert opened() - before <= POOL_SIZE + 1  # + the one that counts
