"""A local stand-in of Zotero's Web API (version 3), written from its documentation of write requests, for the
Zotero push of the reading list.

``POST /groups/<id>/items`` takes a JSON array of up to 50 items and answers 200 with, per index of the
array, ``success`` (the new item's key, with the object in ``successful``), ``unchanged`` or ``failed`` (a code
and a message: here an item without ``itemType`` or ``title``, or of an unknown type). The key goes in the
``Zotero-API-Key`` header or ``Authorization: Bearer``; a key without write access to the group gets 403, an
unknown group 404, a ``Zotero-Write-Token`` used before 412, and ``rate_limited`` writes 429 with
``Retry-After`` (``retry_after``); with ``backoff`` set, every answer carries that ``Backoff`` header.
``items[group]`` holds what was stored.

An item may bring its own ``key`` (eight characters of Zotero's key alphabet) with a ``version``: version 0 creates
it, and if an item of that key is already there (in the trash too) Zotero refuses it with a per-item 412 ("modified
since specified version"); a key without a version (and no ``If-Unmodified-Since-Version``) is a per-item 428.
A group id is read as a number, as Zotero does: ``/groups/04242/items`` is group 4242's. With ``odd_answers`` set,
that many writes are answered 200 with ``odd_answer`` as the body and nothing stored (an answer of the wrong shape);
with ``server_errors``, 500 with ``error_body``; ``padding`` adds that many bytes of filler to each 200 answer.
``trash`` marks an item deleted as a member's move to the trash does. ``held_answers`` writes are stored and then left unanswered for
``hold_seconds``, so that the client gives up first: Zotero kept the batch, the client never heard.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
KEY_FORM = re.compile(f"[{KEY_ALPHABET}]{{8}}")
ITEM_TYPES = frozenset({"conferencePaper", "preprint", "journalArticle", "book", "report", "thesis", "webpage"})


class ZoteroStandIn:
    def __init__(self, key: str, groups: dict[str, set[str]]) -> None:
        """``groups``: group id -> the keys of its collections; ``key`` may write to every one of them."""
        self.key = key
        self.groups = groups
        self.items: dict[str, list[dict[str, Any]]] = {g: [] for g in groups}
        self.tokens: set[str] = set()
        self.rate_limited = 0  # how many writes to answer 429 first
        self.retry_after = "2"  # the 429's Retry-After
        self.backoff: str | None = None  # a Backoff header on each answer (Zotero's "slow down" when overloaded)
        self.held_answers = 0  # how many writes to store and then not answer in time
        self.hold_seconds = 5.0
        self.odd_answers = 0  # how many writes to answer with ``odd_answer`` instead
        self.odd_answer: Any = None
        self.server_errors = 0  # how many writes to answer 500 with ``error_body``, storing nothing
        self.error_body = "Internal server error"
        self.padding = 0  # bytes of filler in each 200 answer (a server that sends far more than it should)
        self.version = 0  # the library's version, bumped by each stored item
        self.released = threading.Event()  # ends the holds when the stand-in stops
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
        self.released.set()
        self._server.shutdown()
        self._server.server_close()

    def write(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, dict[str, str]]:
        parts = path.strip("/").split("/")
        if len(parts) != 3 or parts[0] != "groups" or parts[2] != "items":
            return 404, "Not found", {}
        key = headers.get("zotero-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if key != self.key:
            return 403, "Forbidden", {}
        group = str(int(parts[1])) if parts[1].isascii() and parts[1].isdigit() else parts[1]
        if group not in self.groups:
            return 404, "Group not found", {}
        with self.lock:
            if self.rate_limited > 0:
                self.rate_limited -= 1
                return 429, "Too many requests", {"Retry-After": self.retry_after}
            token = headers.get("zotero-write-token")
            if token and token in self.tokens:
                return 412, "Write token already used", {}
            if token:
                self.tokens.add(token)
            if self.server_errors > 0:
                self.server_errors -= 1
                return 500, self.error_body, {}
            if self.odd_answers > 0:
                self.odd_answers -= 1
                return 200, self.odd_answer, {}
        try:
            items = json.loads(body)
        except ValueError:
            return 400, "Invalid JSON", {}
        if not isinstance(items, list) or len(items) > 50:
            return 413 if isinstance(items, list) else 400, "Send an array of at most 50 items", {}
        answer: dict[str, dict[str, Any]] = {"successful": {}, "success": {}, "unchanged": {}, "failed": {}}
        versioned = "if-unmodified-since-version" in headers
        for i, item in enumerate(items):
            problem = self._problem(group, item)
            if problem:
                answer["failed"][str(i)] = {"key": _key_of(item), "code": 400, "message": problem}
                continue
            with self.lock:
                code, outcome = self._store(group, item, versioned)
            if code != 200:
                answer["failed"][str(i)] = {"key": item.get("key", ""), "code": code, "message": outcome}
                continue
            answer["success"][str(i)] = outcome["key"]
            answer["successful"][str(i)] = {"key": outcome["key"], "version": outcome["version"], "data": outcome}
        if self.padding:
            answer["filler"] = {"0": "x" * self.padding}
        slow_down = {"Backoff": self.backoff} if self.backoff else {}
        return 200, answer, {"Last-Modified-Version": str(self.version), **slow_down}

    def _store(self, group: str, item: dict[str, Any], versioned: bool) -> tuple[int, Any]:
        """(200, the stored item) or (a per-item code, why), as Zotero answers an item with or without a key."""
        key = item.get("key")
        if key is None:
            key = "".join(secrets.choice(KEY_ALPHABET) for _ in range(8))
        elif not isinstance(key, str) or not KEY_FORM.fullmatch(key):
            return 400, f"'{key}' is not a valid item key"
        elif "version" not in item and not versioned:
            return (
                428,
                "Either If-Unmodified-Since-Version or 'version' property must be provided for 'key'-based writes",
            )
        existing = next((i for i in self.items[group] if i["key"] == key), None)
        expected = int(item.get("version") or 0)
        if existing is not None and existing["version"] > expected:
            return (
                412,
                f"Item has been modified since specified version (expected {expected}, found {existing['version']})",
            )
        if existing is None and expected > 0:
            return 404, f"Item doesn't exist (expected version {expected}; use 0 instead)"
        self.version += 1
        stored = {**item, "key": key, "version": self.version}
        if existing is not None:
            existing.clear()
            existing.update(stored)
        else:
            self.items[group].append(stored)
        return 200, stored

    def trash(self, group: str, key: str) -> None:
        """A member moves an item to the trash: it is still there, marked deleted."""
        with self.lock:
            self.version += 1
            for item in self.items[group]:
                if item["key"] == key:
                    item.update(deleted=1, version=self.version)

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
                with standin.lock:
                    hold = standin.held_answers > 0 and status == 200
                    standin.held_answers -= hold
                if hold:  # stored, but no answer before the client gives up
                    standin.released.wait(standin.hold_seconds)
                    return
                data = (json.dumps(answer) if not isinstance(answer, str) else answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if not isinstance(answer, str) else "text/plain")
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _key_of(item: Any) -> str:
    return str(item.get("key", "")) if isinstance(item, dict) else ""
