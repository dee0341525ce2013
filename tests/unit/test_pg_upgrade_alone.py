"""``paperping upgrade-home`` on a home where another one runs, or where one was killed while ``pg_upgrade`` copied
the data: the second stops before it touches anything; the copy the killed one left (written before its journal,
so no start finds it) is deleted by the next upgrade, unless a program still uses it. The folders here hold only
their ``PG_VERSION``."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from socialrag import pgupgrade
from socialrag.cli.upgrades import program_using, remove_dead_copies, upgrade_home, upgrading_alone
from socialrag.errors import DatabaseError, InputError

COPY, OTHER = ".pgdata-pg18-20250101-000000", ".pgdata-pg18-20250102-000000"


def folder(path: Path, major: int) -> Path:
    path.mkdir()
    (path / "PG_VERSION").write_text(f"{major}\n")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home already on the installed major, so an upgrade stops at "nothing to upgrade" once it has looked."""
    home = tmp_path / "home"
    home.mkdir()
    folder(home / "pgdata", pgupgrade.installed_major())
    return home


@pytest.fixture
def user_of(tmp_path: Path) -> Iterator[Path]:
    """A running program whose command line names ``tmp_path/home/COPY``, as an orphaned pg_upgrade's would."""
    target = tmp_path / "home" / COPY
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(target)])
    try:
        deadline = time.monotonic() + 10
        while program_using(target) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        yield target
    finally:
        proc.kill()
        proc.wait()


def test_a_second_upgrade_on_the_same_home_stops_before_it_touches_anything(home: Path) -> None:
    folder(home / COPY, 18)  # the first one's copy, being written
    before = sorted(p.name for p in home.iterdir())
    with upgrading_alone(home), pytest.raises(DatabaseError, match="another `paperping upgrade-home` is running"):
        upgrade_home(home, say=print)
    assert sorted(p.name for p in home.iterdir()) == before
    with pytest.raises(InputError, match="already runs on Postgres"):  # the lock went with the first one
        upgrade_home(home, say=print)


def test_the_copy_a_killed_upgrade_left_is_deleted_by_the_next(home: Path) -> None:
    folder(home / COPY, 18)
    folder(home / OTHER, 18)  # killed twice
    said: list[str] = []
    with pytest.raises(InputError, match="already runs on Postgres"):
        upgrade_home(home, say=said.append)
    assert sorted(p.name for p in home.iterdir()) == ["pgdata"]
    assert f"an earlier upgrade stopped while pg_upgrade ran: its unfinished copy {home / COPY} is deleted" in said


def test_only_folders_named_as_an_upgrade_names_its_copy_go(home: Path, tmp_path: Path) -> None:
    victim = folder(tmp_path / "victim", 18)
    (home / COPY).symlink_to(victim)  # a link by that name: its target is not the upgrade's
    (home / OTHER).write_text("a file\n")
    for name in (".pgdata-pg18-2025", "pgdata-pg16-20250101-000000", ".pgdata-pg18-20250101-000000-x"):
        folder(home / name, 18)
    before = sorted(p.name for p in home.iterdir())
    with upgrading_alone(home):
        assert remove_dead_copies(home, print) == []
    assert sorted(p.name for p in home.iterdir()) == before and (victim / "PG_VERSION").exists()


def test_a_copy_a_running_program_still_uses_is_left(home: Path, user_of: Path) -> None:
    folder(user_of, 18)
    said: list[str] = []
    with upgrading_alone(home):
        assert remove_dead_copies(home, said.append) == []
    assert (user_of / "PG_VERSION").exists()
    assert said and f"{user_of} is an earlier upgrade's unfinished copy, still used by" in said[0]


def test_no_home_is_nothing_to_upgrade_and_makes_none(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nothing to upgrade"):
        upgrade_home(tmp_path / "home", say=print)
    assert not (tmp_path / "home").exists()
