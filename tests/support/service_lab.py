"""``paperping run`` in a subprocess against local stand-ins, and a member's side of Slack (signed events and
slash commands), for the end-to-end test of a lab's first hour and for ``bench/bench_first_post.py``."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.support.scholar_standin import ScholarStandIn, source_env
from tests.support.slack_standin import SlackStandIn

ROOT = Path(__file__).resolve().parents[2]
SECRET = "lab-signing-secret"
T = "T0LAB"


class Lab:
    """``paperping run --http`` in a subprocess, and a member's side of Slack: signed events and commands."""

    def __init__(
        self,
        database_url: str,
        home: Path,
        slack: SlackStandIn,
        scholar: ScholarStandIn,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.slack, self.scholar = slack, scholar
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "PAPERPING_HOME": str(home),
            "SLACK_BOT_TOKEN": "xoxb-lab",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.url,
            **source_env(scholar.url),
            # papers' full text is read from hosts these labs have no stand-in of (tests/db/test_fulltext_reading.py
            # runs the job against its own)
            "PAPERPING_FULLTEXT": "0",
            **(extra_env or {}),
            "PAPERPING_TICK_SECONDS": "1",
            "PAPERPING_FOLLOWUPS_EVERY_MINUTES": "0.05",  # shared papers are asked about again every 3 s
            "PAPERPING_AUTHORS_EVERY_MINUTES": "0.05",  # and authors' papers asked for every 3 s
        }
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PAPERPING_OFFLINE"):
            env.pop(name, None)
        self.log = (home / "run.log").open("w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "-v", "run", "--http", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.url = f"http://127.0.0.1:{self.port}/slack/events"
        wait_for(lambda: self._healthy(), 60, "paperping run to serve /healthz")
        self.sent = 0

    def _healthy(self) -> bool:
        try:
            return httpx.get(self.url.replace("/slack/events", "/healthz"), timeout=1).text == "ok"
        except httpx.HTTPError:
            return False

    def signed(self, body: str, content_type: str) -> httpx.Response:
        return signed_post(self.url, body, content_type, SECRET)

    def event(self, event: dict[str, Any]) -> None:
        self.sent += 1
        body = event_callback(event, f"Ev{self.port}-{self.sent}")  # ids unique across the processes of a test
        assert self.signed(json.dumps(body), "application/json").status_code == 200

    def command(self, channel: str, text: str, user: str = "U1", timeout: float = 120) -> str:
        before = len(self.slack.responses)
        fields = {
            "team_id": T,
            "channel_id": channel,
            "user_id": user,
            "command": "/paperping",
            "text": text,
            "response_url": self.slack.response_url,
            "trigger_id": "1",
        }
        started = time.time()
        assert self.signed(urlencode(fields), "application/x-www-form-urlencoded").status_code == 200
        assert time.time() - started < 3, "acknowledged within Slack's 3 seconds"
        wait_for(lambda: len(self.slack.responses) > before, timeout, f"an answer to /paperping {text}")
        return str(self.slack.responses[before]["text"])

    def posts(self, channel: str, *, blocks: bool) -> list[dict[str, Any]]:
        return [p for p in self.slack.posts if p["channel"] == channel and bool(p.get("blocks")) == blocks]

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.seek(0)
        return self.log.read()


def stop_lab(lab: Lab, *standins: Any) -> str:
    """Stop ``paperping run`` and the stand-ins; its log, whose tail is printed (pytest shows it when the test
    fails)."""
    log = lab.stop()
    for standin in standins:
        standin.stop()
    print(log[-8000:])
    return log


def slack_users(names: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The workspace's users as ``users.list`` gives them (``UBOT`` is PaperPing)."""
    return {
        u: {"id": u, "team_id": T, "name": n, "profile": {"display_name": n}, "is_bot": u == "UBOT"}
        for u, n in names.items()
    }


def shared_history(
    now: float,
    texts: Sequence[str],
    members: Sequence[str],
    *,
    emoji: str,
    reply: Callable[[int], str],
    reply_after: float,
    chatter: str | None = None,
) -> list[dict[str, Any]]:
    """A channel's history: the i-th text shared 80 - 9i days before ``now`` by member i, with two members'
    ``emoji``; every other share has a thread of one reply ``reply_after`` seconds later; ``chatter`` follows each
    share when given (a message with no link)."""
    messages: list[dict[str, Any]] = []
    n = len(members)
    for i, text in enumerate(texts):
        ts = f"{now - (80 - i * 9) * 86400:.6f}"
        sharer = members[i % n]
        top: dict[str, Any] = {
            "type": "message",
            "user": sharer,
            "ts": ts,
            "text": text,
            "reactions": [{"name": emoji, "users": [members[(i + 1) % n], members[(i + 2) % n]], "count": 2}],
        }
        if i % 2 == 0:
            reply_ts = f"{float(ts) + reply_after:.6f}"
            top.update(thread_ts=ts, reply_count=1, reply_users=[members[(i + 3) % n]], latest_reply=reply_ts)
            messages.append(
                {"type": "message", "user": members[(i + 3) % n], "ts": reply_ts, "thread_ts": ts, "text": reply(i)}
            )
        messages.append(top)
        if chatter is not None:
            messages.append({"type": "message", "user": sharer, "ts": f"{float(ts) + 5:.6f}", "text": chatter})
    return messages


def event_callback(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    """An Events API delivery of ``event`` to the lab's workspace, as Slack sends it."""
    return {
        "type": "event_callback",
        "team_id": T,
        "api_app_id": "A1",
        "event": event,
        "event_id": event_id,
        "event_time": int(time.time()),
    }


def slack_headers(body: str, content_type: str, secret: str) -> dict[str, str]:
    """The headers of a request as Slack sends it: timestamped and signed with the app's signing secret."""
    ts = str(int(time.time()))
    sig = "v0=" + hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"Content-Type": content_type, "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig}


def signed_post(url: str, body: str, content_type: str, secret: str, retry: int | None = None) -> httpx.Response:
    """A request as Slack sends it (``retry``: one of the copies Slack sends again, numbered as Slack does)."""
    headers = slack_headers(body, content_type, secret)
    if retry is not None:
        headers = {**headers, "X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_error"}
    return httpx.post(url, content=body, headers=headers, timeout=10)


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"waited {seconds:.0f}s for {what}")
