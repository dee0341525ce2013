"""``paperping backup``, ``restore`` and ``move-to`` on the real-data lab base: a backup taken while a writer
inserts is one snapshot and never holds the writer up; a restore into a new home gives the same status and the
same next recommendation; a home with data is not overwritten unless asked; a file that is not a backup, or is
cut short, leaves the home as it was; an old backup opens with today's schema; a move into a second Postgres
carries channels, papers, vectors, rankers, settings and posts."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bot.cli import main
from socialrag.cli.archive import backup_database, database_name
from socialrag.cli.archive import sidecar as sidecar_of
from socialrag.db import Database, ensure_database, start_embedded
from socialrag.migrate import apply_migrations
from socialrag.pgtools import with_dbname
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab

pytestmark = pytest.mark.slow

# every table a lab's data lives in, compared row for row after a move (vectors included, as text)
COMPARED = (
    "channels", "members", "messages", "reactions", "papers", "paper_embeddings", "channel_rankers",
    "channel_settings", "member_settings", "recommendations", "schema_migrations",
)  # fmt: skip


@pytest.fixture(scope="module")
def second_server() -> Iterator[str]:
    """A second Postgres with pgvector (the same package, another folder): the 'managed' one."""
    folder = Path(tempfile.mkdtemp(prefix="paperping-managed-"))
    uri, server = start_embedded(folder / "pgdata")
    yield uri
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def lab(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Database:
    build_lab(db, tmp_path, CachedEmbedder())
    with db.connection() as conn:  # a post, so that posts travel too
        conn.execute(
            "INSERT INTO recommendations (team_id, channel_id, slot_key, style, status, posted_at)"
            " VALUES ('T0LAB', 'C1', '2021-01-11', 'template', 'posted', now())"
        )
    db.close()  # a restore waits for nobody else to use the database
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    return db


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main(list(argv)) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_backup_while_a_writer_inserts(lab: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    waits: list[float] = []
    done: list[float] = []  # when each insert was committed
    stop = threading.Event()

    def write() -> None:
        with psycopg.connect(lab.conninfo, autocommit=True) as conn:
            while not stop.is_set():
                started = time.monotonic()
                conn.execute("INSERT INTO teams (team_id, name) VALUES (%s, 'w')", (f"W{len(waits):06d}",))
                done.append(time.monotonic())
                waits.append(done[-1] - started)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        time.sleep(0.3)
        began = time.monotonic()
        assert main(["backup", str(tmp_path / "lab.dump")]) == 0
        ended = time.monotonic()
        time.sleep(0.3)
    finally:
        stop.set()
        writer.join()
    assert "backup written to" in capsys.readouterr().out
    # the writer went on while the dump ran (a lock would have held it for the whole dump); a single commit may
    # stall a moment on a loaded machine
    assert sum(began < t < ended for t in done) >= 5 and max(waits) < max(2.0, (ended - began) / 2), (
        "the backup held the writer up"
    )
    assert list(tmp_path.glob(".lab.dump.partial*")) == []
    sidecar = json.loads((tmp_path / "lab.dump.json").read_text())
    assert sidecar["migration"] >= 33 and sidecar["paperping"]
    copy = with_dbname(lab.conninfo, f"{_name(lab)}_copy")
    assert main(["restore", str(tmp_path / "lab.dump")]) == 2  # the home holds data
    assert "add --force" in capsys.readouterr().err
    _restore_as(copy, tmp_path / "lab.dump")
    with psycopg.connect(copy) as conn:
        kept = [r[0] for r in conn.execute("SELECT team_id FROM teams WHERE team_id LIKE 'W%' ORDER BY 1")]
    # one snapshot: the rows committed before it, in order, none after
    assert 0 < len(kept) < len(waits) and kept == [f"W{i:06d}" for i in range(len(kept))]


def _name(db: Database) -> str:
    return database_name(db.conninfo)


def _restore_as(conninfo: str, dump: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DATABASE_URL", conninfo)
        assert main(["restore", str(dump)]) == 0


@pytest.fixture
def new_home() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="paperping-restored-"))  # where the server's own user may write
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_restore_into_a_new_home_is_the_same_home(
    lab: Database, new_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status = cli_json(capsys, "status", "--json")
    recommend = ["recommend", "nlp-lab", "--json", "--as-of", AS_OF.isoformat(), "--top", "50"]
    picked = cli_json(capsys, *recommend)
    assert len(picked["candidates"]) == 50
    assert main(["backup", str(tmp_path / "lab.dump")]) == 0
    monkeypatch.delenv("DATABASE_URL")
    monkeypatch.setenv("PAPERPING_HOME", str(new_home))  # the embedded server, in a new folder
    capsys.readouterr()
    assert main(["restore", str(tmp_path / "lab.dump")]) == 0
    out = capsys.readouterr().out
    assert "the home now holds 1 channels, " in out and " 1 posts " in out
    assert cli_json(capsys, "status", "--json") == status
    # the same post and the same 50 runners-up in the same order (the rows lie in another order on disk now)
    assert cli_json(capsys, *recommend) == picked
    # and a second restore into it is refused, then allowed with --force
    assert main(["restore", str(tmp_path / "lab.dump")]) == 2
    assert main(["restore", str(tmp_path / "lab.dump"), "--force"]) == 0
    assert cli_json(capsys, "status", "--json") == status


def test_bad_files_leave_the_home_as_it_was(lab: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli_json(capsys, "status", "--json")
    text = tmp_path / "notes.txt"
    text.write_text("not a backup\n")
    assert main(["restore", str(text), "--force"]) == 2
    assert "is not a PaperPing backup" in capsys.readouterr().err
    assert main(["backup", str(tmp_path / "lab.dump")]) == 0
    whole = (tmp_path / "lab.dump").read_bytes()
    cut = tmp_path / "cut.dump"
    cut.write_bytes(whole[: len(whole) // 2])
    shutil.copy(tmp_path / "lab.dump.json", tmp_path / "cut.dump.json")
    assert main(["restore", str(cut), "--force"]) == 2
    assert "truncated" in capsys.readouterr().err
    (tmp_path / "cut.dump.json").unlink()  # without its sidecar, pg_restore finds the end missing
    assert main(["restore", str(cut), "--force"]) == 2
    assert "truncated or damaged" in capsys.readouterr().err
    assert cli_json(capsys, "status", "--json") == status
    with psycopg.connect(with_dbname(lab.conninfo, "postgres")) as conn:
        left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE '%restoring'").fetchall()
    assert left == []


def test_an_old_backup_opens_with_todays_schema(
    pg_server_uri: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old_sql = tmp_path / "sql"
    old_sql.mkdir()
    for path in sorted(Path("sql").glob("00[0-2]*.sql")):  # the schema as of migration 0029
        shutil.copy(path, old_sql / path.name)
    ensure_database(pg_server_uri, "pp_backup_old")
    old = with_dbname(pg_server_uri, "pp_backup_old")
    with psycopg.connect(old, autocommit=True) as conn:
        apply_migrations(conn, old_sql)
        conn.execute("INSERT INTO teams (team_id) VALUES ('T1')")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('T1', 'C1', 'lab')")
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    backup_database(old, tmp_path / "old.dump")
    assert json.loads((tmp_path / "old.dump.json").read_text())["migration"] == 29
    try:
        _restore_as(with_dbname(pg_server_uri, "pp_backup_new"), tmp_path / "old.dump")
        out = capsys.readouterr().out
        latest = max(int(path.name[:4]) for path in Path("sql").glob("0*.sql"))
        assert "schema migration 0029" in out and f"1 channels, 0 papers, 0 posts (schema {latest:04d})" in out
    finally:
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            for name in ("pp_backup_old", "pp_backup_new"):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_move_to_a_second_postgres(
    lab: Database, second_server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status = cli_json(capsys, "status", "--json")
    ensure_database(second_server, "managed")
    managed = with_dbname(second_server, "managed")
    assert main(["move-to", managed]) == 0
    out = capsys.readouterr().out
    assert f"DATABASE_URL={managed}" in out
    for table in COMPARED:
        assert _rows(lab.conninfo, table) == _rows(managed, table), table
    assert main(["move-to", managed]) == 2  # the target holds PaperPing tables now
    assert "add --force" in capsys.readouterr().err
    assert main(["move-to", managed, "--force"]) == 0
    monkeypatch.setenv("DATABASE_URL", managed)
    assert cli_json(capsys, "status", "--json") == status


def _rows(conninfo: str, table: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(conninfo) as conn:
        columns = [r[0] for r in conn.execute(f"SELECT * FROM {table} LIMIT 0").description or []]
        rows = conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
    return [tuple(str(v) for v in row) for row in rows] + [tuple(columns)]


def test_a_backup_is_private_and_writes_through_no_link(db: Database, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("kept\n")
    dump = tmp_path / "home.dump"
    partials = (
        dump.with_name(f".{dump.name}.partial-{os.getpid()}"),
        dump.with_name(f".{dump.name}.json.partial-{os.getpid()}"),
    )
    for planted in (sidecar_of(dump), *partials):
        planted.symlink_to(victim)  # what another user of a shared folder could leave there
    backup_database(db.conninfo, dump)
    assert victim.read_text() == "kept\n"
    assert stat.S_IMODE(dump.stat().st_mode) == 0o600  # it holds the messages and the workspaces' tokens
    assert stat.S_IMODE(sidecar_of(dump).stat().st_mode) == 0o600
    assert not sidecar_of(dump).is_symlink()


def test_a_backup_that_cannot_write_its_sidecar_keeps_the_last_backup_whole(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills as the nightly backup writes its sidecar: the last night's file and sidecar are kept as a
    pair (before, the new file stood beside the old sidecar and read as damaged, and the old file was gone)."""
    import hashlib

    from socialrag.cli import archive

    dump = tmp_path / "nightly.dump"
    first = backup_database(db.conninfo, dump)
    with db.connection() as conn:  # the home grows before the next night
        conn.execute("CREATE TABLE IF NOT EXISTS ballast AS SELECT g FROM generate_series(1, 20000) g")

    def disk_full(path: Path, text: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive, "write_new", disk_full)
    with pytest.raises(OSError, match="No space left"):
        backup_database(db.conninfo, dump)
    noted = json.loads(sidecar_of(dump).read_text())
    assert noted["sha256"] == first.sha256 == hashlib.sha256(dump.read_bytes()).hexdigest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nightly.dump", "nightly.dump.json"], "nothing half left"


def test_a_stopped_backup_removes_its_half_file_and_the_next_cleans_what_a_killed_one_left(
    db: Database, tmp_path: Path
) -> None:
    """A cron job's timeout sends SIGTERM mid-dump: pg_dump stops and the half file goes (before, both were left,
    pg_dump writing on). A backup killed outright leaves its half file; the next backup to that name removes it,
    and keeps one a running backup is writing."""
    import signal
    import subprocess
    import sys

    dump = tmp_path / "nightly.dump"
    env = {**os.environ, "DATABASE_URL": db.conninfo, "PAPERPING_OFFLINE": "1", "PAPERPING_HOME": str(tmp_path)}
    with psycopg.connect(db.conninfo) as locker:  # pg_dump waits on this lock (up to 20 s): the backup is mid-way
        locker.execute("LOCK TABLE papers IN ACCESS EXCLUSIVE MODE")
        proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "backup", str(dump)], env=env, stderr=subprocess.PIPE)
        partial = dump.with_name(f".{dump.name}.partial-{proc.pid}")
        deadline = time.monotonic() + 60
        while not partial.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert partial.exists(), "the backup began"
        time.sleep(0.5)  # pg_dump is waiting for the lock
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and b"backup stopped by signal" in err and b"Traceback" not in err
    assert list(tmp_path.glob(".nightly.dump*")) == [], "no half file is left"
    with psycopg.connect(db.conninfo) as conn:
        dumps = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pg_dump'").fetchone()
    assert dumps == (0,), "pg_dump stopped with it"
    # what a killed backup leaves (its process gone), and what a running one is writing
    dead = dump.with_name(f".{dump.name}.partial-4194305")  # above any pid Linux gives
    running = dump.with_name(f".{dump.name}.json.partial-{os.getppid()}")
    for left in (dead, running):
        left.write_bytes(b"PGDMP half")
    backup_database(db.conninfo, dump)
    assert not dead.exists() and running.exists()


@pytest.fixture
def restore_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))


def test_foreign_or_lying_backups_are_refused(
    db: Database, pg_server_uri: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], restore_env: None
) -> None:
    target = with_dbname(pg_server_uri, "pp_backup_refused")
    ensure_database(pg_server_uri, "pp_backup_other")
    other = with_dbname(pg_server_uri, "pp_backup_other")
    try:
        with psycopg.connect(other, autocommit=True) as conn:  # another program's migrations table, same name
            conn.execute("CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean)")
            conn.execute("INSERT INTO schema_migrations VALUES (3, false)")
        backup_database(other, tmp_path / "other.dump")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("DATABASE_URL", target)
            assert main(["restore", str(tmp_path / "other.dump")]) == 2
            assert "not of a PaperPing home (it has no channels, messages, papers table)" in capsys.readouterr().err
            with db.connection() as conn:  # a newer PaperPing's backup whose sidecar says an older schema
                conn.execute("INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'future', 'x')")
            dump = tmp_path / "future.dump"
            backup_database(db.conninfo, dump)
            noted = json.loads(sidecar_of(dump).read_text())
            sidecar_of(dump).write_text(json.dumps({**noted, "migration": 1}))
            assert main(["restore", str(dump)]) == 2
            assert "comes from a newer PaperPing (schema 9999" in capsys.readouterr().err
            for note in ("not json", "[1, 2]", json.dumps({**noted, "size": "big"})):
                sidecar_of(dump).write_text(note)
                assert main(["restore", str(dump)]) == 2
                assert "is not the note `paperping backup` writes" in capsys.readouterr().err
    finally:
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            for name in ("pp_backup_other", "pp_backup_refused"):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_restore_refuses_a_rule_or_a_schema_paperping_never_made(
    db: Database, pg_server_uri: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with db.connection() as conn:  # a tampered home: a rule the service would run, and a schema of its own
        conn.execute("CREATE RULE planted AS ON INSERT TO teams DO ALSO NOTIFY planted")
        conn.execute("CREATE SCHEMA planted")
        conn.execute("INSERT INTO teams (team_id) VALUES ('T1')")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('T1', 'C1', 'lab')")
    backup_database(db.conninfo, tmp_path / "tampered.dump")
    target = with_dbname(pg_server_uri, "pp_backup_clean")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("DATABASE_URL", target)
            assert main(["restore", str(tmp_path / "tampered.dump")]) == 2
        err = capsys.readouterr().err
        assert "nothing was restored" in err and "planted" in err, err
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            databases = [r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()]
        assert "pp_backup_clean" not in databases or _channels(target) == []
    finally:
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            conn.execute('DROP DATABASE IF EXISTS "pp_backup_clean" WITH (FORCE)')


def _channels(conninfo: str) -> list[tuple[str]]:
    with psycopg.connect(conninfo) as conn:
        if conn.execute("SELECT to_regclass('public.channels')").fetchone() == (None,):
            return []
        return [(r[0],) for r in conn.execute("SELECT name FROM channels").fetchall()]


def test_move_to_never_prints_the_targets_password() -> None:
    from socialrag.cli.backups import hide_password

    assert hide_password("postgresql://paper:s3cr@t@db.example:5432/pp") == "postgresql://paper:****@db.example:5432/pp"
    assert hide_password("postgres://u:pw@h/db?sslmode=require") == "postgres://u:****@h/db?sslmode=require"
    assert hide_password("postgresql://u@h/db") == "postgresql://u@h/db"
    assert hide_password("postgresql:///pp?host=/tmp") == "postgresql:///pp?host=/tmp"
