"""A lab's first hour with only ``paperping run``: no CLI step before it, stand-ins of Slack, Semantic Scholar
and arXiv, the real embedding model, Postgres with pgvector.

PaperPing is invited into a channel with months of paper sharing: it reads the history, looks the papers up,
embeds them and posts a recommendation grounded in the channel's threads. A new share is looked up and
embedded within a minute. A channel with no history gets a post after a focus is set. A command in a channel
PaperPing has not joined gets an answer.
"""

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from socialrag.db import Database
from tests.scholar_standin import ScholarStandIn
from tests.slack_standin import SlackStandIn, SlackState

ROOT = Path(__file__).resolve().parents[2]
SECRET = "first-week-secret"
T = "T0LAB"
# machine translation papers of the ACL Anthology sample: the lab's history
HISTORY = [
    "2020.acl-main.34",
    "2020.acl-main.35",
    "2020.acl-main.36",
    "2020.acl-main.37",
    "2020.acl-main.40",
    "2020.acl-main.41",
    "2020.acl-main.42",
    "2020.emnlp-main.475",
]
NEW_SHARE = "2020.findings-emnlp.319"  # Improving Target-side Lexical Transfer in Multilingual NMT
MEMBERS = ("U1", "U2", "U3", "U4")


def lab_slack(now: float) -> SlackState:
    """#mt-reading with three months of shares (threads, reactions), #quiet-lab with none, #elsewhere without
    PaperPing in it."""
    state = SlackState()
    names = {"U1": "ana", "U2": "ben", "U3": "chen", "U4": "dee", "UBOT": "paperping"}
    state.users = {
        u: {"id": u, "team_id": T, "name": n, "profile": {"display_name": n}, "is_bot": u == "UBOT"}
        for u, n in names.items()
    }
    everyone = [*MEMBERS, "UBOT"]
    state.channels = {
        "C1": {"id": "C1", "name": "mt-reading", "is_channel": True, "members": everyone},
        "C2": {"id": "C2", "name": "quiet-lab", "is_channel": True, "members": everyone},
        "C3": {"id": "C3", "name": "elsewhere", "is_channel": True, "members": list(MEMBERS)},
    }
    messages: list[dict[str, Any]] = []
    for i, acl in enumerate(HISTORY):
        ts = f"{now - (80 - i * 9) * 86400:.6f}"
        sharer = MEMBERS[i % 4]
        top: dict[str, Any] = {
            "type": "message",
            "user": sharer,
            "ts": ts,
            "text": f"worth a read <https://aclanthology.org/{acl}/>",
            "reactions": [{"name": "+1", "users": [MEMBERS[(i + 1) % 4], MEMBERS[(i + 2) % 4]], "count": 2}],
        }
        if i % 2 == 0:
            reply_ts = f"{float(ts) + 600:.6f}"
            top.update(thread_ts=ts, reply_count=1, reply_users=[MEMBERS[(i + 3) % 4]], latest_reply=reply_ts)
            reply = {"type": "message", "user": MEMBERS[(i + 3) % 4], "ts": reply_ts, "thread_ts": ts}
            messages.append({**reply, "text": "the decoding trick in section 4 is neat"})
        messages.append(top)
        messages.append({"type": "message", "user": sharer, "ts": f"{float(ts) + 5:.6f}", "text": "lunch at 12?"})
    state.messages = {"C1": messages, "C2": [], "C3": []}
    return state


class Lab:
    """``paperping run --http`` in a subprocess, and a member's side of Slack: signed events and commands."""

    def __init__(self, db: Database, tmp_path: Path, slack: SlackStandIn, scholar: ScholarStandIn) -> None:
        self.slack, self.scholar = slack, scholar
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {
            **os.environ,
            "DATABASE_URL": db.conninfo,
            "PAPERPING_HOME": str(tmp_path),
            "SLACK_BOT_TOKEN": "xoxb-lab",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.url,
            "S2_API_URL": scholar.url,
            "ARXIV_API_URL": scholar.url + "api/",
            "CROSSREF_API_URL": scholar.url + "crossref/",
            "PAPERPING_TICK_SECONDS": "1",
        }
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PAPERPING_OFFLINE"):
            env.pop(name, None)
        self.log = (tmp_path / "run.log").open("w+")
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
        ts = str(int(time.time()))
        sig = "v0=" + hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig}
        return httpx.post(self.url, content=body, headers=headers, timeout=10)

    def event(self, event: dict[str, Any]) -> None:
        self.sent += 1
        body = {
            "type": "event_callback",
            "team_id": T,
            "api_app_id": "A1",
            "event": event,
            "event_id": f"Ev{self.sent}",
        }
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


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"waited {seconds:.0f}s for {what}")


@pytest.fixture
def lab(db: Database, tmp_path: Path) -> Iterator[Lab]:
    slack = SlackStandIn(lab_slack(time.time())).start()
    scholar = ScholarStandIn().start()
    running = Lab(db, tmp_path, slack, scholar)
    try:
        yield running
    finally:
        log = running.stop()
        slack.stop()
        scholar.stop()
        print(log[-8000:])  # shown when the test fails
        assert "Traceback" not in log, "paperping run logged no unexpected failure"


def scalar(db: Database, sql: str, *params: Any) -> Any:
    with db.connection() as conn:
        row = conn.execute(sql, params).fetchone()
    return row[0] if row else None


@pytest.mark.slow
def test_a_labs_first_hour_with_only_paperping_run(lab: Lab, db: Database) -> None:
    # a command in a channel PaperPing has not joined: an answer, and nothing saved
    answer = lab.command("C3", "frequency daily")
    assert "I'm not in this channel yet" in answer and "/invite @PaperPing" in answer
    assert scalar(db, "SELECT count(*) FROM channel_settings WHERE channel_id = 'C3'") == 0

    # members let it post at any hour (the defaults are weekday office hours), then invite it
    assert "Done" in lab.command("C1", "hours 0-24 every-day")
    lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T})
    wait_for(lambda: len(lab.posts("C1", blocks=False)) >= 3, 60, "the introduction and the history note")
    notes = [p["text"] for p in lab.posts("C1", blocks=False)]
    assert any(n.startswith("Hi, I'm PaperPing") for n in notes)
    assert any(f"{len(HISTORY)} papers shared here" in n for n in notes)

    # the first recommendation: after the history is read and indexed, grounded in the channel's threads
    wait_for(lambda: bool(lab.posts("C1", blocks=True)), 150, "the first recommendation in #mt-reading")
    (post,) = lab.posts("C1", blocks=True)
    shown = json.dumps(post["blocks"])
    assert "archives/C1/p" in shown, "the post links the earlier thread it relates to"
    paper = post["metadata"]["event_payload"]["paper_id"]
    title = scalar(db, "SELECT title FROM papers WHERE id = %s", paper)
    related = {p["title"] for p in lab.scholar.related([f"ACL:{a}" for a in HISTORY], 30)}
    assert title in related, f"{title!r} is on the channel's topic"
    waiting = "SELECT count(*) FROM index_queue WHERE given_up_at IS NULL"
    wait_for(lambda: scalar(db, waiting) == 0, 30, "the queue to empty (PaperPing's own post is indexed too)")
    looked_up = scalar(
        db,
        "SELECT count(*) FROM message_papers mp JOIN papers p ON p.id = mp.paper_id "
        "WHERE mp.channel_id = 'C1' AND p.title IS NOT NULL",
    )
    assert looked_up >= len(HISTORY)
    status = lab.command("C1", "status")
    assert f"Index: {len(HISTORY) + 1} papers shared here" in status, status

    # a new share is looked up and embedded within a minute
    ts = f"{time.time():.6f}"
    text = f"new from the group <https://aclanthology.org/{NEW_SHARE}/>"
    lab.event({"type": "message", "channel": "C1", "user": "U2", "text": text, "ts": ts, "event_ts": ts})
    shared = "SELECT p.id FROM papers p JOIN paper_ids i ON i.paper_id = p.id WHERE i.scheme = 'acl' AND i.value = %s"
    started = time.time()
    wait_for(
        lambda: bool(
            scalar(
                db,
                f"SELECT count(*) FROM paper_embeddings e JOIN papers p ON p.id = e.paper_id "
                f"WHERE p.title IS NOT NULL AND p.id = ({shared})",
                NEW_SHARE,
            )
        ),
        60,
        "the new share to be looked up and embedded",
    )
    print(f"new share indexed in {time.time() - started:.1f}s")

    # a channel with no history: it is asked for a focus, posts nothing it cannot, and posts after a focus
    assert "Done" in lab.command("C2", "hours 0-24 every-day")
    lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C2", "team": T})
    wait_for(lambda: any("little to go on" in p["text"] for p in lab.posts("C2", blocks=False)), 60, "the note")
    assert lab.command("C2", "now").startswith("No candidate yet")
    focus = lab.command("C2", "focus neural machine translation decoding")
    assert "lean toward that" in focus
    answer = lab.command("C2", "now", timeout=150)
    assert answer.startswith("Posted"), answer
    (post,) = lab.posts("C2", blocks=True)
    paper = post["metadata"]["event_payload"]["paper_id"]
    assert (
        "translation"
        in str(scalar(db, "SELECT title || coalesce(abstract, '') FROM papers WHERE id = %s", paper)).lower()
    )
    assert not lab.posts("C3", blocks=True) and not lab.posts("C3", blocks=False)
