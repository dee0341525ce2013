"""A local stand-in of the Slack Web API for tests and for reproducing problems.

A small HTTP server on a free loopback port that keeps channels, users and messages (with replies and
reactions), paginates like Slack (``cursor``/``next_cursor``), can cap page sizes (the 15-message tier of
non-Marketplace apps), can answer ``429`` with ``Retry-After``, and records every call. Point
``SLACK_API_URL`` at ``standin.url``. Run ``python -m tests.support.slack_standin`` to serve an empty one.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.slack_streams import StreamedMessages


@dataclass
class Call:
    method: str
    params: dict[str, str]
    at: float
    token: str = ""  # the bearer token the call carried


@dataclass
class SlackState:
    team_id: str = "T0LAB"
    domain: str = "lab"
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    # channel id -> messages (top level and replies), any order
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    return int(base64.b64decode(cursor).decode().split(":", 1)[1])


class SlackStandIn(StreamedMessages):
    """The server. ``page_cap`` caps ``limit``; ``rate_limits`` maps a method to how many 429s to give first."""

    def __init__(self, state: SlackState | None = None) -> None:
        super().__init__()
        self.state = state or SlackState()
        self.calls: list[Call] = []
        self.page_cap = 1000
        self.rate_limits: dict[str, int] = {}
        # method -> least seconds between calls (Slack's tiers: Tier 3 is about 50 a minute); a faster call is
        # answered 429 with Retry-After, as Slack does
        self.paced: dict[str, float] = {}
        self._last_call: dict[str, float] = {}
        self.retry_after: float | str = 1  # a str: a Retry-After that is not a number of seconds
        self.hold: Callable[[Call], bool] | None = None  # when true for a call, the answer waits
        self.hold_seconds = 30.0
        # when true for a call, it is done first and its answer waits hold_seconds (a client timing out before
        # then never learns that Slack took it: a message posted whose answer was lost)
        self.late_answer: Callable[[Call], bool] | None = None
        self.posts: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []  # chat.update calls, with the message as it became
        self.ephemeral: list[dict[str, str]] = []  # chat.postEphemeral calls
        self.views: dict[str, Any] = {}
        self.view_hashes: dict[str, str] = {}  # each member's Home's hash now, as views.publish answered it
        self.assistant: list[dict[str, str]] = []  # assistant.threads.setStatus / setTitle / setSuggestedPrompts
        # files.getUploadURLExternal -> the upload (raw bytes POSTed to upload_url) -> files.completeUploadExternal
        self.pending_files: dict[str, dict[str, Any]] = {}
        self.files: list[dict[str, Any]] = []
        self.missing_scopes: set[str] = set()  # methods to answer with missing_scope
        self.fail_next: dict[str, int] = {}  # method -> how many of its next calls fail with internal_error
        # method -> a change made to its answers (a misbehaving Slack: a cursor that repeats, a bad Retry-After)
        self.rewrite: dict[str, Callable[[Call, dict[str, Any]], dict[str, Any]]] = {}
        self.responses: list[dict[str, str]] = []
        self.clock = 0
        self.socket_url: str | None = None
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/"

    @property
    def response_url(self) -> str:
        """Where slash-command answers go (Slack's ``response_url``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/response"

    def start(self) -> SlackStandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def calls_to(self, method: str) -> list[Call]:
        with self.lock:
            return [c for c in self.calls if c.method == method]

    # ----- the Web API methods -----
    def answer(
        self, method: str, params: dict[str, str], token: str = ""
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        call = Call(method, params, time.time(), token)
        with self.lock:
            self.calls.append(call)
            pace = self.paced.get(method)
            if pace is not None:
                since = call.at - self._last_call.get(method, 0.0)
                if since < pace:
                    return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(max(1, round(pace - since)))}
                self._last_call[method] = call.at
            left = self.rate_limits.get(method, 0)
            if left > 0:
                self.rate_limits[method] = left - 1
                return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(self.retry_after)}
        if self.hold and self.hold(call):
            time.sleep(self.hold_seconds)
        if method in self.missing_scopes:
            return 200, {"ok": False, "error": "missing_scope", "needed": "files:write"}, {}
        with self.lock:
            failing = self.fail_next.get(method, 0)
            if failing:
                self.fail_next[method] = failing - 1
        if failing:
            return 200, {"ok": False, "error": "internal_error"}, {}
        handler = getattr(self, "api_" + method.replace(".", "_"), None)
        if handler is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        answer = handler(params)
        if self.late_answer and self.late_answer(call):
            time.sleep(self.hold_seconds)
        change = self.rewrite.get(method)
        return 200, change(call, answer) if change else answer, {}

    def api_auth_test(self, params: dict[str, str]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": f"https://{self.state.domain}.slack.com/",
            "team": "Lab",
            "team_id": self.state.team_id,
            "user_id": "UBOT",
            "bot_id": "BBOT",
        }

    def api_conversations_info(self, params: dict[str, str]) -> dict[str, Any]:
        channel = self.state.channels.get(params.get("channel", ""))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        return {"ok": True, "channel": {**channel, "is_member": self.bot_is_member(channel)}}

    @staticmethod
    def bot_is_member(channel: dict[str, Any]) -> bool:
        """A channel listing its members has PaperPing (UBOT) in it only when it lists it."""
        return "UBOT" in channel.get("members", ["UBOT"])

    def api_conversations_members(self, params: dict[str, str]) -> dict[str, Any]:
        channel = self.state.channels.get(params.get("channel", ""))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        page = self._page([{"id": m} for m in channel.get("members", [])], params)
        return {"ok": True, "members": [m["id"] for m in page.pop("messages")], **page}

    def api_users_conversations(self, params: dict[str, str]) -> dict[str, Any]:
        """The channels ``user`` is in, as their ``members`` lists say (a private one only where PaperPing is in
        it too, as Slack answers a bot token), paged; direct messages are not listed."""
        user = params.get("user", "")
        if user not in self.state.users:
            return {"ok": False, "error": "user_not_found"}
        listed = [
            {"id": c["id"], "name": c.get("name", ""), "is_private": bool(c.get("is_private"))}
            for c in self.state.channels.values()
            if not c.get("is_im")
            and user in c.get("members", [])
            and (not c.get("is_private") or self.bot_is_member(c))
        ]
        page = self._page(listed, params)
        return {"ok": True, "channels": page.pop("messages"), **page}

    def leave_quietly(self, channel_id: str, user_id: str) -> None:
        """The member leaves the channel and no ``member_left_channel`` event reaches PaperPing (one lost)."""
        with self.lock:
            members = self.state.channels[channel_id].get("members", [])
            self.state.channels[channel_id]["members"] = [m for m in members if m != user_id]

    def api_users_info(self, params: dict[str, str]) -> dict[str, Any]:
        user = self.state.users.get(params.get("user", ""))
        return {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}

    @staticmethod
    def refused_blocks(params: dict[str, str]) -> str | None:
        """Slack's refusal of a message's blocks, if it would refuse them: more than 50 blocks or a section's text
        over 3,000 characters (``invalid_blocks``, as documented), or more than about 13,000 characters in all
        (``msg_blocks_too_long``, as Slack answers below every documented limit)."""
        value = params.get("blocks")
        if not value:
            return None
        blocks = json.loads(value) if isinstance(value, str) else value
        texts = [str((b.get("text") or {}).get("text", "")) for b in blocks if isinstance(b, dict)]
        if len(blocks) > 50 or any(len(t) > 3000 for t in texts):
            return "invalid_blocks"
        return "msg_blocks_too_long" if sum(len(t) for t in texts) > 13_000 else None

    def api_chat_postMessage(self, params: dict[str, str]) -> dict[str, Any]:
        channel = params.get("channel", "")
        if channel not in self.state.channels:
            return {"ok": False, "error": "channel_not_found"}
        refused = self.refused_blocks(params)
        if refused:
            return {"ok": False, "error": refused}
        if not self.bot_is_member(self.state.channels[channel]):
            return {"ok": False, "error": "not_in_channel"}
        with self.lock:
            self.clock += 1
            ts = f"{int(time.time())}.{self.clock:06d}"
        message: dict[str, Any] = {
            "type": "message",
            "user": "UBOT",
            "bot_id": "BBOT",
            "ts": ts,
            "text": params.get("text", ""),
        }
        for key in ("blocks", "metadata"):
            if params.get(key):
                value = params[key]
                message[key] = json.loads(value) if isinstance(value, str) else value
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        with self.lock:
            self.state.messages.setdefault(channel, []).append(message)
            self.posts.append({"channel": channel, **message})
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    # ----- the AI app panel (Agents & AI Apps): what the app set on an assistant thread, in order -----
    def _assistant(self, what: str, params: dict[str, str]) -> dict[str, Any]:
        """A thread's status or title, or suggested prompts: of a thread, or (``agent_view``'s prompts, which take
        no thread) of the member's conversation with the app."""
        channel, thread = params.get("channel_id", ""), params.get("thread_ts", "")
        if not channel.startswith("D") or (not thread and what != "prompts"):
            return {"ok": False, "error": "invalid_arguments"}
        value = params.get(what, "")
        with self.lock:
            self.assistant.append({"channel": channel, "thread_ts": thread, what: value})
        return {"ok": True}

    def api_assistant_threads_setStatus(self, params: dict[str, str]) -> dict[str, Any]:
        return self._assistant("status", params)

    def api_assistant_threads_setTitle(self, params: dict[str, str]) -> dict[str, Any]:
        return self._assistant("title", params)

    def api_assistant_threads_setSuggestedPrompts(self, params: dict[str, str]) -> dict[str, Any]:
        return self._assistant("prompts", params)

    def api_conversations_open(self, params: dict[str, str]) -> dict[str, Any]:
        """A direct message with one member (``users``), as Slack opens it for an app with ``im:write``: the
        same channel each time."""
        users = [u for u in params.get("users", "").split(",") if u]
        if len(users) != 1 or users[0] not in self.state.users:
            return {"ok": False, "error": "user_not_found"}
        dm = "D" + users[0]
        with self.lock:
            self.state.channels.setdefault(
                dm, {"id": dm, "is_im": True, "user": users[0], "members": [users[0], "UBOT"]}
            )
        return {"ok": True, "channel": {"id": dm}}

    def api_chat_update(self, params: dict[str, str]) -> dict[str, Any]:
        """As Slack documents it: ``channel`` and ``ts`` name the message; only the app's own messages can be
        updated (``cant_update_message``); ``text`` and ``blocks`` replace what it showed."""
        channel, ts = params.get("channel", ""), params.get("ts", "")
        refused = self.refused_blocks(params)
        if refused:
            return {"ok": False, "error": refused}
        with self.lock:
            found = next((m for m in self.state.messages.get(channel, []) if m["ts"] == ts), None)
            if found is None:
                return {"ok": False, "error": "message_not_found"}
            if found.get("user") != "UBOT":
                return {"ok": False, "error": "cant_update_message"}
            if "text" in params:
                found["text"] = params["text"]
            if params.get("blocks"):
                value = params["blocks"]
                found["blocks"] = json.loads(value) if isinstance(value, str) else value
            found["edited"] = {"user": "UBOT", "ts": f"{time.time():.6f}"}
            self.updates.append({"channel": channel, **found})
        return {"ok": True, "channel": channel, "ts": ts, "text": found["text"]}

    def api_chat_postEphemeral(self, params: dict[str, str]) -> dict[str, Any]:
        """A message only ``user`` sees, in ``channel``; it is not kept in the channel's history."""
        if params.get("channel", "") not in self.state.channels or not params.get("user"):
            return {"ok": False, "error": "channel_not_found"}
        with self.lock:
            self.ephemeral.append(params)
        return {"ok": True, "message_ts": f"{time.time():.6f}"}

    def api_chat_getPermalink(self, params: dict[str, str]) -> dict[str, Any]:
        ts = params.get("message_ts", "").replace(".", "")
        return {
            "ok": True,
            "permalink": f"https://{self.state.domain}.slack.com/archives/{params.get('channel')}/p{ts}",
        }

    def api_files_getUploadURLExternal(self, params: dict[str, str]) -> dict[str, Any]:
        """As Slack documents it: ``filename`` and ``length`` (bytes) are required; answers ``upload_url`` and
        ``file_id``. The file exists only once ``files.completeUploadExternal`` names it."""
        if not params.get("filename") or not str(params.get("length", "")).isdigit():
            return {"ok": False, "error": "invalid_arguments"}
        with self.lock:
            file_id = f"F{len(self.pending_files) + len(self.files) + 1:08d}"
            self.pending_files[file_id] = {
                "id": file_id,
                "name": params["filename"],
                "length": int(params["length"]),
                "alt_txt": params.get("alt_txt"),
                "data": None,
            }
        port = self._server.server_address[1]
        return {"ok": True, "upload_url": f"http://127.0.0.1:{port}/upload/{file_id}", "file_id": file_id}

    def receive_upload(self, file_id: str, data: bytes) -> int:
        with self.lock:
            pending = self.pending_files.get(file_id)
            if pending is None:
                return 404
            pending["data"] = data
        return 200

    def api_files_completeUploadExternal(self, params: dict[str, str]) -> dict[str, Any]:
        try:
            listed = json.loads(params.get("files") or "[]")
        except json.JSONDecodeError:
            return {"ok": False, "error": "invalid_arguments"}
        done = []
        with self.lock:
            for item in listed:
                pending = self.pending_files.get(str(item.get("id")))
                if pending is None or pending["data"] is None:
                    return {"ok": False, "error": "file_not_found"}
                if len(pending["data"]) != pending["length"]:
                    return {"ok": False, "error": "file_upload_size_mismatch"}
            for item in listed:
                pending = self.pending_files.pop(str(item["id"]))
                channel = params.get("channel_id") or ""
                file = {
                    **pending,
                    "title": item.get("title") or pending["name"],
                    "channels": [channel] if channel else [],
                    "initial_comment": params.get("initial_comment"),
                    "thread_ts": params.get("thread_ts"),
                }
                self.files.append(file)
                done.append({k: v for k, v in file.items() if k != "data"})
        return {"ok": True, "files": done}

    def api_views_publish(self, params: dict[str, str]) -> dict[str, Any]:
        """A Home view, refused as Slack refuses it: more than 100 blocks or a section's text over 3,000 characters
        (``invalid_arguments``), over 250 kB as sent, JSON with each character outside ASCII escaped
        (``view_too_large``), or a ``hash`` other than the member's Home's now (``hash_conflict``). Each view
        published gets a new hash, in the answer."""
        value = params.get("view")
        view = json.loads(value) if isinstance(value, str) else value
        blocks = (view or {}).get("blocks") or []
        texts = [str((b.get("text") or {}).get("text", "")) for b in blocks if isinstance(b, dict)]
        if len(blocks) > 100 or any(len(t) > 3000 for t in texts):
            return {"ok": False, "error": "invalid_arguments"}
        if len(json.dumps(view)) > 250_000:
            return {"ok": False, "error": "view_too_large"}
        user = params.get("user_id", "")
        with self.lock:
            if params.get("hash") and params["hash"] != self.view_hashes.get(user):
                return {"ok": False, "error": "hash_conflict"}
            self.views[user] = view
            self.view_hashes[user] = f"{time.time():.6f}.{len(self.calls)}"
            return {"ok": True, "view": {"id": "V1", "type": "home", "hash": self.view_hashes[user]}}

    def api_oauth_v2_access(self, params: dict[str, str]) -> dict[str, Any]:
        installed = {
            "ok": True,
            "app_id": "A1",
            "authed_user": {"id": "U9"},
            "scope": "chat:write,commands",
            "token_type": "bot",
            "access_token": "xoxb-installed",
            "bot_user_id": "UBOT2",
            "team": {"id": "T0NEW", "name": "New lab"},
            "enterprise": None,
            "is_enterprise_install": False,
        }
        if params.get("code") == "org-code":  # an Enterprise Grid organisation-wide install: no workspace named
            org = {"enterprise": {"id": "E0GRID", "name": "Grid"}, "is_enterprise_install": True, "team": None}
            return installed | org | {"access_token": "xoxb-org", "bot_user_id": "UBOT3"}
        if params.get("code") != "good-code":
            return {"ok": False, "error": "invalid_code"}
        return installed

    def api_auth_revoke(self, params: dict[str, str]) -> dict[str, Any]:
        return {"ok": True, "revoked": True}

    def api_apps_connections_open(self, params: dict[str, str]) -> dict[str, Any]:
        if self.socket_url is None:
            return {"ok": False, "error": "not_allowed_token_type"}
        return {"ok": True, "url": self.socket_url}

    def api_response(self, params: dict[str, str]) -> dict[str, Any]:
        with self.lock:
            self.responses.append(params)
        return {"ok": True}

    def _page(self, items: list[dict[str, Any]], params: dict[str, str]) -> dict[str, Any]:
        limit = min(int(params.get("limit") or 100), self.page_cap)
        start = _offset(params.get("cursor"))
        page = items[start : start + limit]
        more = start + limit < len(items)
        return {
            "ok": True,
            "messages": page,
            "has_more": more,
            "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""},
        }

    def api_conversations_history(self, params: dict[str, str]) -> dict[str, Any]:
        channel = params.get("channel", "")
        if channel not in self.state.channels:
            return {"ok": False, "error": "channel_not_found"}
        top = [
            m
            for m in self.state.messages.get(channel, [])
            if m.get("thread_ts") in (None, m["ts"]) or m.get("subtype") == "thread_broadcast"
        ]
        top.sort(key=lambda m: float(m["ts"]), reverse=True)  # newest first, as Slack answers
        return self._page(top, params)

    def api_conversations_replies(self, params: dict[str, str]) -> dict[str, Any]:
        channel, ts = params.get("channel", ""), params.get("ts", "")
        thread = [m for m in self.state.messages.get(channel, []) if m.get("thread_ts") == ts or m["ts"] == ts]
        if not thread:
            return {"ok": False, "error": "thread_not_found"}
        thread.sort(key=lambda m: float(m["ts"]))
        return self._page(thread, params)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _params(self) -> dict[str, str]:
                query = urlsplit(self.path).query
                body = b""
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    body = self.rfile.read(length)
                params = {k: v[0] for k, v in parse_qs(query).items()}
                if body:
                    if (self.headers.get("Content-Type") or "").startswith("application/json"):
                        params.update(
                            {k: v if isinstance(v, str) else json.dumps(v) for k, v in json.loads(body).items()}
                        )
                    else:
                        params.update({k: v[0] for k, v in parse_qs(body.decode()).items()})
                return params

            def _serve(self) -> None:
                path = urlsplit(self.path).path
                if path.startswith("/upload/"):  # the upload URL files.getUploadURLExternal handed out
                    length = int(self.headers.get("Content-Length") or 0)
                    status = standin.receive_upload(path.rsplit("/", 1)[-1], self.rfile.read(length))
                    reply = b"OK" if status == 200 else b"not found"
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                    return
                method = path.rsplit("/", 1)[-1]
                bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                status, body, headers = standin.answer(method, self._params(), bearer)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client gave up (``late_answer``)
                    self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

        return Handler


if __name__ == "__main__":  # pragma: no cover - manual use
    server = SlackStandIn().start()
    print(f"Slack stand-in at {server.url}; Ctrl-C to stop")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
