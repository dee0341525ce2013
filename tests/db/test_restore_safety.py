"""``paperping restore`` of a hostile dump: a home with code PaperPing never made (a function and trigger, an event
trigger, a default that calls a function, PaperPing's own function with another body, a view, a comment), dumped
with the embedded server's own pg_dump, is refused as a whole, naming what it holds, and the home it would replace
is untouched; a file whose header or sequence was rewritten to run a statement is refused the same way; privileges
a managed Postgres adds are left behind and the rest restores; a backup of each old home restores."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from bot.cli import main
from socialrag.cli import archive
from socialrag.cli.archive import backup_database
from socialrag.db import Database, ensure_database
from socialrag.migrate import apply_migrations
from socialrag.pgtools import tools_for, with_dbname
from tests.support.pghomes import restore_target

pytestmark = pytest.mark.slow

TARGET = "pp_restore_target"


@pytest.fixture
def target(pg_server_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A home holding a channel, the restores' DATABASE_URL."""
    with restore_target(pg_server_uri, TARGET, tmp_path / "home", monkeypatch) as home:
        ensure_database(pg_server_uri, TARGET)
        with psycopg.connect(home, autocommit=True) as conn:
            apply_migrations(conn)
            conn.execute("INSERT INTO teams (team_id) VALUES ('TKEEP')")
            conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('TKEEP', 'CKEEP', 'kept')")
        yield home


def _untouched(pg_server_uri: str, home: str) -> None:
    with psycopg.connect(home) as conn:
        assert conn.execute("SELECT team_id, name FROM channels").fetchall() == [("TKEEP", "kept")]
    _untouched_server(pg_server_uri)


def _untouched_server(pg_server_uri: str) -> None:
    with psycopg.connect(pg_server_uri) as conn:
        left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'pp_restore_target_%'").fetchall()
        assert left == []  # no staging copy, no scratch database
        assert conn.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'planted%'").fetchone() == (0,)


def _tampered(db: Database, path: Path, *statements: str) -> Path:
    with db.connection() as conn:
        conn.execute("INSERT INTO teams (team_id) VALUES ('T1')")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('T1', 'C1', 'lab')")
        for statement in statements:
            conn.execute(statement)
    backup_database(db.conninfo, path)  # pg_dump -Fc, the embedded server's own
    db.close()
    return path


FUNCTION = "CREATE FUNCTION planted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$"
DDL = "CREATE FUNCTION planted_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END $$"
BODY = (
    "CREATE OR REPLACE FUNCTION record_popularity() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "EXECUTE 'CREATE ROLE planted_body SUPERUSER'; RETURN NEW; END $$"
)
TAMPERED = {
    "a function and a trigger": (
        [FUNCTION, "CREATE TRIGGER planted AFTER INSERT ON channels FOR EACH ROW EXECUTE FUNCTION planted()"],
        "FUNCTION public planted()",
    ),
    "an event trigger": ([DDL, "CREATE EVENT TRIGGER planted ON ddl_command_end EXECUTE FUNCTION planted_ddl()"], "planted"),
    "a default that calls a function": (
        ["ALTER TABLE channels ALTER COLUMN name SET DEFAULT pg_catalog.current_setting('is_superuser')"],
        "TABLE public channels with SQL other than",
    ),
    "PaperPing's function with another body": ([BODY], "FUNCTION public record_popularity() with SQL other than"),
    "a view": (["CREATE VIEW planted AS SELECT pg_catalog.pg_read_file('/etc/hostname')"], "VIEW public planted"),
    "a comment": (["COMMENT ON TABLE channels IS 'planted'"], "COMMENT public TABLE channels"),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(TAMPERED))
def test_a_dump_with_code_paperping_never_made_is_refused_and_the_home_kept(
    kind: str,
    db: Database,
    pg_server_uri: str,
    target: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    statements, named = TAMPERED[kind]
    dump = _tampered(db, tmp_path / "tampered.dump", *statements)
    _refused(dump, capsys, named)
    _untouched(pg_server_uri, target)


def _refused(dump: Path, capsys: pytest.CaptureFixture[str], *said: str) -> None:
    """``paperping restore --force`` of ``dump`` refuses the whole file, saying each of ``said``."""
    assert main(["restore", str(dump), "--force"]) == 2
    err = capsys.readouterr().err
    assert "nothing was restored" in err and all(part in err for part in said), err


def _rewrite(path: Path, old: str, new: str) -> None:
    """Put ``new`` in place of the TOC string ``old`` (same length, so every offset stays right), as a hand-made
    file would; the string as pg_dump stores it: a sign byte, four bytes of length, the text."""
    assert len(new) == len(old), (len(new), len(old))
    stored = b"\x00" + len(old).to_bytes(4, "little") + old.encode()
    data = path.read_bytes()
    assert data.count(stored) == 1
    path.write_bytes(data.replace(stored, b"\x00" + len(new).to_bytes(4, "little") + new.encode()))
    path.with_name(path.name + ".json").unlink()  # its note's checksum would give it away


SEARCH_PATH = "SELECT pg_catalog.set_config('search_path', '', false);\n"
SETVAL = "SELECT pg_catalog.setval('public.authors_id_seq', 1, false);\n"


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        (SEARCH_PATH, "CREATE ROLE planted_path SUPERUSER;".ljust(len(SEARCH_PATH) - 1) + "\n", "SEARCHPATH"),
        (SETVAL, "CREATE ROLE planted_seq SUPERUSER;".ljust(len(SETVAL) - 1) + "\n", "SEQUENCE SET public authors_id"),
    ],
)
def test_a_statement_written_into_the_files_own_sql_is_refused(
    old: str,
    new: str,
    named: str,
    db: Database,
    pg_server_uri: str,
    target: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """pg_restore runs the header's search_path and a sequence's setval as the file gives them: a role made there
    would be a superuser of the whole server."""
    dump = _tampered(db, tmp_path / "rewritten.dump")
    _rewrite(dump, old, new)
    script = subprocess.run(
        [str(tools_for(target) / "pg_restore"), "-f", "-", str(dump)], capture_output=True, text=True, check=True
    ).stdout
    assert new in script  # what pg_restore, unchecked, would run
    _refused(dump, capsys, named, "with SQL other than")
    _untouched(pg_server_uri, target)


def test_privileges_are_left_behind_and_the_rest_restores(
    db: Database, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A managed Postgres grants PaperPing's tables to its own roles: those grants never run (--no-privileges),
    and the home comes back."""
    dump = _tampered(db, tmp_path / "granted.dump", "GRANT SELECT ON channels TO PUBLIC")
    assert main(["restore", str(dump), "--force"]) == 0, capsys.readouterr().err
    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT team_id, name FROM channels").fetchall() == [("T1", "lab")]
        assert conn.execute("SELECT relacl FROM pg_class WHERE oid = 'channels'::regclass").fetchone() == (None,)


def test_a_home_in_use_is_not_replaced_and_the_restored_copy_waits(
    db: Database,
    pg_server_uri: str,
    target: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client still connected to the home (a running service) stops the switch: the home is kept, the restored
    copy waits beside it, and a restore once the home is free succeeds."""
    monkeypatch.setattr(archive, "SETTLE_S", 0.5)
    dump = _tampered(db, tmp_path / "clean.dump")
    with psycopg.connect(target) as held:
        assert main(["restore", str(dump), "--force"]) == 2
        err = capsys.readouterr().err
        assert "database pp_restore_target is in use" in err, err
        assert "waits as database pp_restore_target_restoring" in err, err
        assert held.execute("SELECT team_id, name FROM channels").fetchall() == [("TKEEP", "kept")]
    with psycopg.connect(pg_server_uri) as conn:
        waiting = conn.execute("SELECT 1 FROM pg_database WHERE datname = 'pp_restore_target_restoring'").fetchone()
    assert waiting == (1,), "the restored copy is kept"
    assert main(["restore", str(dump), "--force"]) == 0, capsys.readouterr().err
    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT team_id, name FROM channels").fetchall() == [("T1", "lab")]
    _untouched_server(pg_server_uri)


def test_a_client_that_is_leaving_is_waited_for(pg_server_uri: str, target: str) -> None:
    """A client that closes while the restore looks is not counted once it has gone (its server process lingers a
    moment after the close); one that stays is counted when the wait is over."""
    import threading

    from socialrag.storage.homes import load_other_sessions

    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        assert load_other_sessions(conn, TARGET, settle_s=10.0) == 0  # the fixture's own client has gone
        leaving = psycopg.connect(target)
        closer = threading.Timer(0.3, leaving.close)
        assert load_other_sessions(conn, TARGET) == 1
        closer.start()
        try:
            assert load_other_sessions(conn, TARGET, settle_s=10.0) == 0
        finally:
            closer.join()
        with psycopg.connect(target):
            assert load_other_sessions(conn, TARGET, settle_s=0.3) == 1


OLD_HOMES = sorted((Path(__file__).resolve().parents[1] / "data" / "old_homes").glob("v*.sql"))


@pytest.mark.parametrize("fixture", OLD_HOMES, ids=[p.stem for p in OLD_HOMES])
def test_a_backup_of_an_old_home_passes_the_check(
    fixture: Path, pg_server_uri: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check compares a file with what today's migrations make at its schema: a home as an old release left it
    (tests/data/old_homes) is what they made then, so its backup restores."""
    name = f"pp_restore_old_{fixture.stem.split('_')[0]}"
    ensure_database(pg_server_uri, name)
    old = with_dbname(pg_server_uri, name)
    try:
        with psycopg.connect(old) as conn:
            conn.execute(fixture.read_bytes())
        backup_database(old, tmp_path / "old.dump")
        assert main(["restore", str(tmp_path / "old.dump"), "--force"]) == 0, capsys.readouterr().err
        assert "1 channels, " in capsys.readouterr().out
    finally:
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _toc_places(path: Path) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """Each TOC entry's (desc, tag) -> (where its dump id lies, where its has-data flag lies, where its data offset
    lies, that offset), read as pg_restore reads them."""
    from socialrag.pgtools import _Reader

    places = {}
    with path.open("rb") as fh:
        r = _Reader(fh, path.stat().st_size)
        r.bytes(5)
        version = (r.byte(), r.byte())
        r.byte()
        r.int_size, r.off_size = r.byte(), r.byte()
        r.byte()
        r.byte() if version >= (1, 15) else r.integer()
        for _ in range(7):
            r.integer()
        r.text(), r.text(), r.text()
        for _ in range(r.integer()):
            id_at = fh.tell()
            r.integer()
            data_at = fh.tell()
            r.integer()
            r.text(), r.text()
            tag, desc = r.text(), r.text()
            r.integer()
            for _ in range(6 if version >= (1, 14) else 5):
                r.text()
            if version >= (1, 16):
                r.integer()
            r.text(), r.text()
            while r.string() is not None:
                pass
            offset_at = fh.tell()
            r.byte()
            offset = int.from_bytes(r.bytes(r.off_size), "little")
            places[(desc, tag)] = (id_at, data_at, offset_at, offset)
    return places


def test_an_entry_given_the_rows_of_a_table_is_refused(
    db: Database, pg_server_uri: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pg_restore sends an entry's data as SQL statements when the entry says it has data and carries no COPY
    (as large objects' comments do): pgvector's entry, its SQL PaperPing's own (and harmless run twice), flagged as
    having data and pointed at the rows of ``teams`` would run those rows as statements, as a superuser."""
    with db.connection() as conn:
        conn.execute("INSERT INTO teams (team_id) VALUES ('CREATE ROLE planted_rows SUPERUSER; --')")
    dump = tmp_path / "rows.dump"
    backup_database(db.conninfo, dump)
    db.close()
    places = _toc_places(dump)
    table_id, has_data, table_offset, _ = places[("EXTENSION", "vector")]
    _, _, rows_offset, block = places[("TABLE DATA", "teams")]
    data = bytearray(dump.read_bytes())
    data[has_data : has_data + 5] = b"\x00" + (1).to_bytes(4, "little")  # the extension "has data"
    data[table_offset : table_offset + 9] = data[rows_offset : rows_offset + 9]  # teams' rows
    data[rows_offset] = 3  # the rows' own entry has none (K_OFFSET_NO_DATA)
    data[block + 1 : block + 6] = data[table_id : table_id + 5]  # the block names the extension's id
    dump.write_bytes(bytes(data))
    dump.with_name(dump.name + ".json").unlink()
    assert main(["restore", str(dump), "--force"]) == 2
    err = capsys.readouterr().err
    assert "nothing was restored" in err and "EXTENSION - vector" in err, err
    _untouched(pg_server_uri, target)


def test_a_second_entry_under_a_taken_entrys_id_is_refused(
    db: Database, pg_server_uri: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pg_restore -L takes entries by id: an entry a restore leaves behind (the public schema's comment) given the id
    of one it takes would run too, whatever its SQL."""
    said = "COMMENT ON SCHEMA public IS 'the lab''s';\n"
    dump = _tampered(db, tmp_path / "twin.dump", said.rstrip(";\n"))
    _rewrite(dump, said, "CREATE ROLE planted_twin SUPERUSER;".ljust(len(said) - 1) + "\n")
    places = _toc_places(dump)
    taken = places[("TABLE", "teams")][0]
    twin = places[("COMMENT", "SCHEMA public")][0]
    data = bytearray(dump.read_bytes())
    data[twin : twin + 5] = data[taken : taken + 5]
    dump.write_bytes(bytes(data))
    assert main(["restore", str(dump), "--force"]) == 2
    err = capsys.readouterr().err
    assert "nothing was restored" in err and "id" in err, err
    _untouched(pg_server_uri, target)


def test_a_home_whose_name_leaves_no_room_for_the_restores_own_is_refused_and_kept(
    db: Database,
    pg_server_uri: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Postgres cuts a name at 63 bytes: the scratch and staging databases of a home named with 63 would be the
    home itself, dropped before the check."""
    dump = _tampered(db, tmp_path / "home.dump")
    name = "pp_" + "x" * 60
    ensure_database(pg_server_uri, name)
    home = with_dbname(pg_server_uri, name)
    try:
        with psycopg.connect(home, autocommit=True) as conn:
            apply_migrations(conn)
            conn.execute("INSERT INTO teams (team_id) VALUES ('TKEEP')")
        monkeypatch.setenv("DATABASE_URL", home)
        monkeypatch.setenv("PAPERPING_OFFLINE", "1")
        monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
        assert main(["restore", str(dump), "--force"]) == 2
        assert "too long for a restore" in capsys.readouterr().err
        with psycopg.connect(home) as conn:
            assert conn.execute("SELECT team_id FROM teams").fetchall() == [("TKEEP",)]
    finally:
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_file_whose_rows_print_without_end_is_refused_before_they_fill_memory(
    db: Database,
    pg_server_uri: str,
    target: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The file's schema_migrations rows are printed to learn its schema: compressed, a few kilobytes of a file
    print gigabytes. What is read of them is bounded (here 200 KB, rows of 1 MB)."""
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO schema_migrations (version, name, checksum)"
            " SELECT -n, 'x', 'x' FROM generate_series(1, 40000) AS n"
        )
    dump = _tampered(db, tmp_path / "bomb.dump")
    monkeypatch.setattr("socialrag.pgtools.OUTPUT_BYTES", 200_000)
    assert main(["restore", str(dump), "--force"]) == 2
    err = capsys.readouterr().err
    assert "more than 200,000 bytes" in err, err
    _untouched(pg_server_uri, target)


def test_a_hand_made_note_beside_the_file_neither_reaches_the_terminal_nor_stops_with_a_traceback(
    db: Database, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``FILE.json`` travels with the file: its strings are printed, so one with control characters is not; one
    nested past Python's recursion limit is refused with the sentence that names it."""
    import json

    dump = _tampered(db, tmp_path / "noted.dump")
    note = dump.with_name(dump.name + ".json")
    said = json.loads(note.read_text())
    note.write_text(json.dumps({**said, "paperping": "9\x1b]0;owned\x07", "created_at": "x\n\x1b[2J"}))
    assert main(["restore", str(dump), "--force"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "restored" in out, out
    note.write_text("[" * 100_000)
    assert main(["restore", str(dump), "--force"]) == 2
    assert "is not the note `paperping backup` writes" in capsys.readouterr().err
