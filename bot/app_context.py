"""What the Slack listeners share: settings, the database, the pace of Slack calls, and one object per role:
Slack look-ups (``SlackDirectory``), starting in a channel (``ChannelStarts``) and waking this process's
scheduler and indexer (``Wakeups``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from bot.delivery.joining import ChannelStarts
from bot.slack.directory import SlackDirectory
from bot.slack.metrics import Metrics
from bot.slack.pacer import SlackPacer
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.recommender import Recommender

log = logging.getLogger(__name__)


@dataclass
class Wakeups:
    """Set by ``paperping run``: wake the scheduler (``/paperping now`` posts at once) and the indexer (focus
    links are looked up at once). Without them, the next tick does the work."""

    scheduler: Callable[[], None] | None = None
    indexer: Callable[[], None] | None = None

    def post_soon(self) -> None:
        if self.scheduler is not None:
            self.scheduler()

    def index_soon(self) -> None:
        if self.indexer is not None:
            self.indexer()


SLOW_WORKERS = 4  # slow requests (ranking, uploads, LLM answers) run at most this many at once...
SLOW_WAITING = 16  # ...with at most this many more waiting; past that the member is asked to try again
SLOW_PER_MEMBER = 2  # ...and at most this many of one member's at once (running or waiting)


class SlowWork:
    """Where slow requests run, off bolt's listener pool (five threads): however many slow commands members
    send, `help` and the buttons still answer at once. Bounded: ``submit`` says False when full, and one member
    (``owner``) holds at most ``per_owner`` places, so that one member's burst never makes another wait."""

    def __init__(
        self, workers: int = SLOW_WORKERS, waiting: int = SLOW_WAITING, per_owner: int = SLOW_PER_MEMBER
    ) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="paperping-slow")
        self._room = threading.BoundedSemaphore(workers + waiting)
        self._per_owner = per_owner
        self._held: dict[str, int] = {}
        self._busy = 0  # requests running or waiting
        self._lock = threading.Lock()

    def pending(self) -> int:
        """How many requests are running or waiting (work a request submits counts before the request ends)."""
        with self._lock:
            return self._busy

    def full_for(self, owner: str) -> bool:
        """Whether ``owner`` holds as many places as one member may."""
        with self._lock:
            return self._held.get(owner, 0) >= self._per_owner

    def submit(self, work: Callable[[], None], owner: str | None = None) -> bool:
        """Run ``work`` in the pool; False (and nothing run) when the pool and its queue are full, or when
        ``owner`` already has ``per_owner`` requests running or waiting."""
        with self._lock:
            if owner is not None and self._held.get(owner, 0) >= self._per_owner:
                return False
            if not self._room.acquire(blocking=False):
                return False
            if owner is not None:
                self._held[owner] = self._held.get(owner, 0) + 1
            self._busy += 1

        def run() -> None:
            try:
                work()
            except Exception:  # the work says what went wrong to the member itself; nothing escapes the pool
                log.exception("slow work failed")
            finally:
                with self._lock:
                    if owner is not None:
                        self._held[owner] -= 1
                        if not self._held[owner]:
                            del self._held[owner]
                    self._busy -= 1
                self._room.release()

        self._pool.submit(run)
        return True


@dataclass
class AppContext:
    settings: Settings
    db: Database
    pacer: SlackPacer = field(default_factory=SlackPacer)  # the one pace of Slack calls in this process
    wake: Wakeups = field(default_factory=Wakeups)
    recommender: Recommender | None = None  # set by `paperping run`: papers on demand ask it
    slow: SlowWork = field(default_factory=SlowWork)

    def __post_init__(self) -> None:
        self.slack = SlackDirectory(self.db)
        self.metrics = Metrics(self.db)  # what /metrics shows: this process's counts and the database's figures
        self.channels = ChannelStarts(self.db, self.pacer)
