"""Importing Slack exports into the real Postgres: what is kept, idempotency, malformed files."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.slack.workspace_export import import_export
from socialrag import knowledge, storage
from socialrag.db import Database
from socialrag.errors import InputError
from tests.support.exports import DAY, T0, TEAM, lab_export, msg, user, write_export


def test_import_keeps_only_papers_threads_and_reactions(db: Database, tmp_path: Path) -> None:
    report = import_export(db, lab_export(tmp_path), domain="lab", progress=False)
    assert report.team_id == TEAM
    assert not report.problems
    with db.connection() as conn:
        counts = storage.messages.load_channel_counts(conn, TEAM, "C1")
        texts = [r[0] for r in conn.execute("SELECT text FROM messages WHERE channel_id = 'C1' ORDER BY ts")]
        papers = conn.execute(
            """SELECT i.scheme || ':' || i.value FROM message_papers mp
                 JOIN paper_ids i USING (paper_id) WHERE mp.channel_id = 'C1' ORDER BY 1"""
        ).fetchall()
        permalink = conn.execute("SELECT permalink FROM messages WHERE text = 'same here'").fetchone()
        names = dict(conn.execute("SELECT user_id, display_name FROM members").fetchall())
        label = conn.execute("SELECT label FROM message_papers WHERE label IS NOT NULL ORDER BY label").fetchall()
    assert "Morning! Coffee anyone?" not in texts
    assert "lunch?" not in texts and "joined" not in texts and "look at this thread" not in texts
    assert {p[0] for p in papers} == {"arxiv:1706.03762", "acl:N19-1423", "arxiv:1907.11692", "arxiv:2005.14165"}
    # shares: the first post, the PDF+BERT post, the bot post; replies: two plain + the broadcast
    assert counts == {"messages": 6, "papers": 4, "reactions": 5, "replies": 3, "members": 3}
    assert permalink is not None
    assert permalink[0] == f"https://lab.slack.com/archives/C1/p{int((T0 + 30) * 1e6)}?thread_ts={T0 + 10:.6f}&cid=C1"
    assert names == {"U1": "ana", "U2": "ben", "U3": "chen", "U9": "outsider"}
    assert ("Attention Is All You Need",) in label


def test_same_paper_in_two_forms_is_one_paper(db: Database, tmp_path: Path) -> None:
    import_export(db, lab_export(tmp_path), progress=False)
    with db.connection() as conn:
        row = conn.execute(
            """SELECT count(DISTINCT mp.message_id), count(DISTINCT mp.paper_id) FROM message_papers mp
                 JOIN paper_ids i USING (paper_id) WHERE i.scheme = 'arxiv' AND i.value = '1706.03762'"""
        ).fetchone()
    assert row == (2, 1)


def test_second_import_changes_nothing(db: Database, tmp_path: Path) -> None:
    path = lab_export(tmp_path)
    import_export(db, path, progress=False)
    with db.connection() as conn:
        before = conn.execute(
            """SELECT (SELECT string_agg(xmin::text || id::text, ',' ORDER BY id) FROM messages),
                      (SELECT string_agg(xmin::text, ',' ORDER BY message_id, user_id, emoji) FROM reactions),
                      (SELECT string_agg(xmin::text, ',' ORDER BY message_id) FROM message_papers),
                      (SELECT string_agg(xmin::text, ',' ORDER BY user_id) FROM members),
                      (SELECT count(*) FROM papers)"""
        ).fetchone()
    import_export(db, path, progress=False)
    with db.connection() as conn:
        after = conn.execute(
            """SELECT (SELECT string_agg(xmin::text || id::text, ',' ORDER BY id) FROM messages),
                      (SELECT string_agg(xmin::text, ',' ORDER BY message_id, user_id, emoji) FROM reactions),
                      (SELECT string_agg(xmin::text, ',' ORDER BY message_id) FROM message_papers),
                      (SELECT string_agg(xmin::text, ',' ORDER BY user_id) FROM members),
                      (SELECT count(*) FROM papers)"""
        ).fetchone()
    assert before == after


def test_malformed_day_file_is_reported_and_the_rest_goes_on(db: Database, tmp_path: Path) -> None:
    path = lab_export(
        tmp_path,
        raw_files={
            "general/2023-12-30.json": b'[{"ts": "1.0", "text": ',
            "general/2023-12-31.json": b'{"not": "a list"}',
        },
    )
    report = import_export(db, path, progress=False)
    assert len(report.problems) == 2
    assert report.problems[0].startswith("general/2023-12-30.json: could not be read")
    assert report.problems[1].startswith("general/2023-12-31.json: expected a list")
    with db.connection() as conn:
        assert storage.messages.load_channel_counts(conn, TEAM, "C1")["messages"] == 6


def test_channel_filter(db: Database, tmp_path: Path) -> None:
    import_export(db, lab_export(tmp_path), channels=["#random"], progress=False)
    with db.connection() as conn:
        assert [c[2] for c in storage.workspaces.find_channels(conn)] == ["random"]
    with pytest.raises(InputError, match="no channel named nope"):
        import_export(db, lab_export(tmp_path), channels=["nope"], progress=False)


def test_not_an_export(db: Database, tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not a readable zip"):
        import_export(db, bad, progress=False)
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(InputError, match=r"no channels\.json"):
        import_export(db, empty, progress=False)


def test_export_inside_a_folder_and_edits(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "nested.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("Lab export/users.json", json.dumps([user("U1", "ana")]))
        zf.writestr("Lab export/channels.json", json.dumps([{"id": "C1", "name": "general", "members": ["U1"]}]))
        zf.writestr(
            "Lab export/general/2023-11-14.json",
            json.dumps(
                [msg(T0, "U1", "<https://arxiv.org/abs/2401.01234>", edited={"user": "U1", "ts": f"{T0 + 60:.6f}"})]
            ),
        )
    import_export(db, path, progress=False)
    with db.connection() as conn:
        edited = conn.execute("SELECT edited_at IS NOT NULL FROM messages").fetchone()
    assert edited == (True,)


def test_a_member_of_another_organisation_is_imported_with_everyone_else(db: Database, tmp_path: Path) -> None:
    """Slack Connect: a user whose `team_id` is their own organisation's shares and reacts in a shared channel.
    The import finishes every channel, and the partner is one of this workspace's members (its tenant)."""
    partner = {**user("UP1", "pat"), "team_id": "T0PARTNER"}
    shared = [
        msg(T0, "U1", "<https://arxiv.org/abs/1706.03762|Attention>", reactions=[{"name": "+1", "users": ["UP1"]}]),
        msg(T0 + 60, "UP1", "ours: <https://aclanthology.org/N19-1423/>"),
    ]
    later = [msg(T0 + DAY, "U2", "<https://arxiv.org/abs/2005.14165>")]
    path = write_export(
        tmp_path / "connect.zip",
        {"shared-reading": ("C10", ["U1", "UP1"], shared), "zz-later": ("C11", ["U2"], later)},
        [user("U1", "ana"), user("U2", "ben"), partner],
    )
    report = import_export(db, path, progress=False)
    assert [c.name for c in report.channels] == ["shared-reading", "zz-later"] and not report.problems
    with db.connection() as conn:
        members = conn.execute("SELECT team_id, user_id FROM members ORDER BY user_id").fetchall()
        counts = storage.messages.load_channel_counts(conn, TEAM, "C11")
    assert ("T0LAB", "UP1") in members and counts["messages"] == 1


def test_an_older_export_brings_back_nothing_deleted_since(db: Database, tmp_path: Path) -> None:
    """The share's thread reply, then the share itself, were deleted in Slack after the export was taken, and a
    reaction on another share was taken off: importing the same export again stores none of them."""
    share = msg(T0, "U2", "<https://arxiv.org/abs/1706.03762|our take>", reply_count=1, thread_ts=f"{T0:.6f}")
    reply = msg(T0 + 5, "U3", "a reply deleted later", thread_ts=f"{T0:.6f}")
    other = msg(T0 + 9, "U3", "<https://arxiv.org/abs/2005.14165>", reactions=[{"name": "-1", "users": ["U2"]}])
    path = write_export(
        tmp_path / "e.zip",
        {"general": ("C1", ["U2", "U3"], [share, reply, other])},
        [user("U2", "ben"), user("U3", "c")],
    )
    import_export(db, path, progress=False)
    with db.connection() as conn:
        knowledge.record_deletion(conn, TEAM, "C1", f"{T0 + 5:.6f}")
        knowledge.record_deletion(conn, TEAM, "C1", f"{T0:.6f}")
        at = datetime.now(UTC)
        knowledge.record_reaction(conn, TEAM, "C1", f"{T0 + 9:.6f}", "U2", "-1", added=False, at=at)
    import_export(db, path, progress=False)
    with db.connection() as conn:
        texts = [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY ts")]
        reactions = conn.execute("SELECT count(*) FROM reactions").fetchone()[0]
    assert texts == ["<https://arxiv.org/abs/2005.14165>"] and reactions == 0


def test_an_export_never_adds_back_a_member_slack_says_left(db: Database, tmp_path: Path) -> None:
    """The export was taken while U3 was in the private channel. Before Slack has given its member list, the
    export's list stands; once Slack's list is read (U3 has left), importing the export again adds nobody to it."""
    share = msg(T0, "U2", "<https://arxiv.org/abs/1706.03762>")
    path = write_export(
        tmp_path / "e.zip", {"secret": ("G2", ["U2", "U3"], [share])}, [user("U2", "ben"), user("U3", "chen")]
    )
    import_export(db, path, progress=False)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, TEAM, "G2", active=True)
        listed = storage.workspaces.in_channel(conn, TEAM, "G2", "U3")
        storage.workspaces.replace_channel_members(conn, TEAM, "G2", ["U2"], datetime.now(UTC))
    import_export(db, path, progress=False)
    with db.connection() as conn:
        members = [r[0] for r in conn.execute("SELECT user_id FROM channel_members WHERE channel_id = 'G2'")]
        private = storage.workspaces.load_member_channels(conn, TEAM, "U3", current=True)
    assert listed, "the export's list counts while Slack has not given one"
    assert members == ["U2"] and private == []


def test_an_older_export_takes_off_no_reaction_added_since(db: Database, tmp_path: Path) -> None:
    """Importing an export again (or one taken before PaperPing joined) made each message's reactions exactly the
    export's: a :bookmark: added in Slack since, heard live, was deleted, and its paper left the reading list.
    A reaction stored with a time after the export's newest message now stays; one the export should show and does
    not (taken off before it was made) still goes."""
    share = msg(T0, "U2", "<https://arxiv.org/abs/1706.03762|our take>", reactions=[{"name": "+1", "users": ["U3"]}])
    users = [user("U2", "ben"), user("U3", "c")]
    import_export(
        db, write_export(tmp_path / "e.zip", {"general": ("C1", ["U2", "U3"], [share])}, users), progress=False
    )
    with db.connection() as conn:  # a save in Slack after the export was taken, heard live
        knowledge.record_reaction(conn, TEAM, "C1", f"{T0:.6f}", "U2", "bookmark", added=True, at=datetime.now(UTC))
    unliked = {**share, "reactions": []}  # a later export: U3's +1 was taken off before it, the save came after
    later = write_export(tmp_path / "n.zip", {"general": ("C1", ["U2", "U3"], [unliked])}, users)
    import_export(db, later, progress=False)
    with db.connection() as conn:
        saved, _ = storage.reading_list.load_reading_list(conn, TEAM, "C1", ["bookmark"], limit=10)
        kept = conn.execute("SELECT user_id, emoji FROM reactions").fetchall()
    assert len(saved) == 1, "the live save is still on the reading list"
    assert kept == [("U2", "bookmark")], kept
