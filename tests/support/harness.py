"""The Slack app's test harness: the real bolt app on a local port, signed requests, a Web API stand-in
with the lab's workspace, and a few helpers the Slack tests share."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from bot.app import build_app
from bot.app_context import AppContext
from bot.slack.http_front import HttpFront
from socialrag.config import Settings
from socialrag.db import Database
from tests.support.service_lab import event_callback, signed_post
from tests.support.slack_standin import SlackStandIn, SlackState

SECRET = "s3cret-signing"


T = "T0LAB"


def lab_state() -> SlackState:
    state = SlackState()
    state.users = {
        u: {"id": u, "team_id": T, "name": n, "profile": {"display_name": n}}
        for u, n in (("U1", "graham"), ("U2", "ben"), ("U3", "chen"), ("U4", "dee"))
    }
    state.users["U1"]["real_name"] = "Graham Neubig"  # the member who is an author
    state.users["U4"]["is_admin"] = True  # a workspace admin
    state.users["UG1"] = {"id": "UG1", "team_id": T, "name": "gus", "is_restricted": True}  # a guest
    state.channels = {"C1": {"id": "C1", "name": "nlp-lab", "members": ["U1", "U2", "U3", "U4", "UBOT"]}}
    state.messages = {"C1": []}
    return state


class Harness:
    def __init__(self, db: Database, standin: SlackStandIn, tmp_path: Path, **changes: Any) -> None:
        self.db, self.standin = db, standin
        self.settings = Settings(
            home=tmp_path,
            offline=True,
            slack_bot_token="xoxb-test",
            slack_signing_secret=SECRET,
            slack_api_url=standin.url,
        ).with_changes(**changes)
        self.ctx = AppContext(self.settings, db)
        self.app = build_app(self.settings, db, self.ctx)
        page = self.ctx.metrics.page(self.settings.metrics_token)
        self.server = HttpFront(  # as `paperping run --http` serves
            self.app, "127.0.0.1", 0, signing_secret=SECRET, db=db, metrics=page
        ).start()
        self.url = f"http://127.0.0.1:{self.server.port}/slack/events"
        self.events = 0

    def signed(self, body: str, content_type: str, secret: str = SECRET, retry: int | None = None) -> httpx.Response:
        return signed_post(self.url, body, content_type, secret, retry)

    def event(self, event: dict[str, Any], event_id: str | None = None, retry: int | None = None) -> httpx.Response:
        """Send ``event`` as Slack does; ``retry``: as Slack's copy number ``retry`` of it."""
        self.events += 1
        body = event_callback(event, event_id or f"Ev{self.events:05d}")
        response = self.signed(json.dumps(body), "application/json", retry=retry)
        time.sleep(0.3)  # listeners run after the acknowledgement
        return response

    def settle(self, seconds: float = 30.0) -> None:
        """Wait until the slow work the events so far started (and any it started in turn) has ended."""
        deadline = time.monotonic() + seconds
        while self.ctx.slow.pending():
            assert time.monotonic() < deadline, "the slow work did not end"
            time.sleep(0.05)

    def command(self, text: str, user: str = "U2", team: str = T, timeout: float = 5.0, channel: str = "C1") -> str:
        before = len(self.standin.responses)
        body = urlencode(
            {
                "token": "x",
                "team_id": team,
                "channel_id": channel,
                "user_id": user,
                "command": "/paperping",
                "text": text,
                "response_url": self.standin.response_url,
                "trigger_id": "1",
            }
        )
        started = time.time()
        response = self.signed(body, "application/x-www-form-urlencoded")
        assert response.status_code == 200 and time.time() - started < 3, "acknowledged within Slack's 3 seconds"
        deadline = time.time() + timeout
        while time.time() < deadline:
            if len(self.standin.responses) > before:
                return str(self.standin.responses[-1]["text"])
            time.sleep(0.05)
        raise AssertionError("no answer to the command")

    def stop(self) -> None:
        self.server.stop()


@contextmanager
def socket_mode_app(db: Database, standin: SlackStandIn, tmp_path: Path) -> Iterator[Any]:
    """The bolt app over Socket Mode, its Web API calls going to ``standin``, connected to a Socket Mode
    stand-in (yielded: ``send_event`` sends an envelope, ``acks`` holds the answers)."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler
    from slack_sdk import WebClient

    from tests.support.socket_standin import SocketModeStandIn

    sockets = SocketModeStandIn()
    standin.socket_url = sockets.url
    settings = Settings(
        home=tmp_path, offline=True, slack_bot_token="xoxb-test", slack_app_token="xapp-test", slack_api_url=standin.url
    )
    app = build_app(settings, db, AppContext(settings, db), socket_mode=True)
    handler = SocketModeHandler(app, "xapp-test", web_client=WebClient(base_url=standin.url))
    try:
        handler.connect()
        sockets.wait_connected()
        yield sockets
    finally:
        handler.close()
        sockets.stop()


def message_event(ts: str, text: str, user: str = "U2", **extra: Any) -> dict[str, Any]:
    return {"type": "message", "channel": "C1", "user": user, "text": text, "ts": ts, "event_ts": ts, **extra}


def count(db: Database, sql: str, *params: Any) -> int:
    with db.connection() as conn:
        row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0
