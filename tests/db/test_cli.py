"""The ``paperping`` command itself: import-export, status (text and JSON), catalog import, errors."""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import pytest

from bot.cli import main
from socialrag.db import Database
from tests.support.exports import lab_export


@pytest.fixture
def env(db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Database:
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    return db


def test_import_then_status(env: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import-export", str(lab_export(tmp_path)), "--team-domain", "lab", "--no-embed"]) == 0
    out = capsys.readouterr().out
    assert "#general: 10 messages read, kept 3 with paper links, 3 thread replies, 5 reactions" in out
    assert "offline: paper metadata will be looked up on a later run" in out
    assert main(["status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data.pop("metrics")["index_queue"]["waiting"] >= 4  # the figures /metrics shows (tests/slack/test_metrics)
    # offline and --no-embed: the papers wait in the queue for `paperping run` to look them up and embed them, and
    # have no vector yet (``unusable``: what a post waits for)
    waiting = {"looked_up": 0, "embedded": 0, "given_up": 0, "empty_reason": None, "emoji_learnt": []}
    waiting |= {"answers_marked": {"helpful": 0, "not_helpful": 0, "days": 30}}  # no answer marked yet
    # offline: no full text is read (none read yet either)
    fulltext = {"on": False, "off_for": "service", "read": 0, "none": 0, "unreadable": 0}
    assert data == {
        "channels": [
            {"id": "C1", "name": "general", "messages": 6, "papers": 4, "reactions": 5, "replies": 3, "members": 3}
            | waiting
            | {"waiting": 4, "unusable": 4, "fulltext": fulltext | {"papers": 4, "waiting": 4}},
            {"id": "C2", "name": "random", "messages": 2, "papers": 2, "reactions": 0, "replies": 0, "members": 1}
            | waiting
            | {"waiting": 2, "unusable": 2, "fulltext": fulltext | {"papers": 2, "waiting": 2}},
        ]
    }
    assert main(["status", "--channel", "general"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split() == ["channel", "messages", "papers", "reactions", "replies", "members"]
    assert text[1].split() == ["#general", "(C1)", "6", "4", "5", "3", "3"]


def test_wrong_input_says_what_to_do(env: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--channel", "nope"]) == 2
    assert "no stored channel named nope" in capsys.readouterr().err
    missing = tmp_path / "missing.zip"
    assert main(["import-export", str(missing)]) == 2
    assert "not a readable zip" in capsys.readouterr().err
    assert main(["backfill", "C1"]) == 2
    assert "PAPERPING_OFFLINE=1 forbids network calls" in capsys.readouterr().err


def test_catalog_import_command(env: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"arxiv_id": "2401.01234", "title": "A", "authors": ["Ana Lopez"]}) + "\n{broken\n")
    assert main(["catalog", "import", str(path), "--no-embed"]) == 0
    captured = capsys.readouterr()
    assert "catalog: 1 papers imported" in captured.out
    assert "c.jsonl line 2" in captured.err


def test_damaged_files_are_told_in_sentences(env: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.jsonl.gz"
    good = [json.dumps({"arxiv_id": f"2401.{i:05d}", "title": f"Paper {i}"}).encode() + b"\n" for i in range(200)]
    # more bad lines than the command lists, then a cut: where reading stopped is still said, and first
    lines = good[0] + b"{broken\n" * 30 + b"[" * 200_000 + b"\n" + b"".join(good[1:])
    path.write_bytes(gzip.compress(lines)[:-20])
    assert main(["catalog", "import", str(path), "--no-embed"]) == 0
    captured = capsys.readouterr()
    papers = int(captured.out.split("catalog: ")[1].split()[0])
    assert 1 < papers < 200  # the lines read before the cut, after the 31 bad ones
    assert captured.err.startswith(f"warning: c.jsonl.gz: reading stopped at line {papers + 32}, where the file is")
    assert captured.err.endswith("... and 12 more lines skipped\n") and "Traceback" not in captured.err
    export = tmp_path / "deep.zip"
    with zipfile.ZipFile(lab_export(tmp_path)) as src, zipfile.ZipFile(export, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, b"[" * 100_000 if item.filename == "users.json" else src.read(item))
    assert main(["import-export", str(export), "--no-embed"]) == 2
    err = capsys.readouterr().err
    assert "users.json: could not be read (its JSON is nested too deeply to read), so PaperPing" in err
    assert "pass --team-id" in err and "Traceback" not in err


def test_three_migrates_on_a_fresh_home_all_succeed(tmp_path: Path) -> None:
    """Concurrent first starts (three `paperping migrate` at once on a new home) take turns creating the
    database; none fails on a unique violation."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PAPERPING_HOME"] = str(tmp_path / "home")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "migrate"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(3)
    ]
    results = [(p.wait(timeout=240), p.stderr.read().decode() if p.stderr else "") for p in procs]
    assert [rc for rc, _ in results] == [0, 0, 0], [err[-500:] for _, err in results]


def test_an_older_paperping_refuses_a_home_a_newer_one_wrote(
    db: Database, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """After a downgrade (pip installed an older release), `migrate` and `run` would go on with a schema they
    do not know; they stop with what to do instead."""
    with db.connection() as conn:
        conn.execute("INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'from_the_future', 'x')")
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    assert main(["migrate"]) != 0
    err = capsys.readouterr().err
    assert "schema is at migration 9999, newer than this PaperPing knows" in err and "Traceback" not in err


def test_a_member_who_asked_to_be_forgotten_stays_forgotten_after_a_purge_and_a_new_import(
    env: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The workspace is purged after it uninstalled, installs again and imports the same old export: the member on
    its forget list is stored again nowhere, nor a share deleted in Slack. The purge keeps only that list (member
    ids) and the deletions (message ids and times), says so, and ``--drop-forget-list`` deletes them when the admin
    wants nothing at all kept."""
    from socialrag import storage
    from socialrag.knowledge import record_deletion
    from tests.support.exports import DAY, T0

    DELETED = f"{T0 + DAY:.6f}"

    export = lab_export(tmp_path)
    assert main(["import-export", str(export), "--team-domain", "lab", "--no-embed"]) == 0
    with env.connection() as conn:
        (team,) = storage.workspaces.load_team_ids(conn)
        storage.privacy.forget_member(conn, team, "U1")
        record_deletion(conn, team, "C1", DELETED)  # U3 deleted their share in Slack
    capsys.readouterr()
    assert main(["purge", "--team", team]) == 2
    assert "its forget list (1 member) and remembered deletions stay unless you add" in capsys.readouterr().err
    assert main(["purge", "--team", team, "--yes"]) == 0
    assert "kept its forget list (1 member)" in capsys.readouterr().out
    assert main(["purge", "--team", team, "--yes"]) == 2, "nothing else is left to purge"
    assert "was purged already; only its forget list (1 member) is kept" in capsys.readouterr().err

    assert main(["import-export", str(export), "--team-domain", "lab", "--no-embed"]) == 0
    with env.connection() as conn:
        stored = conn.execute("SELECT count(*) FROM messages WHERE team_id = %s", (team,)).fetchone()
        theirs = conn.execute("SELECT count(*) FROM messages WHERE user_id = 'U1'").fetchone()
        named = conn.execute("SELECT count(*) FROM members WHERE user_id = 'U1'").fetchone()
        deleted = conn.execute("SELECT count(*) FROM messages WHERE ts = %s", (DELETED,)).fetchone()
    assert stored is not None and stored[0] > 0 and theirs == (0,) and named == (0,), "U1 is stored nowhere"
    assert deleted == (0,), "nor the share deleted in Slack before the purge"

    assert main(["purge", "--team", team, "--drop-forget-list", "--yes"]) == 0
    with env.connection() as conn:
        assert conn.execute("SELECT count(*) FROM forgotten_members").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM messages").fetchone() == (0,)


def test_remembered_deletions_of_a_workspace_with_no_forget_list_are_said_kept_and_can_be_dropped(
    env: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A purge keeps the deletions remembered even when nobody is on the forget list; it says so, and a later
    ``--drop-forget-list`` deletes them, as the help says, where before it answered that no such workspace was
    stored and kept them."""
    from socialrag import storage
    from socialrag.knowledge import record_deletion
    from tests.support.exports import DAY, T0

    assert main(["import-export", str(lab_export(tmp_path)), "--team-domain", "lab", "--no-embed"]) == 0
    with env.connection() as conn:
        (team,) = storage.workspaces.load_team_ids(conn)
        record_deletion(conn, team, "C1", f"{T0 + DAY:.6f}")
    capsys.readouterr()
    assert main(["purge", "--team", team, "--yes"]) == 0
    assert "kept its remembered deletions" in capsys.readouterr().out
    assert main(["purge", "--team", team, "--yes"]) == 2
    assert "was purged already; only its remembered deletions are kept" in capsys.readouterr().err
    assert main(["purge", "--team", team, "--drop-forget-list", "--yes"]) == 0
    with env.connection() as conn:
        assert conn.execute("SELECT count(*) FROM deleted_messages").fetchone() == (0,)


def test_an_export_naming_another_workspace_of_the_home_is_imported_only_when_the_operator_says_which(
    env: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A home that serves two workspaces: an export file says itself which workspace it is from, and a file of
    unknown origin could name the other one. Without --team-id nothing is imported and the operator is told why;
    with it, the file goes where the operator said."""
    from tests.support.exports import TEAM, msg, user, write_export

    with env.connection() as conn:
        conn.execute("INSERT INTO teams (team_id, domain) VALUES ('T0OTHER', 'other')")
    share = msg(1_700_000_000.0, "U2", "<https://arxiv.org/abs/1706.03762|Attention>")
    export = write_export(tmp_path / "x.zip", {"general": ("C9", ["U2"], [share])}, [user("U2", "ben")])
    assert main(["import-export", str(export), "--no-embed"]) == 2
    err = capsys.readouterr().err
    assert f"this home holds another workspace (T0OTHER), and the export says it is from {TEAM}" in err
    assert "--team-id" in err
    with env.connection() as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone() == (0,)
    assert main(["import-export", str(export), "--team-id", TEAM, "--no-embed"]) == 0
    with env.connection() as conn:
        assert conn.execute("SELECT count(*) FROM messages WHERE team_id = %s", (TEAM,)).fetchone() == (1,)
