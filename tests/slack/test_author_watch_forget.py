"""The author watch beside a forget-me across two workspaces. A member of a Slack Connect channel let both their
own workspace's channel and the shared one hear of their papers; their forget-me there takes both workspaces'
forget lists, in one order. The watch noting their new paper took the lists one watcher at a time, in the order
the watchers came: holding the second workspace's while it waited for the first's, it and the forget-me waited on
each other, until the database ended one of them. Now the watch takes them all at once, in the same order."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import check_authors
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.models import Channel
from tests.slack.test_authors import DAY, GRAHAM, by, online
from tests.support.harness import Harness
from tests.support.labbase import AS_OF
from tests.support.scholar_standin import ScholarStandIn

FIRST, SECOND = "T0AAA", "T0ZZZ"  # the forget-me takes FIRST's list, then SECOND's


@pytest.fixture
def scholar() -> Iterator[ScholarStandIn]:
    standin = ScholarStandIn().start()
    yield standin
    standin.stop()


def _waiting(db: Database, seconds: float) -> bool:
    """Whether a session waits for a lock within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with db.connection() as conn:
            if conn.execute("SELECT 1 FROM pg_locks WHERE NOT granted LIMIT 1").fetchone():
                return True
        time.sleep(0.05)
    return False


def test_the_watch_takes_the_forget_lists_in_the_forget_mes_order(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    online(harness, db, scholar)
    first, second = scholar.papers[10:12]
    scholar.authors = {GRAHAM: {"name": "Graham Neubig", "papers": [by(first, GRAHAM, "Graham Neubig")]}}
    for team in (SECOND, FIRST):  # the watcher of the later workspace is stored (and comes) first
        with db.connection() as conn:
            storage.workspaces.upsert_team(conn, team)
            storage.workspaces.upsert_channel(conn, Channel(team, "C1", "papers"))
        harness.ctx.channels.activate(team, "C1", AS_OF - 30 * DAY)
        with db.connection() as conn:
            storage.settings.upsert_member_setting(conn, team, "U1", s2_author_id=GRAHAM, my_papers_channels=["C1"])
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY) == 0  # the first look
    scholar.authors[GRAHAM]["papers"].append(by(second, GRAHAM, "Graham Neubig"))
    noted: list[int] = []
    watch = threading.Thread(
        target=lambda: noted.append(check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY))
    )
    with db.connection() as forget_me:  # a forget-me that holds the first list and is about to take the second
        storage.locks.hold_forget_lists(forget_me, [FIRST], exclusive=True)
        watch.start()
        assert _waiting(db, 20), "the watch waits for the forget-me"
        with db.connection() as conn:
            free = conn.execute(
                "SELECT pg_try_advisory_xact_lock(hashtextextended(%(n)s, 0))", {"n": f"forget-list:{SECOND}"}
            ).fetchone()
        assert free == (True,), "the watch holds the second list while it waits for the first: a deadlock"
    watch.join(30)
    assert noted == [2]
