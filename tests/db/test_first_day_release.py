"""The first day's five papers given back by the slot whose try drafted them and never sent them, and only then:
not by a slot due after they were drafted, not while another slot of the channel is being sent, not once a first
day's post drafted since went out. Against the real schema, with the slots' own queries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from socialrag import storage
from socialrag.db import Database

T, C = "T0LAB", "C0LAB"


def setup_channel(db: Database) -> None:
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T, domain="lab")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES (%s, %s, 'lab')", (T, C))


def release(db: Database, slot: int, slot_at: datetime, now: datetime) -> bool:
    with db.connection() as conn:
        return storage.topic_steering.release_unsent_onboarding(conn, T, C, slot, slot_at, now)


def test_the_first_day_is_given_back_only_by_the_slot_that_drafted_it_and_never_while_another_sends(
    db: Database,
) -> None:
    setup_channel(db)
    t0 = datetime(2031, 3, 2, 9, tzinfo=UTC)
    with db.connection() as conn:
        (paper,) = storage.papers.ensure_papers(conn, [("arxiv", "1706.03762")]).values()
        sending = storage.posts.open_slot(conn, T, C, "2031-03-02T09", None, at=t0).id
        assert storage.posts.take_slot(conn, sending, "A", t0, t0 + timedelta(minutes=10))
        draft = {"digest": [], "kind": "onboarding"}
        assert storage.posts.record_draft(conn, sending, paper, "template", 1.0, draft, worker="A")
        assert storage.posts.start_sending(conn, sending, "A", t0 + timedelta(minutes=10))
        assert storage.topic_steering.record_onboarding(conn, T, C, "little history", [paper], t0)
        other = storage.posts.open_slot(conn, T, C, "2031-03-02T08", None, at=t0 - timedelta(hours=1)).id
    minute = t0 + timedelta(minutes=1)
    # a slot due before the first day was drafted, with no draft of its own, while A still sends the first day
    assert not release(db, other, t0 - timedelta(hours=1), minute), "another slot is being sent"
    # a slot due after the first day was drafted never drafted it
    assert not release(db, other, t0 + timedelta(seconds=1), t0 + timedelta(minutes=11))
    # A's lease lapsed and A never posted: its slot's retry gives the five papers back
    assert release(db, sending, t0, t0 + timedelta(minutes=11))
    with db.connection() as conn:
        row = storage.topic_steering.load_onboarding(conn, T, C)
        assert row is not None and row.paper_ids == []
        # drafted again, and posted: no slot gives that first day back any more
        assert storage.topic_steering.record_onboarding(
            conn, T, C, "little history", [paper], t0 + timedelta(minutes=11)
        )
        storage.posts.record_posted(conn, sending, "1.000001", t0 + timedelta(minutes=11))
    assert not release(db, other, t0 - timedelta(hours=1), t0 + timedelta(minutes=20)), "it went out"
