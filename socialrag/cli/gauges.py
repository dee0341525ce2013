"""The figures an admin watches (``/metrics``, ``paperping status --json``), from Postgres, the truth every process
shares: events handled, posts made and held, the indexing and full-text queues, each source's failures and holds,
LLM calls and tokens per workspace today.

``load_figures`` reads them in one short transaction (``paperping status --json`` prints them as they are);
``FiguresCache`` reads them at most once per ``FIGURES_SECONDS`` however many scrapes ask, one read at a time, and
a scrape waits at most ``WAIT_SECONDS`` for it (a slow database: the last figures are served with their age);
``FiguresCollector`` gives them to ``prometheus_client``. Label values are workspace ids, source names and fixed
words, each checked against a pattern: nothing a member wrote, no channel, member or paper becomes a label.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from socialrag import storage
from socialrag.db import Database

log = logging.getLogger(__name__)

FIGURES_SECONDS = 15.0  # the database is asked at most once per this many seconds, however many scrapes
WAIT_SECONDS = 1.0  # a scrape waits at most this long for fresh figures, then serves the last ones
EVENTS_WINDOW = timedelta(hours=1)  # events handled are counted over this window (ids are kept a day)
_TEAM = re.compile(r"[A-Z0-9]{1,24}")  # a Slack workspace id (T0123ABCD, E... for a grid)
_WORD = re.compile(r"[a-z][a-z0-9_-]{0,39}")  # a source's name, a status, an outcome: words of the code


def team_label(team: str | None) -> str:
    """A workspace id as a label; anything else (none, or not shaped like an id) is ``unknown``."""
    return team if team and _TEAM.fullmatch(team) else "unknown"


def word_label(word: str | None, other: str = "other") -> str:
    """A name from the code (a source, a status) as a label; anything else is ``other``."""
    return word if word and _WORD.fullmatch(word) else other


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


def _add(table: dict[str, Any], key: str, value: int) -> None:
    table[key] = table.get(key, 0) + value


def load_figures(db: Database, now: datetime | None = None) -> dict[str, Any]:
    """Every figure, as plain JSON-ready data with only labels that pass ``team_label``/``word_label``."""
    now = now or datetime.now(UTC)
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    with db.connection() as conn:
        storage.figures.limit_figures_time(conn)
        events = storage.figures.load_events_handled(conn, now - EVENTS_WINDOW)
        posts = storage.figures.load_post_outcomes(conn)
        channels = storage.figures.load_channel_holds(conn)
        waiting, ready, working, given_up, oldest = storage.figures.load_index_queue(conn)
        texts, reading, retry_due = storage.figures.load_fulltext_reading(conn)
        sources = storage.figures.load_source_health(conn)
        llm = storage.figures.load_llm_use(conn, day)
    out: dict[str, Any] = {  # moments, not ages: the same data gives the same figures (a restore is checked so)
        "events_handled_last_hour": {},
        "posts": {},
        "channels": {},
        "index_queue": {"waiting": waiting, "ready": ready, "working": working, "given_up": given_up},
        "index_queue_oldest_ready_at": _iso(oldest),
        "fulltext": {"by_status": {}, "reading": reading, "oldest_retry_due_at": _iso(retry_due)},
        "sources": {},
        "llm_today": {"day": day.date().isoformat(), "workspaces": {}},
    }
    for team, n in events:
        _add(out["events_handled_last_hour"], team_label(team), n)
    for key, rows in (("posts", posts), ("channels", channels)):
        for team, word, n in rows:
            _add(out[key].setdefault(team_label(team), {}), word_label(word), n)
    for status, n in texts:
        _add(out["fulltext"]["by_status"], word_label(status), n)
    for source, failures, held in sources:
        name = word_label(source, "fulltext-hosts")  # a paper's host is data, not a name of the code: summed
        entry = out["sources"].setdefault(name, {"failures": 0, "held": 0})
        entry["failures"] += failures
        entry["held"] += int(held)
    for team, outcome, calls, prompt, completion in llm:
        entry = out["llm_today"]["workspaces"].setdefault(team_label(team), {"calls": {}, "tokens": {}})
        _add(entry["calls"], word_label(outcome), calls)
        _add(entry["tokens"], "prompt", prompt)
        _add(entry["tokens"], "completion", completion)
    return out


class FiguresCache:
    """``load`` at most once per ``seconds``, one load at a time, off the caller's thread: a scrape takes the
    figures of the last load, waiting at most ``wait`` seconds for a running one."""

    def __init__(
        self,
        load: Callable[[], dict[str, Any]],
        seconds: float = FIGURES_SECONDS,
        wait: float = WAIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load, self.seconds, self.wait, self._clock = load, seconds, wait, clock
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._done.set()
        self._figures: dict[str, Any] | None = None
        self._taken = -1e18  # when the last load started (a failed one counts: no retry storm)
        self._loaded = -1e18  # when the figures served were loaded
        self.failed: str | None = None

    def figures(self) -> tuple[dict[str, Any] | None, float]:
        """The figures and their age in seconds (``inf`` when none was ever loaded)."""
        with self._lock:
            due = self._done.is_set() and self._clock() - self._taken >= self.seconds
            if due:
                self._taken = self._clock()
                self._done.clear()
                threading.Thread(target=self._refresh, name="metrics-figures", daemon=True).start()
            done = self._done
        if not done.is_set():
            done.wait(self.wait)
        with self._lock:
            return self._figures, self._clock() - self._loaded if self._figures is not None else float("inf")

    def _refresh(self) -> None:
        try:
            figures = self._load()
        except Exception as exc:  # the database is away or slow: the last figures stay, with their age
            log.warning("could not read the figures for /metrics: %s", exc)
            with self._lock:
                self.failed = type(exc).__name__
        else:
            with self._lock:
                self._figures, self._loaded, self.failed = figures, self._clock(), None
        finally:
            self._done.set()


def _gauge(name: str, doc: str, labels: list[str], rows: Iterator[tuple[list[str], float]]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=labels)
    for values, value in rows:
        family.add_metric(values, value)
    return family


class FiguresCollector(Collector):
    """The database's figures as Prometheus gauges (``paperping_*``), from a ``FiguresCache``."""

    def __init__(self, cache: FiguresCache) -> None:
        self.cache = cache

    def collect(self) -> Iterator[GaugeMetricFamily]:
        f, age = self.cache.figures()
        yield _gauge("paperping_figures_age_seconds", "age of the database figures below", [], iter([([], age)]))
        if f is None:
            return
        yield from figure_gauges(f)


def _age(at: str | None) -> float:
    return max(0.0, (datetime.now(UTC) - datetime.fromisoformat(at)).total_seconds()) if at else 0.0


def figure_gauges(f: dict[str, Any]) -> Iterator[GaugeMetricFamily]:
    """The gauges of one ``load_figures`` result."""
    yield _gauge(
        "paperping_events_handled_last_hour",
        "Slack events and clicks handled in the last hour, every process (Postgres)",
        ["team"],
        (([t], n) for t, n in f["events_handled_last_hour"].items()),
    )
    yield _gauge(
        "paperping_posts",
        "recommendations by outcome: posted, failed, or on their way",
        ["team", "outcome"],
        (([t, o], n) for t, by in f["posts"].items() for o, n in by.items()),
    )
    yield _gauge(
        "paperping_channels",
        "active channels by state: posting, empty (last slot held: nothing to post), paused, stopped",
        ["team", "state"],
        (([t, s], n) for t, by in f["channels"].items() for s, n in by.items()),
    )
    q = f["index_queue"]
    yield _gauge("paperping_index_queue", "papers in the indexing queue", ["state"], (([k], v) for k, v in q.items()))
    yield _gauge(
        "paperping_index_queue_oldest_ready_seconds",
        "age of the oldest paper ready to index (0 when none is)",
        [],
        iter([([], _age(f["index_queue_oldest_ready_at"]))]),
    )
    ft = f["fulltext"]
    yield _gauge(
        "paperping_fulltexts",
        "papers' full texts by status",
        ["status"],
        (([k], v) for k, v in ft["by_status"].items()),
    )
    yield _gauge("paperping_fulltext_reading", "papers being read now", [], iter([([], ft["reading"])]))
    yield _gauge(
        "paperping_fulltext_oldest_retry_due_seconds",
        "how long the oldest due retry of a full text has waited (0 when none)",
        [],
        iter([([], _age(ft["oldest_retry_due_at"]))]),
    )
    src = f["sources"]
    yield _gauge(
        "paperping_source_failures", "failures in a row", ["source"], (([s], v["failures"]) for s, v in src.items())
    )
    yield _gauge(
        "paperping_source_held", "1 when held by every process", ["source"], (([s], v["held"]) for s, v in src.items())
    )
    llm = f["llm_today"]["workspaces"]
    yield _gauge(
        "paperping_llm_calls_today",
        "LLM calls since midnight UTC, by outcome",
        ["team", "outcome"],
        (([t, o], n) for t, e in llm.items() for o, n in e["calls"].items()),
    )
    yield _gauge(
        "paperping_llm_tokens_today",
        "LLM tokens since midnight UTC",
        ["team", "kind"],
        (([t, k], n) for t, e in llm.items() for k, n in e["tokens"].items()),
    )
