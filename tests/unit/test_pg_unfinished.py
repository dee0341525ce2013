"""An upgrade stopped between its renames (the process killed, the machine off): every state its journal can be
left in is found by the next start, which says what to type, and undone by the next ``paperping upgrade-home``,
which puts the old folder back. The folders here hold only their ``PG_VERSION``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from socialrag import pgupgrade

OLD, FRESH = "pgdata-pg16-20250101-000000", ".pgdata-pg18-20250101-000000"


def folder(path: Path, major: int) -> Path:
    path.mkdir()
    (path / "PG_VERSION").write_text(f"{major}\n")
    return path


def journal(home: Path) -> None:
    (home / pgupgrade.JOURNAL).write_text(json.dumps({"old_major": 16, "new_major": 18, "kept": OLD, "fresh": FRESH}))


def test_the_upgraded_folder_in_place_but_never_opened_is_moved_aside(tmp_path: Path) -> None:
    folder(tmp_path / OLD, 16)
    folder(tmp_path / "pgdata", 18)
    journal(tmp_path)
    with pytest.raises(pgupgrade.HomeUpgradeUnfinished) as caught:
        pgupgrade.check_home(tmp_path / "pgdata")
    said = str(caught.value)
    assert f"mv '{tmp_path / 'pgdata'}' '{tmp_path / 'pgdata-unfinished-pg18'}'" in said
    assert f"mv '{tmp_path / OLD}' '{tmp_path / 'pgdata'}'" in said

    lines: list[str] = []
    pgupgrade.undo_unfinished(tmp_path, lines.append)
    (aside,) = tmp_path.glob("pgdata-unfinished-pg18-*")
    assert (pgupgrade.home_major(tmp_path / "pgdata"), pgupgrade.home_major(aside)) == (16, 18)
    assert not (tmp_path / OLD).exists() and not (tmp_path / pgupgrade.JOURNAL).exists()
    assert any(str(aside) in line for line in lines)
    assert pgupgrade.load_unfinished(tmp_path) is None  # a start goes on to the usual check of the major


def test_stopped_before_the_first_rename_only_the_journal_and_the_copy_go(tmp_path: Path) -> None:
    folder(tmp_path / "pgdata", 16)
    folder(tmp_path / FRESH, 18)
    journal(tmp_path)
    with pytest.raises(pgupgrade.HomeUpgradeUnfinished, match=f"rm '{tmp_path / pgupgrade.JOURNAL}'"):
        pgupgrade.check_home(tmp_path / "pgdata")
    pgupgrade.undo_unfinished(tmp_path, lambda line: None)
    assert pgupgrade.home_major(tmp_path / "pgdata") == 16
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pgdata"]


def test_with_neither_folder_it_points_at_the_backup(tmp_path: Path) -> None:
    journal(tmp_path)
    with pytest.raises(pgupgrade.HomeUpgradeUnfinished) as caught:
        pgupgrade.undo_unfinished(tmp_path, lambda line: None)
    said = str(caught.value)
    assert f"The Postgres 16 folder {tmp_path / OLD} is not there" in said and "pre-upgrade-pg16-*.dump" in said
    assert (tmp_path / pgupgrade.JOURNAL).exists()  # nothing guessed


def test_a_journal_that_cannot_be_read_stops_a_start(tmp_path: Path) -> None:
    (tmp_path / pgupgrade.JOURNAL).write_text("{")
    with pytest.raises(pgupgrade.HomeUpgradeUnfinished, match="is unreadable"):
        pgupgrade.check_home(tmp_path / "pgdata")


def test_the_journal_is_written_whole(tmp_path: Path) -> None:
    record = pgupgrade.Unfinished(16, 18, OLD, FRESH)
    pgupgrade.record_unfinished(tmp_path, record)
    assert pgupgrade.load_unfinished(tmp_path) == record
    assert sorted(p.name for p in tmp_path.iterdir()) == [pgupgrade.JOURNAL]
    pgupgrade.clear_unfinished(tmp_path)
    assert pgupgrade.load_unfinished(tmp_path) is None


# Journals an upgrade never writes. Every folder they name lies inside this test's own tmp_path (``victim``, beside
# the home), so that even a broken check could only touch the test's own files.
HOSTILE: dict[str, dict[str, object]] = {
    "a folder outside the home": {"kept": OLD, "fresh": "../victim"},
    "a path into another folder": {"kept": OLD, "fresh": ".pgdata-pg18-20250101-000000/../../victim"},
    "the home's own pgdata": {"kept": OLD, "fresh": "pgdata"},
    "an old folder elsewhere": {"kept": "../victim", "fresh": FRESH},
    "a major that is not a number": {"kept": OLD, "fresh": FRESH, "old_major": "16; rm"},
    "a major that is true": {"kept": OLD, "fresh": FRESH, "old_major": True},
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_journal_an_upgrade_never_writes_moves_and_deletes_nothing(kind: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    victim = folder(tmp_path / "victim", 18)
    folder(home / OLD, 16)
    folder(home / FRESH, 18)
    folder(home / "pgdata", 18)
    written: dict[str, object] = {"old_major": 16, "new_major": 18, **HOSTILE[kind]}
    (home / pgupgrade.JOURNAL).write_text(json.dumps(written))
    for step in (lambda: pgupgrade.check_home(home / "pgdata"), lambda: pgupgrade.undo_unfinished(home, print)):
        with pytest.raises(pgupgrade.HomeUpgradeUnfinished, match="nothing was started or moved"):
            step()
    assert (victim / "PG_VERSION").read_text() == "18\n"
    assert sorted(p.name for p in home.iterdir()) == sorted([OLD, FRESH, "pgdata", pgupgrade.JOURNAL])


def test_a_huge_journal_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / pgupgrade.JOURNAL).write_text(" " * 10_000_000 + "{}")
    with pytest.raises(pgupgrade.HomeUpgradeUnfinished, match="longer than"):
        pgupgrade.load_unfinished(tmp_path)
