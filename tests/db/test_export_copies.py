"""An export is a file of unknown origin, and it can list one message twice: twice in one day file, or in two day
files. The copy edited last stands, whatever the order the copies are read in: an older copy that still links the
paper does not bring back a share its newer copy shows edited with no link (nor the replies of its thread), and an
older linked copy does not replace a newer one's text and papers. A copy by another author, or edited at a time
that cannot be (after now), is no newer copy of the message and takes nothing away. Through the real importer
and Postgres, with the batches written at the end of the channel or after every day file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.slack import workspace_export
from bot.slack.workspace_export import import_export
from socialrag.db import Database
from tests.support.exports import user, write_export

T0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC; the next day file starts at T0 + 6400
ROOT, REPLY = f"{T0 + 10:.6f}", f"{T0 + 20:.6f}"
LATER_REPLY = f"{T0 + 7000:.6f}"  # a reply in the second day file
OLD = "<https://arxiv.org/abs/1706.03762|Attention>"
NEW = "<https://arxiv.org/abs/1810.04805|BERT>"
EDIT_1, EDIT_2 = f"{T0 + 500:.6f}", f"{T0 + 900:.6f}"
FUTURE = f"{4_102_444_000.0:.6f}"  # 2099
UNLINKED = "never mind, wrong link"


@pytest.fixture(params=["one batch", "a batch a day"])
def batches(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The pending batch is written when the channel ends, or after each day file (a copy met in a later day
    file then finds the older one already stored)."""
    if request.param == "a batch a day":
        monkeypatch.setattr(workspace_export, "BATCH", 1)
    return str(request.param)


def root(text: str, at: str | None = None, by: str = "U2") -> dict[str, Any]:
    raw = {"type": "message", "user": by, "ts": ROOT, "text": text, "thread_ts": ROOT, "reply_count": 1}
    return raw | ({"edited": {"user": by, "ts": at}} if at else {})


def reply(ts: str = REPLY) -> dict[str, Any]:
    return {"type": "message", "user": "U3", "ts": ts, "text": "great paper", "thread_ts": ROOT}


def imported(db: Database, tmp_path: Path, *days: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
    """Import an export whose channel has these day files, in this order; returns what is stored of the
    channel: (ts, text, papers) by ts."""
    files = {f"nlp-lab/2023-11-{14 + i}.json": json.dumps(day).encode() for i, day in enumerate(days)}
    path = write_export(
        tmp_path / "copies.zip",
        {"nlp-lab": ("C1", ["U2", "U3"], [])},
        [user("U2", "ben"), user("U3", "chen")],
        raw_files=files,
    )
    report = import_export(db, path, progress=False)
    assert report.problems == []
    with db.connection() as conn:
        rows = conn.execute(
            """
            SELECT m.ts, m.text, COALESCE(array_agg(i.value ORDER BY i.value)
                                          FILTER (WHERE i.value IS NOT NULL), '{}')
              FROM messages m
              LEFT JOIN message_papers mp ON mp.message_id = m.id
              LEFT JOIN paper_ids i ON i.paper_id = mp.paper_id
             GROUP BY m.ts, m.text ORDER BY m.ts
            """
        ).fetchall()
    return [(r[0], r[1], list(r[2])) for r in rows]


@pytest.mark.parametrize("first", [None, EDIT_1])
def test_one_day_file_with_the_linked_copy_then_its_newer_copy_without_the_link_shares_nothing(
    db: Database, tmp_path: Path, first: str | None
) -> None:
    assert imported(db, tmp_path, [root(f"read this {OLD}", first), root(UNLINKED, EDIT_2), reply()]) == []


@pytest.mark.parametrize("newer_first", [False, True])
def test_copies_in_two_day_files_share_nothing_when_the_newer_has_no_link(
    db: Database, tmp_path: Path, batches: str, newer_first: bool
) -> None:
    """The first day file holds the linked copy with the thread's reply, the second the copy edited with no link
    (and a later reply); or the other way round."""
    linked = [root(f"read this {OLD}"), reply()]
    unlinked = [root(UNLINKED, EDIT_1), reply(LATER_REPLY)]
    days = (unlinked, linked) if newer_first else (linked, unlinked)
    assert imported(db, tmp_path, *days) == []


@pytest.mark.parametrize("split", [False, True])
def test_of_two_linked_copies_the_newer_stands_when_the_older_is_read_last(
    db: Database, tmp_path: Path, batches: str, split: bool
) -> None:
    """The newer copy's text, papers and reactions stand (the older one's reactions were taken then)."""
    newer = root(f"this one {NEW}", EDIT_2) | {"reactions": [{"name": "fire", "users": ["U3"], "count": 1}]}
    older = root(f"read this {OLD}", EDIT_1) | {"reactions": [{"name": "eyes", "users": ["U2"], "count": 1}]}
    days = ([newer, reply()], [older]) if split else ([newer, older, reply()],)
    assert imported(db, tmp_path, *days) == [
        (ROOT, f"this one {NEW}", ["1810.04805"]),
        (REPLY, "great paper", []),
    ]
    with db.connection() as conn:
        assert conn.execute("SELECT user_id, emoji FROM reactions").fetchall() == [("U3", "fire")]


FAKES = {
    "another author": root(UNLINKED, EDIT_2, by="U3"),
    "edited in 2099": root(UNLINKED, FUTURE),
    "edited before it was posted": root(UNLINKED, f"{T0:.6f}"),
}


@pytest.mark.parametrize("hostile_first", [False, True])
@pytest.mark.parametrize("hostile", sorted(FAKES))
def test_a_copy_by_someone_else_or_edited_at_an_impossible_time_takes_nothing_away(
    db: Database, tmp_path: Path, batches: str, hostile: str, hostile_first: bool
) -> None:
    """Only a message's author edits it, and never before it was posted nor after now (``EDIT_SKEW`` ahead at
    most): such a copy without the link is no newer copy of the share, which stays with its thread."""
    fake = FAKES[hostile]
    real = [root(f"read this {OLD}", EDIT_1), reply()]
    days = ([fake], real) if hostile_first else (real, [fake])
    assert imported(db, tmp_path, *days) == [
        (ROOT, f"read this {OLD}", ["1706.03762"]),
        (REPLY, "great paper", []),
    ]


def test_a_link_put_back_in_a_newer_copy_keeps_the_thread(db: Database, tmp_path: Path, batches: str) -> None:
    """Linked, edited with no link, edited again with one: the last copy stands, with the replies read after the
    copy without the link as well as before it."""
    days = (
        [root(f"read this {OLD}"), reply()],
        [root(UNLINKED, EDIT_1), reply(LATER_REPLY)],
        [root(f"this one {NEW}", EDIT_2)],
    )
    stored = imported(db, tmp_path, *days)
    assert stored[0] == (ROOT, f"this one {NEW}", ["1810.04805"])


@pytest.mark.parametrize("hostile", sorted(FAKES))
def test_a_made_up_copy_does_not_hide_the_authors_newer_copy(
    db: Database, tmp_path: Path, batches: str, hostile: str
) -> None:
    """The linked copy, a made-up one, then the author's copy edited with no link: the author's stands."""
    days = ([root(f"read this {OLD}"), reply()], [FAKES[hostile]], [root(UNLINKED, EDIT_1)])
    assert imported(db, tmp_path, *days) == []


def test_an_edit_time_no_real_edit_has_is_not_kept_and_blocks_no_later_edit(
    db: Database, tmp_path: Path, batches: str
) -> None:
    """A copy edited in 2099 (or before it was posted) is stored as a copy whose edit time is unknown: the
    member's real later edit that took the link out still takes the share out."""
    assert imported(db, tmp_path, [root(f"read this {OLD}", FUTURE), reply()]) != []
    with db.connection() as conn:
        assert conn.execute("SELECT edited_at FROM messages WHERE ts = %s", (ROOT,)).fetchone() == (None,)
    assert imported(db, tmp_path, [root(UNLINKED, EDIT_2)]) == []
    other = {"type": "message", "user": "U3", "ts": LATER_REPLY, "text": f"see {NEW}", "edited": {"ts": f"{T0:.6f}"}}
    assert [r[0] for r in imported(db, tmp_path, [other])] == [LATER_REPLY]
    with db.connection() as conn:  # edited before it was posted
        assert conn.execute("SELECT edited_at FROM messages WHERE ts = %s", (LATER_REPLY,)).fetchone() == (None,)


def test_a_live_edit_from_a_host_whose_clock_is_behind_keeps_its_edit_time() -> None:
    """Half an hour ahead of this host's clock is a host running behind Slack's, not a crafted time: the edit time
    stands, so the edit is not dropped as older than a stored edited copy. A day and more ahead is unknown."""
    from datetime import UTC, datetime, timedelta

    from bot.slack.payloads import message_from_slack

    now = datetime.now(UTC)
    for ahead, kept in ((timedelta(minutes=30), True), (timedelta(days=2), False)):
        raw = {"type": "message", "user": "U2", "ts": f"{now.timestamp() - 60:.6f}", "text": "see"}
        raw["edited"] = {"user": "U2", "ts": f"{(now + ahead).timestamp():.6f}"}
        msg = message_from_slack(raw, "T1", "C1")
        assert msg is not None and (msg.edited_at is not None) is kept, ahead
