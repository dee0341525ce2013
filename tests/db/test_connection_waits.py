"""A thread that caps its wait for a connection (the HTTP front does, around each Slack request) gives up after
that long when the pool is full; other threads keep the pool's own wait and get the connection once it is free."""

from __future__ import annotations

import threading
import time

import pytest

from socialrag.db import Database
from socialrag.errors import DatabaseError


def test_a_capped_thread_gives_up_while_another_waits_its_turn(db: Database) -> None:
    one = Database(db.conninfo, pool_size=1)
    took: dict[str, float] = {}

    def capped() -> None:
        started = time.monotonic()
        with one.waiting_at_most(0.5), pytest.raises(DatabaseError), one.connection():
            pass
        took["capped"] = time.monotonic() - started

    def patient() -> None:
        started = time.monotonic()
        with one.connection() as conn:
            conn.execute("SELECT 1")
        took["patient"] = time.monotonic() - started

    try:
        with one.connection():  # the pool's only connection, held
            first = threading.Thread(target=capped)
            first.start()
            first.join(timeout=10)
            second = threading.Thread(target=patient)
            second.start()
            time.sleep(1.5)  # three times the capped thread's wait
        second.join(timeout=10)
    finally:
        one.close()
    assert 0.4 < took["capped"] < 1.5, took
    assert took["patient"] >= 1.4, took


def test_the_cap_ends_with_its_block(db: Database) -> None:
    one = Database(db.conninfo, pool_size=1)
    took: list[float] = []

    def capped_then_not() -> None:
        with one.waiting_at_most(0.3):
            pass
        started = time.monotonic()
        with one.connection():
            took.append(time.monotonic() - started)

    try:
        with one.connection():
            worker = threading.Thread(target=capped_then_not)
            worker.start()
            time.sleep(1.0)
        worker.join(timeout=10)
    finally:
        one.close()
    assert took and took[0] >= 0.9, took
