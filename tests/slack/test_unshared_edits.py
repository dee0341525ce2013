"""A member edits their share to take its paper link out: the share and its thread leave the base, and no older
copy puts them back (a Slack export or a history page taken before the edit, the message event itself heard after
the edit). An edit that puts a link in is newer than a copy without it. A deletion stays a deletion. Through signed
events into the real bolt app, the real export importer and the real history read against the Slack stand-in."""

from __future__ import annotations

from pathlib import Path

from slack_sdk import WebClient

from bot.slack.backfill import backfill_channel
from bot.slack.pacer import HistoryPacer
from bot.slack.workspace_export import import_export
from socialrag import storage
from socialrag.db import Database
from tests.slack.test_event_shapes import changed
from tests.slack.test_older_copies import EDIT_1, EDIT_2, NEW, OLD, ROOT, T0, edited, stored
from tests.support.exports import msg, user, write_export
from tests.support.harness import Harness, T, count, message_event

REPLY = f"{T0 + 20:.6f}"


def original_export(tmp_path: Path, text: str = f"read this {OLD}") -> Path:
    """An export taken before any edit: the share as first posted, with the reply in its thread."""
    share = msg(T0 + 10, "U2", text, thread_ts=ROOT, reply_count=1)
    reply = msg(T0 + 20, "U3", "great paper", thread_ts=ROOT, parent_user_id="U2")
    return write_export(
        tmp_path / "old.zip", {"nlp-lab": ("C1", ["U2", "U3"], [share, reply])}, [user("U2", "ben"), user("U3", "c")]
    )


def read_history(h: Harness, text: str = f"read this {OLD}") -> None:
    """A history read whose pages Slack gave before the edit: the first text, and the reply in its thread."""
    h.standin.state.messages["C1"] = [
        {"type": "message", "user": "U2", "ts": ROOT, "text": text, "thread_ts": ROOT, "reply_count": 1},
        {"type": "message", "user": "U3", "ts": REPLY, "text": "great paper", "thread_ts": ROOT},
    ]
    client = WebClient(token="xoxb-test", base_url=h.standin.url)
    backfill_channel(h.db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))


def share_then_unshare(h: Harness) -> None:
    h.event(message_event(ROOT, f"read this {OLD}"))
    h.event(message_event(REPLY, "great paper", user="U3", thread_ts=ROOT))
    assert count(h.db, "SELECT count(*) FROM messages") == 2
    h.event(changed(edited("never mind, wrong link", EDIT_1), EDIT_1, before=f"read this {OLD}"))
    assert_not_shared(h.db)


def assert_not_shared(db: Database) -> None:
    """Neither the message nor its thread is in the base: no share of the paper counts anywhere in the channel."""
    assert stored(db) == ("", [])
    assert count(db, "SELECT count(*) FROM messages") == 0
    with db.connection() as conn:
        counts = storage.messages.load_channel_counts(conn, T, "C1")
        assert storage.messages.load_first_share_at(conn, T, "C1") is None
    assert (counts["messages"], counts["papers"], counts["replies"]) == (0, 0, 0)


def test_an_older_export_does_not_bring_back_a_link_an_edit_took_out(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    share_then_unshare(harness)
    import_export(db, original_export(tmp_path), progress=False)
    assert_not_shared(db)


def test_an_older_history_page_does_not_bring_back_a_link_an_edit_took_out(harness: Harness, db: Database) -> None:
    share_then_unshare(harness)
    read_history(harness)
    assert_not_shared(db)


def test_the_message_event_heard_after_its_edit_does_not_share_the_link(harness: Harness, db: Database) -> None:
    """Slack delivers the edit that took the link out before the message it edits."""
    harness.event(changed(edited("never mind, wrong link", EDIT_1), EDIT_1, before=f"read this {OLD}"))
    harness.event(message_event(ROOT, f"read this {OLD}"))
    harness.event(changed(edited(f"read this {OLD}", f"{T0 + 300:.6f}"), f"{T0 + 300:.6f}"))  # an earlier edit
    assert_not_shared(db)


def test_a_later_edit_that_puts_a_link_back_is_a_share_again(harness: Harness, db: Database, tmp_path: Path) -> None:
    """Taken out, then a new link put in: the newest edit stands against the older export and history."""
    share_then_unshare(harness)
    harness.event(changed(edited(f"this one {NEW}", EDIT_2), EDIT_2))
    assert stored(db) == (f"this one {NEW}", ["1810.04805"])
    import_export(db, original_export(tmp_path), progress=False)
    read_history(harness)
    assert stored(db) == (f"this one {NEW}", ["1810.04805"])
    harness.event(message_event(f"{T0 + 950:.6f}", "and a new reply", user="U3", thread_ts=ROOT))
    # its thread is a share's thread again: the reply the export still held and the new one are both in it
    assert count(db, "SELECT count(*) FROM messages WHERE thread_ts = %s AND ts <> %s", ROOT, ROOT) == 2


def test_an_edit_that_adds_a_link_stays_against_older_copies_without_it(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    harness.event(message_event(ROOT, "what should we read next?"))
    harness.event(changed(edited(f"what should we read next? {NEW}", EDIT_1), EDIT_1))
    assert stored(db) == (f"what should we read next? {NEW}", ["1810.04805"])
    import_export(db, original_export(tmp_path, "what should we read next?"), progress=False)
    read_history(harness, "what should we read next?")
    assert stored(db) == (f"what should we read next? {NEW}", ["1810.04805"])


def test_a_message_deleted_after_its_link_was_taken_out_stays_deleted(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """Taken out, deleted, then an edit made before the deletion and heard after it, an older export and history:
    nothing of it comes back, and the deletion is remembered as one."""
    share_then_unshare(harness)
    deleted = f"{T0 + 990:.6f}"
    harness.event({"type": "message", "subtype": "message_deleted", "channel": "C1", "ts": deleted, "deleted_ts": ROOT})
    harness.event(changed(edited(f"this one {NEW}", EDIT_2), EDIT_2))
    import_export(db, original_export(tmp_path), progress=False)
    read_history(harness)
    assert_not_shared(db)
    with db.connection() as conn:
        assert storage.deletions.load_deleted(conn, [(T, "C1", ROOT)]) == {(T, "C1", ROOT)}


def test_an_edit_of_a_message_that_never_linked_a_paper_is_not_remembered(harness: Harness, db: Database) -> None:
    """Chatter edited in the channel: nothing was shared before or after, so nothing of it is stored, not even
    that it was edited."""
    harness.event(message_event(ROOT, "lunch at noon?"))
    harness.event(changed(edited("lunch at one?", EDIT_1), EDIT_1, before="lunch at noon?"))
    assert count(db, "SELECT count(*) FROM messages") == 0
    assert count(db, "SELECT count(*) FROM deleted_messages") == 0
