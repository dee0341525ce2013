"""A channel's asks with a cooldown (`now`, `export`), taken in one statement: of two asks at once, one goes
ahead, whichever arrived first; a time noted far ahead (a clock set back since) is not waited for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel

T, C = "T1", "C1"
NOW = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)
WAIT = timedelta(minutes=10)


@pytest.fixture
def channel(db: Database) -> Database:
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, C, "lab"))
    return db


@pytest.mark.parametrize("column", storage.settings.ASKS)
def test_of_two_asks_at_once_the_one_stamped_earlier_but_taking_it_later_waits(channel: Database, column: str) -> None:
    """Each ask carries the time it arrived. The one that arrived a moment earlier, but reached the database
    second, found a time after its own and went ahead too: two exports, two posts."""
    with channel.connection() as conn:
        assert storage.settings.take_ask(conn, T, C, NOW, WAIT, column=column) is None
        held = storage.settings.take_ask(conn, T, C, NOW - timedelta(milliseconds=3), WAIT, column=column)
    assert held == NOW


def test_a_time_noted_far_ahead_is_not_waited_for(channel: Database) -> None:
    with channel.connection() as conn:
        assert storage.settings.take_ask(conn, T, C, NOW + timedelta(days=2), WAIT, column="export_asked_at") is None
        assert storage.settings.take_ask(conn, T, C, NOW, WAIT, column="export_asked_at") is None
        assert storage.settings.take_ask(conn, T, C, NOW + timedelta(minutes=5), WAIT, column="export_asked_at") == NOW
