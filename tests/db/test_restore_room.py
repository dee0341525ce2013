"""``paperping restore`` on a disk without room, of a file in another encoding, and stopped halfway: a disk whose
free space is below what the restore may write is refused before anything is written, naming both figures; a
file whose ``ENCODING`` entry is not UTF8 is refused before anything is changed; a restore that fails once
pg_restore runs says the home is as it was, and leaves no half-restored copy. The home is kept each time."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from bot.cli import main
from socialrag.cli.archive import restore_database
from socialrag.cli.backup_files import ROOM_BASE, ROOM_FACTOR
from socialrag.cli.restore_check import check_dump
from socialrag.db import Database
from socialrag.errors import InputError
from socialrag.pgtools import Archive, tool_dsn, tools_for
from tests.db.test_restore_check import FILE, REFERENCE, entry, refusal
from tests.db.test_restore_safety import TARGET, _refused, _tampered, _untouched
from tests.db.test_restore_safety import target as target  # the fixture: a home holding a channel

pytestmark = pytest.mark.slow


def test_a_disk_without_room_is_refused_with_both_figures_and_the_home_kept(
    db: Database, pg_server_uri: str, target: str, tmp_path: Path
) -> None:
    dump = _tampered(db, tmp_path / "home.dump")
    need = ROOM_BASE + ROOM_FACTOR * dump.stat().st_size
    asked: list[Path] = []

    def almost(folder: Path) -> int:  # a disk one byte short of the estimate
        asked.append(folder)
        return need - 1

    with pytest.raises(InputError) as refused:
        restore_database(dump, pg_server_uri, TARGET, force=True, data=tmp_path, free=almost)
    said = str(refused.value)
    assert asked == [tmp_path]
    assert f"needs about {need / 1e6:,.0f} MB" in said and f"has {(need - 1) / 1e6:,.0f} MB free" in said, said
    assert str(dump) in said and "nothing was restored" in said and "as it was" in said, said
    _untouched(pg_server_uri, target)
    # the real figure of this disk, which has room, lets the same restore through
    info, summary, _ = restore_database(dump, pg_server_uri, TARGET, force=True, data=tmp_path)
    assert summary.channels == 1 and info.size == dump.stat().st_size


def _dump_in(db: Database, path: Path, encoding: str) -> Path:
    """A home's dump by the server's own pg_dump, asked to write its text in ``encoding``."""
    _tampered(db, path.with_name("first.dump"))  # the home's rows
    with tool_dsn(db.conninfo) as dsn:
        pg_dump = str(tools_for(db.conninfo) / "pg_dump")
        subprocess.run([pg_dump, "-Fc", "-E", encoding, "-f", str(path), "-d", dsn], check=True, capture_output=True)
    return path


@pytest.mark.parametrize("encoding", ["LATIN1", "SQL_ASCII"])
def test_a_dump_in_another_encoding_is_refused_and_the_home_kept(
    encoding: str,
    db: Database,
    pg_server_uri: str,
    target: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dump = _dump_in(db, tmp_path / f"{encoding}.dump", encoding)
    _refused(dump, capsys, f"written in the encoding {encoding}, not UTF8")
    _untouched(pg_server_uri, target)


def test_an_encoding_entry_other_than_utf8_is_refused_however_named() -> None:
    """pg_restore takes every ENCODING entry, whatever its tag, and sets the last it reads."""
    latin = replace(REFERENCE.entries[0], defn="SET client_encoding = 'LATIN1';\n")
    assert "the encoding LATIN1, not UTF8" in refusal(Archive(REFERENCE.header, (latin, *REFERENCE.entries[1:])))
    second = entry(40, "ENCODING", "", "OTHER", "SET client_encoding = 'SQL_ASCII';\n")
    assert "the encoding SQL_ASCII" in refusal(Archive(REFERENCE.header, (*REFERENCE.entries, second)))
    odd = entry(40, "ENCODING", "", "OTHER", "SET client_encoding = 'UTF8'; SET role = x;\n")
    assert "an encoding entry pg_dump never writes" in refusal(Archive(REFERENCE.header, (*REFERENCE.entries, odd)))
    assert check_dump(REFERENCE, REFERENCE, FILE, 33) == [3, 5, 6, 7, 8]


def test_a_restore_that_fails_in_pg_restore_keeps_the_home_and_removes_its_copy(
    db: Database, pg_server_uri: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file whose rows break a foreign key (written with triggers off) passes the check, which reads SQL, and
    pg_restore stops as it would on a disk that fills: the home stays and its half-built copy goes."""
    orphan = "INSERT INTO channels (team_id, channel_id, name) VALUES ('TNONE', 'C2', 'orphan')"
    dump = _tampered(db, tmp_path / "orphan.dump", "SET session_replication_role = replica", orphan)
    assert main(["restore", str(dump), "--force"]) == 2
    err = capsys.readouterr().err
    assert "pg_restore failed" in err and "The home is as it was; the half-restored copy was removed" in err, err
    _untouched(pg_server_uri, target)
