"""What the HTTP front refuses before bolt sees a request: any POST to ``/slack/events`` without Slack's signature
(whatever its body, nothing parses it and nothing is logged as an error); Slack's signed requests are answered
meanwhile, and ``/metrics`` counts each refusal by its reason."""

from __future__ import annotations

import json
import logging
import time

import httpx
import pytest

from tests.support.harness import SECRET, Harness
from tests.support.service_lab import signed_post


def refused(harness: Harness, reason: str) -> float:
    value = harness.ctx.metrics.registry.get_sample_value("paperping_requests_refused_total", {"reason": reason})
    return value or 0.0


def challenge(url: str, word: str) -> httpx.Response:
    body = json.dumps({"type": "url_verification", "challenge": word, "token": "x"})
    return signed_post(url, body, "application/json", SECRET)


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
