"""``/readyz``: whether this process can serve Slack now, that is whether its database answers.

``/healthz`` only says the process is up. A load balancer or an orchestrator that asks ``/readyz`` learns that
the database stopped answering, and can send Slack's requests elsewhere or page someone, while the process
keeps running and comes back by itself with the database.

Asking never holds one of the front's threads long, however often it is asked: the database is asked by one
thread of its own, at most once per ``FRESH_SECONDS``; a probe waits at most ``WAIT_SECONDS`` for that answer,
at most ``WAITERS`` probes wait at once, and the others get the last answer at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from socialrag.db import Database

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

log = logging.getLogger(__name__)

FRESH_SECONDS = 5.0  # an answer is reused this long
WAIT_SECONDS = 1.0  # a probe waits this long for the database's answer, then says it did not come
ASK_SECONDS = 2.0  # the asking thread waits this long for a connection
WAITERS = 2  # probes waiting at once (the front has eight threads; Slack's requests keep the rest)
UNKNOWN = "the database has not answered yet"


class ReadyPage:
    """The database's last answer, asked again when it is older than ``fresh`` seconds."""

    def __init__(self, db: Database, *, fresh: float = FRESH_SECONDS, wait: float = WAIT_SECONDS) -> None:
        self.db, self.fresh, self.wait = db, fresh, wait
        self._lock = threading.Lock()
        self._room = threading.BoundedSemaphore(WAITERS)
        self._answered_at: float | None = None
        self._problem: str | None = UNKNOWN  # None: the database answered
        self._asking: threading.Event | None = None

    def problem(self) -> str | None:
        """None when the database answered lately (or answers now, within ``wait``); else what is wrong."""
        with self._lock:
            if self._answered_at is not None and time.monotonic() - self._answered_at < self.fresh:
                return self._problem
            asked = self._asking
            if asked is None:
                asked = self._asking = threading.Event()
                threading.Thread(target=self._ask, args=(asked,), daemon=True, name="paperping-ready-page").start()
        if not self._room.acquire(blocking=False):  # enough probes wait already: the last answer will do
            return self._last()
        try:
            if not asked.wait(self.wait):
                return f"the database did not answer within {self.wait:g} s"
        finally:
            self._room.release()
        return self._last()

    def _last(self) -> str | None:
        with self._lock:
            return self._problem

    def _ask(self, asked: threading.Event) -> None:
        problem: str | None = "the database does not answer"
        detail = ""
        try:
            with self.db.connection(wait=ASK_SECONDS):  # the pool hands a connection out after a round trip
                pass
            problem = None
        except Exception as exc:  # whatever stops it (DatabaseError mostly), the database did not answer
            detail = str(exc) or type(exc).__name__
        finally:
            with self._lock:
                was = self._problem
                self._problem, self._answered_at, self._asking = problem, time.monotonic(), None
            asked.set()
        if problem is not None and problem != was:
            log.warning("not ready: %s (%s)", problem, detail)
        elif problem is None and was not in (None, UNKNOWN):
            log.warning("ready again: the database answers")

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """The WSGI answer to ``GET /readyz``: 200 ``ready``, or 503 with what is wrong (no address, no error
        text: the port faces the internet)."""
        problem = self.problem()
        status = "200 OK" if problem is None else "503 Service Unavailable"
        text = b"ready\n" if problem is None else problem.encode() + b"\n"
        start_response(status, [("Content-Type", "text/plain"), ("Cache-Control", "no-store")])
        return [text]
