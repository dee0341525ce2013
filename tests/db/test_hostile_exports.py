"""A Slack export built to mislead the import: two channels that claim one folder, names that would rewrite the
operator's terminal. Each is said in a sentence; nothing of one channel is stored under another."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from bot.slack.workspace_export import import_export
from socialrag.db import Database
from tests.support.exports import TEAM, msg, user

T0 = 1_700_000_000


def test_a_folder_two_channels_claim_is_imported_into_neither(db: Database, tmp_path: Path) -> None:
    """channels.json names a public #reading and groups.json a private channel of the same name: the one folder
    `reading/` was imported into both, so the private channel's shares became the public channel's (its
    candidates, its reading list, its answers). Slack never gives two channels one name; such a folder is now
    skipped, with why, and the other channels are imported."""
    path = tmp_path / "two.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("users.json", json.dumps([user("U1", "ana")]))
        zf.writestr(
            "channels.json",
            json.dumps([{"id": "C1", "name": "reading", "members": ["U1"]}, {"id": "C2", "name": "general"}]),
        )
        zf.writestr("groups.json", json.dumps([{"id": "G9", "name": "reading", "members": ["U1"]}]))
        zf.writestr("reading/2023-11-14.json", json.dumps([msg(T0, "U1", "<https://arxiv.org/abs/1706.03762>")]))
        zf.writestr("general/2023-11-14.json", json.dumps([msg(T0, "U1", "<https://arxiv.org/abs/2005.14165>")]))
    report = import_export(db, path, progress=False)
    with db.connection() as conn:
        stored = conn.execute("SELECT channel_id FROM messages WHERE team_id = %s ORDER BY 1", (TEAM,)).fetchall()
    assert stored == [("C2",)], "nothing of the shared folder under either channel"
    assert any("reading/" in p and "C1" in p and "G9" in p for p in report.problems), report.problems
    assert [c.channel_id for c in report.channels] == ["C2"]


def test_names_in_an_export_never_reach_the_terminal_as_escapes(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A channel named with terminal escapes (set the window title, move the cursor, erase the screen) and a day
    file named so went to the operator's terminal as written: an export could rewrite what the import said, or
    hide its warnings. The summary and the warnings now show such characters as escapes."""
    from bot.cli import main

    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    name = "lab\x1b]0;owned\x07\x1b[2J\r"
    path = tmp_path / "esc.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("users.json", json.dumps([user("U1", "ana")]))
        zf.writestr("channels.json", json.dumps([{"id": "C1", "name": name}]))
        zf.writestr(f"{name}/2023-11-14.json", json.dumps([msg(T0, "U1", "<https://arxiv.org/abs/1706.03762>")]))
        zf.writestr(f"{name}/\x1b[1A\x1b[2Kday.json", "not json")
    assert main(["import-export", str(path), "--no-embed"]) == 0
    said = capsys.readouterr()
    assert "kept 1 with paper links" in said.out and "could not be read" in said.err
    for text in (said.out, said.err):
        assert not any(ch in text for ch in "\x1b\x07\r"), repr(text)
    assert "\\x1b" in said.out and "\\x1b[1A" in said.err


def test_a_message_listed_twice_is_imported_once_as_its_latest_copy(db: Database, tmp_path: Path) -> None:
    """A day file lists one share twice (its first copy, then the edited one): the import stores it once, as edited,
    instead of failing on the channel."""
    share = msg(T0, "U1", "<https://arxiv.org/abs/1706.03762>")
    edited = {
        **share,
        "text": "<https://arxiv.org/abs/2005.14165>",
        "edited": {"user": "U1", "ts": f"{T0 + 60}.000000"},
    }
    path = tmp_path / "twice.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("users.json", json.dumps([user("U1", "ana")]))
        zf.writestr("channels.json", json.dumps([{"id": "C1", "name": "general", "members": ["U1"]}]))
        zf.writestr("general/2023-11-14.json", json.dumps([edited, share]))
    import_export(db, path, progress=False)
    with db.connection() as conn:
        stored = conn.execute("SELECT text FROM messages").fetchall()
    assert stored == [("<https://arxiv.org/abs/2005.14165>",)]


def test_a_direct_message_listed_as_a_channel_is_not_imported(db: Database, tmp_path: Path) -> None:
    """An export whose channels.json lists a DM (a `D` id, or a group DM's `mpdm-` name) beside a channel: its folder
    was imported as a channel, so what two members said in private became shares, candidates and answers, where
    nothing said in a DM is indexed live. It is now skipped, with why, and the channel imported."""
    path = tmp_path / "dm.zip"
    paper = "<https://arxiv.org/abs/1706.03762>"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("users.json", json.dumps([user("U1", "ana"), user("U2", "ben")]))
        listed = [
            {"id": "D1", "name": "ana-ben", "members": ["U1", "U2"]},
            {"id": "G5", "name": "mpdm-ana--ben--cy-1", "members": ["U1", "U2"]},
            {"id": "C2", "name": "general"},
        ]
        zf.writestr("channels.json", json.dumps(listed))
        for folder in ("ana-ben", "mpdm-ana--ben--cy-1", "general"):
            zf.writestr(f"{folder}/2023-11-14.json", json.dumps([msg(T0, "U1", paper)]))
    report = import_export(db, path, progress=False)
    with db.connection() as conn:
        stored = conn.execute("SELECT channel_id FROM messages ORDER BY 1").fetchall()
        listed_channels = conn.execute("SELECT channel_id FROM channels ORDER BY 1").fetchall()
    assert stored == [("C2",)] and listed_channels == [("C2",)]
    assert sum("is a direct message, not a channel; not imported" in p for p in report.problems) == 2


def test_a_timezone_with_a_nul_costs_nothing_but_itself(db: Database, tmp_path: Path) -> None:
    """users.json giving a member's tz with a NUL byte failed the import at the channel's members with Postgres'
    'cannot contain NUL' error, a traceback, and the channels after it not imported."""
    path = tmp_path / "tz.zip"
    ana = {**user("U1", "ana"), "tz": "Europe/\x00Berlin"}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("users.json", json.dumps([ana]))
        zf.writestr("channels.json", json.dumps([{"id": "C1", "name": "a"}, {"id": "C2", "name": "b"}]))
        for folder in ("a", "b"):
            zf.writestr(f"{folder}/2023-11-14.json", json.dumps([msg(T0, "U1", "<https://arxiv.org/abs/1706.03762>")]))
    import_export(db, path, progress=False)
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone() == (2,)
        assert conn.execute("SELECT timezone FROM members WHERE user_id = 'U1'").fetchone() == ("Europe/Berlin",)
