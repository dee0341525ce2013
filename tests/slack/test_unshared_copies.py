"""A member edits their share to take its paper link out while PaperPing is not listening (it was down, Slack gave
up resending the event): a newer copy of the message, a history page or an export that shows it edited with no
link, takes the share and its thread out as the edit would have, and remembers the edit, so that an older copy does
not bring them back. Nothing is written of chatter edited in the channel, an unedited or older copy removes nothing,
and an edited copy that still links a paper keeps the share. Through the real history read against the Slack
stand-in and the real export importer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slack_sdk import WebClient

from bot.slack.backfill import BackfillReport, backfill_channel
from bot.slack.pacer import HistoryPacer
from bot.slack.payloads import ts_to_datetime
from bot.slack.workspace_export import ImportReport, import_export
from socialrag.db import Database
from tests.slack.test_event_shapes import changed
from tests.slack.test_feedback import post_one
from tests.slack.test_older_copies import EDIT_1, EDIT_2, NEW, OLD, ROOT, T0, edited, stored
from tests.slack.test_unshared_edits import REPLY, assert_not_shared, original_export, read_history
from tests.support.exports import msg, user, write_export
from tests.support.harness import Harness, count, message_event

UNLINKED = "never mind, wrong link"


def share(h: Harness, reply: str = "great paper") -> None:
    """The share and a reply in its thread, heard as they were posted."""
    h.event(message_event(ROOT, f"read this {OLD}"))
    h.event(message_event(REPLY, reply, user="U3", thread_ts=ROOT))
    assert count(h.db, "SELECT count(*) FROM messages") == 2


def root(text: str, at: str | None, **extra: Any) -> dict[str, Any]:
    """The thread's first message as Slack gives it in a history page or an export, edited at ``at``."""
    raw = {"type": "message", "user": "U2", "ts": ROOT, "text": text, "thread_ts": ROOT, "reply_count": 1, **extra}
    return raw | ({"edited": {"user": "U2", "ts": at}} if at else {})


def reply(text: str = "great paper", at: str | None = None) -> dict[str, Any]:
    raw = {"type": "message", "user": "U3", "ts": REPLY, "text": text, "thread_ts": ROOT, "parent_user_id": "U2"}
    return raw | ({"edited": {"user": "U3", "ts": at}} if at else {})


def history(h: Harness, *messages: dict[str, Any]) -> BackfillReport:
    """A history read of the channel as Slack shows it now."""
    h.standin.state.messages["C1"] = list(messages)
    client = WebClient(token="xoxb-test", base_url=h.standin.url)
    return backfill_channel(h.db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))


def export(db: Database, tmp_path: Path, *messages: dict[str, Any]) -> ImportReport:
    """A workspace export of the channel taken now, imported."""
    path = write_export(
        tmp_path / "new.zip", {"nlp-lab": ("C1", ["U2", "U3"], list(messages))}, [user("U2", "ben"), user("U3", "c")]
    )
    return import_export(db, path, progress=False)


def remembered(db: Database) -> list[tuple[str, Any]]:
    with db.connection() as conn:
        return [tuple(r) for r in conn.execute("SELECT ts, edited_at FROM deleted_messages ORDER BY ts").fetchall()]


def test_a_newer_history_page_takes_out_a_share_whose_link_was_edited_out_unheard(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    share(harness)
    report = history(harness, root(UNLINKED, EDIT_1), reply())
    assert_not_shared(db)
    assert report.unshared == 2
    assert remembered(db) == [(ROOT, ts_to_datetime(EDIT_1))]
    # the copies older than that edit stay out, as after an edit event heard
    read_history(harness)
    import_export(db, original_export(tmp_path), progress=False)
    assert_not_shared(db)


def test_a_newer_export_takes_out_a_share_whose_link_was_edited_out_unheard(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    share(harness)
    report = export(db, tmp_path, root(UNLINKED, EDIT_1), reply())
    assert_not_shared(db)
    assert report.channels[0].unshared == 2
    assert remembered(db) == [(ROOT, ts_to_datetime(EDIT_1))]
    import_export(db, original_export(tmp_path), progress=False)
    read_history(harness)
    assert_not_shared(db)


def test_chatter_edited_in_the_channel_leaves_no_row(harness: Harness, db: Database, tmp_path: Path) -> None:
    """Edited messages that never linked a paper, nor were stored: neither reader writes anything of them."""
    chatter = [root("lunch at one?", EDIT_1), reply("no, two", EDIT_2), msg(T0 + 30, "U3", "ok", edited={"ts": EDIT_2})]
    history(harness, *chatter)
    export(db, tmp_path, *chatter)
    assert count(db, "SELECT count(*) FROM messages") == 0
    assert remembered(db) == []


def test_an_edited_copy_that_still_links_a_paper_keeps_the_share(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    share(harness)
    history(harness, root(f"this one {NEW}", EDIT_1), reply())
    assert stored(db) == (f"this one {NEW}", ["1810.04805"])
    export(db, tmp_path, root(f"this one {NEW}", EDIT_1), reply())
    assert stored(db) == (f"this one {NEW}", ["1810.04805"])
    assert count(db, "SELECT count(*) FROM messages") == 2
    assert remembered(db) == []


def test_an_unedited_or_older_copy_without_the_link_removes_nothing(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """A copy without the link that is not edited, or edited before the stored copy was, is not the newer one."""
    share(harness)
    history(harness, root("read this (link preview gone)", None), reply())
    export(db, tmp_path, root("read this (link preview gone)", None), reply())
    assert stored(db) == (f"read this {OLD}", ["1706.03762"])
    harness.event(changed(edited(f"this one {NEW}", EDIT_2), EDIT_2, before=f"read this {OLD}"))
    history(harness, root(UNLINKED, EDIT_1), reply())
    export(db, tmp_path, root(UNLINKED, EDIT_1), reply())
    assert stored(db) == (f"this one {NEW}", ["1810.04805"])
    assert count(db, "SELECT count(*) FROM messages") == 2
    assert remembered(db) == []


def test_a_reply_in_a_kept_thread_edited_to_drop_its_link_stays_a_reply(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    share(harness, reply=f"see also {NEW}")
    history(harness, root(f"read this {OLD}", None), reply("see also the paper above", EDIT_1))
    export(db, tmp_path, root(f"read this {OLD}", None), reply("see also the paper above", EDIT_1))
    assert count(db, "SELECT count(*) FROM messages WHERE ts = %s AND thread_ts = %s", REPLY, ROOT) == 1
    assert stored(db) == (f"read this {OLD}", ["1706.03762"])
    assert remembered(db) == []


def test_a_reply_that_was_a_share_of_its_own_leaves_when_an_export_shows_its_link_edited_out(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """A reply that links a paper in a thread PaperPing does not keep is a share of its own: the rule is
    ``is_kept``, as for the edit event."""
    harness.event(message_event(ROOT, "what should we read?"))
    harness.event(message_event(REPLY, f"this {NEW}", user="U3", thread_ts=ROOT))
    assert count(db, "SELECT count(*) FROM messages") == 1
    export(db, tmp_path, root("what should we read?", None), reply("this, I forgot the link", EDIT_1))
    assert count(db, "SELECT count(*) FROM messages") == 0
    assert remembered(db) == [(REPLY, ts_to_datetime(EDIT_1))]


def test_paperping_own_post_shown_edited_without_a_link_stays(harness: Harness, db: Database) -> None:
    """PaperPing edits its own posts (the counts on its buttons); a copy whose link the parser does not see is not
    a member's edit taking the paper out."""
    post = post_one(harness, db)
    before = count(db, "SELECT count(*) FROM messages WHERE ts = %s", post["ts"])
    assert before == 1
    own = {"type": "message", "user": "UBOT", "bot_id": "B1", "ts": post["ts"], "text": "Attention Is All You Need"}
    history(harness, own | {"edited": {"user": "UBOT", "ts": f"{float(post['ts']) + 60:.6f}"}})
    assert count(db, "SELECT count(*) FROM messages WHERE ts = %s", post["ts"]) == 1
    assert remembered(db) == []


def test_an_export_copy_edited_in_the_future_or_by_someone_else_takes_no_share_out(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """An export comes from a file of unknown origin. Its ``edited`` time may be a made-up one (the year 2099:
    every real edit after it would be taken for older, and the share kept out) and its author another member's
    (only a message's author can edit it in Slack): neither copy is an edit of the stored share, which stays with
    its thread, and no edit is remembered."""
    share(harness)
    future = f"{4_102_444_000.0:.6f}"  # 2099
    report = export(db, tmp_path, root(UNLINKED, future), reply())
    assert report.channels[0].unshared == 0
    export(db, tmp_path, root(UNLINKED, EDIT_1, user="U3"), reply())
    history(harness, root(UNLINKED, future), reply())
    assert stored(db) == (f"read this {OLD}", ["1706.03762"])
    assert count(db, "SELECT count(*) FROM messages") == 2
    assert remembered(db) == []
    # the author's real edit still takes it out
    export(db, tmp_path, root(UNLINKED, EDIT_1), reply())
    assert_not_shared(db)
