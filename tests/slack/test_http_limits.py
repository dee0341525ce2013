"""What the HTTP front refuses before bolt sees a request: a request still trickling in at its deadline, more
connections from one address than its share, and any POST to ``/slack/events`` without Slack's signature
(whatever its body, nothing parses it and nothing is logged as an error); Slack's signed requests are answered
meanwhile, and ``/metrics`` counts each refusal by its reason."""

from __future__ import annotations

import json
import logging
import select
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from bot.slack.http_front import HttpFront
from tests.support.harness import SECRET, Harness
from tests.support.service_lab import signed_post, slack_headers


def refused(harness: Harness, reason: str) -> float:
    value = harness.ctx.metrics.registry.get_sample_value("paperping_requests_refused_total", {"reason": reason})
    return value or 0.0


def challenge(url: str, word: str) -> httpx.Response:
    body = json.dumps({"type": "url_verification", "challenge": word, "token": "x"})
    return signed_post(url, body, "application/json", SECRET)


@pytest.fixture
def strict_front(harness: Harness) -> Iterator[HttpFront]:
    """The production front with a 2-second deadline per request and at most 3 connections per address."""
    page = harness.ctx.metrics.page(None)
    front = HttpFront(
        harness.app, "127.0.0.1", 0, signing_secret=SECRET, metrics=page, request_deadline=2, peer_connections=3
    ).start()
    yield front
    front.stop()


def test_a_trickling_request_is_cut_at_its_deadline_while_slack_is_served(harness: Harness) -> None:
    page = harness.ctx.metrics.page(None)
    front = HttpFront(
        harness.app, "127.0.0.1", 0, signing_secret=SECRET, metrics=page, request_deadline=2, peer_connections=0
    ).start()
    before = refused(harness, "slow_request")
    trickling = [socket.create_connection(("127.0.0.1", front.port), timeout=5) for _ in range(20)]
    cut_after: dict[socket.socket, float] = {}
    try:
        for sock in trickling:
            sock.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nX-Pad: ")
        started = time.monotonic()
        served = None
        while len(cut_after) < len(trickling) and time.monotonic() - started < 8:
            for sock in trickling:  # one byte each half second: never silent for long
                if sock not in cut_after:
                    try:
                        sock.sendall(b"a")
                    except OSError:
                        cut_after[sock] = time.monotonic() - started
            if served is None and time.monotonic() - started > 0.5:
                asked = time.monotonic()
                answer = challenge(f"http://127.0.0.1:{front.port}/slack/events", "c-during")
                served = (answer.status_code, answer.text, time.monotonic() - asked)
            open_ones = [sock for sock in trickling if sock not in cut_after]
            for sock in select.select(open_ones, [], [], 0.5)[0]:
                try:
                    closed = sock.recv(100) == b""
                except OSError:
                    closed = True
                if closed:
                    cut_after[sock] = time.monotonic() - started
        assert served is not None and served[0] == 200 and "c-during" in served[1] and served[2] < 3.0, served
        assert len(cut_after) == len(trickling), "every trickling request was cut"
        assert all(1.5 < after < 4.5 for after in cut_after.values()), sorted(cut_after.values())
        assert refused(harness, "slow_request") - before == len(trickling)
    finally:
        for sock in trickling:
            sock.close()
        front.stop()


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    """Send one request on a kept-alive connection and read its whole answer (headers, then the body's length)."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, "the connection was closed"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head + b"\r\n\r\n" + body


def test_a_kept_alive_connection_waits_between_requests_past_the_deadline(strict_front: HttpFront) -> None:
    """The deadline runs from a request's first byte to its last, not across the quiet time between two
    requests of one connection (that is ``READ_TIMEOUT``'s)."""

    def request(word: str) -> bytes:
        body = json.dumps({"type": "url_verification", "challenge": word, "token": "x"})
        headers = {**slack_headers(body, "application/json", SECRET), "Content-Length": str(len(body))}
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return f"POST /slack/events HTTP/1.1\r\nHost: x\r\n{lines}\r\n{body}".encode()

    with socket.create_connection(("127.0.0.1", strict_front.port), timeout=5) as sock:
        assert b"c-first" in _exchange(sock, request("c-first"))
        time.sleep(3.5)  # over the two seconds of a request's deadline
        second = _exchange(sock, request("c-second"))
    assert second.startswith(b"HTTP/1.1 200") and b"c-second" in second


def test_one_address_holds_at_most_its_share_of_connections(harness: Harness, strict_front: HttpFront) -> None:
    before = refused(harness, "peer_connections")
    held = []
    for _ in range(3):
        held.append(socket.create_connection(("127.0.0.1", strict_front.port), timeout=5))
        time.sleep(0.1)
    extra = socket.create_connection(("127.0.0.1", strict_front.port), timeout=5)
    try:
        try:
            closed = extra.recv(100) == b""
        except TimeoutError:
            closed = False
        except OSError:
            closed = True
        assert closed, "a fourth connection from the same address is closed at once"
        assert refused(harness, "peer_connections") - before == 1
    finally:
        extra.close()
        for sock in held:
            sock.close()
    time.sleep(0.5)  # the front notices the three closed
    assert challenge(f"http://127.0.0.1:{strict_front.port}/slack/events", "c-after").status_code == 200


def test_unsigned_bodies_are_refused_before_anything_parses_them(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    json_type, form_type = "application/json", "application/x-www-form-urlencoded"
    bodies: list[tuple[bytes, str, dict[str, bytes]]] = [
        (b"{not json", json_type, {}),
        (b"[1,2]", json_type, {}),
        (b'"x"', json_type, {}),
        (b"payload=%7Bbad", form_type, {}),
        (b"[" * 100_000 + b"]" * 100_000, json_type, {}),
        (b"\xff\xfe not text", json_type, {}),
        (b"{}", json_type, {b"X-Slack-Request-Timestamp": b"soon", b"X-Slack-Signature": b"v0=00"}),
        (
            b"{}",
            json_type,
            {b"X-Slack-Request-Timestamp": str(int(time.time())).encode(), b"X-Slack-Signature": b"v0=\xe9"},
        ),
    ]
    before = refused(harness, "signature")
    for body, content_type, extra in bodies:
        answer = httpx.post(harness.url, content=body, headers={b"Content-Type": content_type.encode(), **extra})
        assert answer.status_code == 401, (body[:20], answer.status_code, answer.text[:80])
        assert "unsigned" in answer.text
    assert refused(harness, "signature") - before == len(bodies)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], "no error and no traceback in the log"
    assert challenge(harness.url, "c-still").status_code == 200
