"""The Zotero push within the scheduler's tick: Zotero asking every client to wait (a ``Backoff`` header, a 429
with a long ``Retry-After``) or answering slowly never holds the tick that posts every channel's papers."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from slack_sdk import WebClient

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.reading.zotero import push_due
from tests.support.harness import Harness, T
from tests.support.zotero_standin import ZoteroStandIn


def bind(harness: Harness, zotero: ZoteroStandIn, **changes: object) -> Settings:
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    settings = harness.settings.with_changes(offline=False, zotero_api_key="zkey", zotero_api_url=zotero.url, **changes)
    harness.ctx.settings = settings
    assert "Zotero group 4242" in harness.command("zotero 4242")
    return settings


def save_many(db: Database, count: int) -> None:
    now = datetime.now(UTC)
    with db.connection() as conn:
        keys = [("arxiv", f"2401.{i:05d}") for i in range(count)]
        ids = storage.papers.ensure_papers(conn, keys)
        for key in keys:
            storage.reading_list.save_paper(conn, T, "C1", ids[key], "U2", now)


def end_the_wait(db: Database) -> None:
    with db.connection() as conn:
        conn.execute("UPDATE source_pace SET next_at = clock_timestamp() WHERE source = 'zotero'")


def test_zotero_asking_to_wait_never_holds_the_tick(harness: Harness, db: Database) -> None:
    """pyzotero slept through a ``Backoff`` or ``Retry-After`` before its next write, inside the tick that posts
    every channel's papers: Zotero saying "wait ten minutes" stopped PaperPing posting for ten minutes. The push
    now stops at once, keeps the rest for later, and no process writes to Zotero again before the wait is over."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero)
        save_many(db, 120)
        zotero.backoff = "30"  # Zotero is overloaded: the first batch is stored, with a request to slow down
        started = time.monotonic()
        assert push_due(db, settings, datetime.now(UTC)) == 50
        assert time.monotonic() - started < 10, "the tick did not wait out Zotero's Backoff"
        assert len(zotero.requests) == 1
        assert push_due(db, settings, datetime.now(UTC)) == 0 and len(zotero.requests) == 1, "nothing during the wait"
        end_the_wait(db)
        zotero.backoff = None
        zotero.rate_limited, zotero.retry_after = 1, "30"
        started = time.monotonic()
        assert push_due(db, settings, datetime.now(UTC)) == 0
        assert time.monotonic() - started < 10 and len(zotero.requests) == 2, "a 429 stops the round too"
        end_the_wait(db)
        assert push_due(db, settings, datetime.now(UTC)) == 20, "the batch never asked goes; the refused one waits"
        assert len(zotero.items["4242"]) == 70
    finally:
        zotero.stop()


def test_a_slow_zotero_costs_the_tick_a_bounded_time(harness: Harness, db: Database) -> None:
    """Each write had its own deadline, but the push had none: a long list to a Zotero that answers nothing in time
    cost the tick a deadline per batch of fifty. It now starts no write after its share of the tick."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero, http_timeout=0.3)  # each write gives up after 0.3 s without an answer
        save_many(db, 500)  # ten batches
        zotero.held_answers = 10
        assert push_due(db, settings, datetime.now(UTC)) == 0
        # writes start within 3 timeouts (0.9 s): three or four of them, never all ten
        assert len(zotero.requests) <= 5, len(zotero.requests)
    finally:
        zotero.stop()
