"""A local stand-in of Zotero's Web API (version 3), written from its documentation of write requests, for the
Zotero push of the reading list.

``POST /groups/<id>/items`` takes a JSON array of up to 50 items and answers 200 with, per index of the
array, ``success`` (the new item's key, with the object in ``successful``), ``unchanged`` or ``failed`` (a code
and a message: here an item without ``itemType`` or ``title``, or of an unknown type). The key goes in the
``Zotero-API-Key`` header or ``Authorization: Bearer``; a key without write access to the group gets 403, an
unknown group 404, a ``Zotero-Write-Token`` used before 412, and ``rate_limited`` writes 429 with
``Retry-After``. ``items[group]`` holds what was created.
"""

from __future__ import annotations

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ITEM_TYPES = frozenset({"conferencePaper", "preprint", "journalArticle", "book", "report", "thesis", "webpage"})


class ZoteroStandIn:
    def __init__(self, key: str, groups: dict[str, set[str]]) -> None:
        """``groups``: group id -> the keys of its collections; ``key`` may write to every one of them."""
        self.key = key
        self.groups = groups
        self.items: dict[str, list[dict[str, Any]]] = {g: [] for g in groups}
        self.tokens: set[str] = set()
        self.rate_limited = 0  # how many writes to answer 429 first
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def start(self) -> ZoteroStandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def write(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, dict[str, str]]:
        parts = path.strip("/").split("/")
        if len(parts) != 3 or parts[0] != "groups" or parts[2] != "items":
            return 404, "Not found", {}
        key = headers.get("zotero-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if key != self.key:
            return 403, "Forbidden", {}
        group = parts[1]
        if group not in self.groups:
            return 404, "Group not found", {}
        with self.lock:
            if self.rate_limited > 0:
                self.rate_limited -= 1
                return 429, "Too many requests", {"Retry-After": "2"}
            token = headers.get("zotero-write-token")
            if token and token in self.tokens:
                return 412, "Write token already used", {}
            if token:
                self.tokens.add(token)
        try:
            items = json.loads(body)
        except ValueError:
            return 400, "Invalid JSON", {}
        if not isinstance(items, list) or len(items) > 50:
            return 413 if isinstance(items, list) else 400, "Send an array of at most 50 items", {}
        answer: dict[str, dict[str, Any]] = {"successful": {}, "success": {}, "unchanged": {}, "failed": {}}
        for i, item in enumerate(items):
            problem = self._problem(group, item)
            if problem:
                answer["failed"][str(i)] = {"code": 400, "message": problem}
                continue
            new_key = secrets.token_hex(4).upper()
            stored = {**item, "key": new_key, "version": 1}
            with self.lock:
                self.items[group].append(stored)
            answer["success"][str(i)] = new_key
            answer["successful"][str(i)] = {"key": new_key, "version": 1, "data": stored}
        return 200, answer, {"Last-Modified-Version": "1"}

    def _problem(self, group: str, item: Any) -> str | None:
        if not isinstance(item, dict) or item.get("itemType") not in ITEM_TYPES:
            return "'itemType' must be a valid item type"
        if not str(item.get("title") or "").strip():
            return "'title' is required"
        unknown = set(item.get("collections") or []) - self.groups[group]
        if unknown:
            return f"Collection {sorted(unknown)[0]} not found"
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with standin.lock:
                    standin.requests.append(("POST", self.path))
                status, answer, extra = standin.write(self.path.split("?")[0], headers, body)
                data = (json.dumps(answer) if not isinstance(answer, str) else answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if not isinstance(answer, str) else "text/plain")
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        return Handler
