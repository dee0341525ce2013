"""What Slack said is gone stays gone, whatever order its events arrive in: a deletion heard before its message or
an edit, a reaction removal heard before its add. Deletions are remembered 30 days, then forgotten."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from slack_sdk import WebClient

from socialrag import knowledge, storage
from socialrag.db import Database
from socialrag.knowledge import index_messages
from socialrag.models import Channel, Message, PaperRef, Reaction
from tests.support.slots import slot_worker

T = "T0LAB"
AT = datetime(2025, 3, 3, 10, tzinfo=UTC)
REF = PaperRef("arxiv", "1706.03762", "https://arxiv.org/abs/1706.03762")


def _share(ts: str, text: str = "<https://arxiv.org/abs/1706.03762>", thread_ts: str | None = None) -> Message:
    return Message(T, "C1", ts, "U1", text, AT, thread_ts=thread_ts, papers=(REF,))


def _stored(db: Database) -> list[str]:
    with db.connection() as conn:
        return [r[0] for r in conn.execute("SELECT ts FROM messages ORDER BY ts").fetchall()]


def _channel(db: Database) -> None:
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "papers"))


def test_a_deletion_heard_first_keeps_out_the_message_its_edit_and_its_thread(db: Database) -> None:
    _channel(db)
    with db.connection() as conn:
        assert knowledge.record_deletion(conn, T, "C1", "7.000001") == 0  # message_deleted, handled first
        kept = knowledge.record_message(conn, _share("7.000001", thread_ts="7.000001"), by_member=True)
        reply = Message(T, "C1", "7.000002", "U2", "a reply to it", AT, thread_ts="7.000001")
        knowledge.record_edit(conn, reply)
        knowledge.record_deletion(conn, T, "C1", "8.000001")
        knowledge.record_edit(conn, _share("8.000001", "now with a link <https://arxiv.org/abs/1706.03762>"))
        knowledge.record_message(conn, _share("9.000001"), by_member=True)  # a share never deleted
    assert not kept
    assert _stored(db) == ["9.000001"]


def test_a_reaction_removed_before_its_add_is_heard_stays_removed(db: Database) -> None:
    """The removal is heard first, then the add it took back: the reaction is not stored. A reaction added again
    after the removal counts, and a later read of the history that still shows it is believed."""
    _channel(db)
    with db.connection() as conn:
        knowledge.record_message(conn, _share("1.000001"), by_member=True)
        removed_at = AT + timedelta(minutes=1)
        knowledge.record_reaction(conn, T, "C1", "1.000001", "U2", "-1", added=False, at=removed_at)
        late = knowledge.record_reaction(conn, T, "C1", "1.000001", "U2", "-1", added=True, at=AT)
        before = conn.execute("SELECT count(*) FROM reactions").fetchone()[0]
        again = knowledge.record_reaction(
            conn, T, "C1", "1.000001", "U2", "-1", added=True, at=removed_at + timedelta(seconds=1)
        )
        after = conn.execute("SELECT user_id, emoji FROM reactions").fetchall()
        history = replace(_share("1.000001"), reactions=(Reaction("U2", "-1"),))
        index_messages(conn, [history])  # the history, read afterwards, shows the reaction
        read = conn.execute("SELECT user_id, emoji FROM reactions").fetchall()
    assert not late and before == 0
    assert again and after == [("U2", "-1")] and read == after


def test_a_history_read_after_a_removal_brings_back_a_reaction_added_again_unheard(db: Database) -> None:
    """U2 took :+1: off (heard), then put it back while PaperPing was down (not heard). The history, read after
    the removal, shows :+1: and is believed; an export (an older snapshot) that shows it is not."""
    _channel(db)
    shown = replace(_share("1.000001"), reactions=(Reaction("U2", "+1"),))
    with db.connection() as conn:
        index_messages(conn, [shown])
        knowledge.record_reaction(conn, T, "C1", "1.000001", "U2", "+1", added=False, at=AT + timedelta(minutes=1))
        index_messages(conn, [shown])  # an import of an export
        imported = conn.execute("SELECT user_id, emoji FROM reactions").fetchall()
        index_messages(conn, [shown], read_at=AT + timedelta(minutes=5))  # Slack's history, read later
        read = conn.execute("SELECT user_id, emoji FROM reactions").fetchall()
        index_messages(conn, [shown], read_at=AT)  # a read older than the removal
        older = conn.execute("SELECT user_id, emoji FROM reactions").fetchall()
    assert imported == [] and read == [("U2", "+1")] and older == []


def test_a_removal_heard_after_a_later_add_again_leaves_the_reaction(db: Database) -> None:
    """U2 reacted, took it off, and reacted again; Slack sent the removal again after the second add was heard.
    The reaction stays, as it does in Slack."""
    _channel(db)
    with db.connection() as conn:
        knowledge.record_message(conn, _share("1.000001"), by_member=True)
        for minute, added in ((1, True), (3, True), (2, False)):
            at = AT + timedelta(minutes=minute)
            knowledge.record_reaction(conn, T, "C1", "1.000001", "U2", "+1", added=added, at=at)
        stored = conn.execute("SELECT user_id, emoji FROM reactions").fetchall()
    assert stored == [("U2", "+1")]


def test_a_removal_is_not_written_for_a_forgotten_member_and_forget_me_clears_theirs(db: Database) -> None:
    _channel(db)
    with db.connection() as conn:
        knowledge.record_reaction(conn, T, "C1", "1.000001", "U2", "eyes", added=False, at=AT)
        storage.privacy.forget_member(conn, T, "U2")
        knowledge.record_reaction(conn, T, "C1", "1.000001", "U2", "tada", added=False, at=AT)
        rows = conn.execute("SELECT count(*) FROM removed_reactions").fetchone()[0]
    assert rows == 0


def test_deletions_are_forgotten_after_thirty_days(db: Database) -> None:
    """The slot worker's tick prunes what is older than 30 days, as it prunes the events already seen."""
    _channel(db)
    now = datetime.now(UTC)
    with db.connection() as conn:
        knowledge.record_deletion(conn, T, "C1", "1.000001")
        knowledge.record_deletion(conn, T, "C1", "2.000001")
        conn.execute("UPDATE deleted_messages SET deleted_at = %s WHERE ts = '1.000001'", (now - timedelta(days=31),))
        knowledge.record_reaction(conn, T, "C1", "3.000001", "U2", "-1", added=False, at=now - timedelta(days=31))
        knowledge.record_reaction(conn, T, "C1", "3.000001", "U3", "-1", added=False, at=now - timedelta(days=29))
    slot_worker(db, lambda team: WebClient(), lambda *a: None, clock=lambda: now).tick()
    with db.connection() as conn:
        deleted = [r[0] for r in conn.execute("SELECT ts FROM deleted_messages")]
        removed = [r[0] for r in conn.execute("SELECT user_id FROM removed_reactions")]
    assert deleted == ["2.000001"] and removed == ["U3"]


def _waiting_news(conn: psycopg.Connection, pid: int) -> None:
    watcher = storage.followed_authors.Watcher(T, "C2", "followed", None, AT)
    assert storage.followed_authors.record_author_news(conn, watcher, "A1", pid, AT)


def _follow_up(conn: psycopg.Connection, pid: int) -> None:
    assert storage.follow_ups.record_follow_up(conn, T, "C2", pid, "published", "NeurIPS", {}, AT)


def _removed_from_list(conn: psycopg.Connection, pid: int) -> None:
    storage.reading_list.remove_paper(conn, T, "C2", pid, AT)


def _unsaved(conn: psycopg.Connection, pid: int) -> None:
    storage.reading_list.unsave_paper(conn, T, "C2", pid, "U2", AT)


def _offered_first_day(conn: psycopg.Connection, pid: int) -> None:
    assert storage.topic_steering.record_onboarding(conn, T, "C2", "little history", [pid], AT)


@pytest.mark.parametrize(
    ("refer", "table"),
    [
        (_waiting_news, "author_news"),
        (_follow_up, "follow_ups"),
        (_removed_from_list, "reading_list_removals"),
        (_unsaved, "reading_list_unsaves"),
        (_offered_first_day, "onboarding"),
    ],
)
def test_deleting_the_only_share_keeps_a_paper_another_channel_still_refers_to(
    db: Database, refer: Callable[[psycopg.Connection, int], None], table: str
) -> None:
    """#other waits to announce a followed author's paper, has a follow-up of it to post, took it off or unsaved
    it in its reading list, or offered it on its first day. A member shares its link in #papers and deletes the
    message: the paper stays, and so does what #other had of it."""
    _channel(db)
    with db.connection() as conn:
        storage.workspaces.upsert_channel(conn, Channel(T, "C2", "other"))
        index_messages(conn, [_share("1740990000.000100")])
        pid = conn.execute("SELECT paper_id FROM paper_ids WHERE value = '1706.03762'").fetchone()[0]
        refer(conn, pid)
    with db.connection() as conn:
        knowledge.record_deletion(conn, T, "C1", "1740990000.000100")
    with db.connection() as conn:
        assert _stored(db) == []
        assert conn.execute("SELECT count(*) FROM papers WHERE id = %s", (pid,)).fetchone()[0] == 1
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1


def test_an_edit_that_took_the_link_out_keeps_out_only_the_copies_older_than_it(db: Database) -> None:
    """A copy from a moment before the edit stays out, with a reply in its thread; a copy of that very edit which
    Slack gave a link preview, and so a paper, is no older and is stored. A change that is no edit (a preview on a
    message never kept) remembers nothing, and an edit heard after a deletion leaves it a deletion."""
    _channel(db)
    edit = AT + timedelta(hours=1)
    gone = replace(_share("5.000001", "never mind", thread_ts="5.000001"), papers=(), edited_at=edit)
    reply = Message(T, "C1", "5.000002", "U2", "a reply to it", AT, thread_ts="5.000001")
    with db.connection() as conn:
        knowledge.record_message(conn, _share("5.000001", thread_ts="5.000001"), by_member=True)
        knowledge.record_edit(conn, gone)
        index_messages(conn, [replace(gone, edited_at=edit - timedelta(microseconds=1), papers=(REF,)), reply])
        assert _stored(db) == []
        knowledge.record_edit(conn, replace(_share("6.000001", "no paper here"), papers=()))
        knowledge.record_deletion(conn, T, "C1", "7.000001")
        knowledge.record_edit(conn, replace(_share("7.000001", "never mind"), papers=(), edited_at=edit))
        marks = conn.execute("SELECT ts, edited_at FROM deleted_messages ORDER BY ts").fetchall()
        assert marks == [("5.000001", edit), ("7.000001", None)]
        index_messages(conn, [replace(gone, papers=(REF,)), reply])  # the edit itself, with its link preview
        assert conn.execute("SELECT ts FROM deleted_messages").fetchall() == [("7.000001",)]
    assert _stored(db) == ["5.000001", "5.000002"]
