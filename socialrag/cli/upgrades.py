"""``paperping upgrade-home``: a home made by an older major of the embedded Postgres brought onto the installed
one. A backup first (``HOME/backups/pre-upgrade-pg16-DATE.dump``, taken with the old major's own ``pg_dump``),
then ``pg_upgrade`` into a new folder, the swap (journalled, and undone when the new folder does not open), the
migrations and the planner's statistics; the old folder is kept under another name until the admin deletes it.
Nothing is done while a server runs on the home."""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg
from psycopg.conninfo import conninfo_to_dict

from socialrag.cli.archive import backup_database
from socialrag.cli.subcommand import OpenDatabase, Subcommand
from socialrag.config import Settings
from socialrag.db import DB_NAME, migrated_database, start_embedded
from socialrag.errors import DatabaseError, InputError
from socialrag.pgtools import shipped_tools
from socialrag.pgupgrade import (
    FRESH_NAME,
    HomeUpgradeUnfinished,
    Unfinished,
    check_home,
    clear_unfinished,
    give_to_service,
    going_back,
    home_major,
    installed_major,
    old_server,
    pg_run,
    record_unfinished,
    stamp,
    undo_unfinished,
    unfinished_help,
)
from socialrag.storage import homes

Say = Callable[[str], None]
OpenHome = Callable[[Path, Say], None]  # opens the upgraded folder once it is in place


@dataclass(frozen=True)
class Upgraded:
    old_major: int
    new_major: int
    backup: Path | None
    old_folder: Path
    seconds: float


def upgrade_home(
    home: Path,
    *,
    wheel: Path | None = None,
    trusted: str | None = None,
    offline: bool = False,
    say: Say = print,
    open_new: OpenHome | None = None,
) -> Upgraded:
    """Upgrade ``home/pgdata`` to the installed major; raises ``DatabaseError`` with what to do when it cannot,
    leaving the home as it was. ``trusted``: the sha256 of an old server's wheel the admin vouches for. ``open_new``
    opens the upgraded folder once it is in place (``open_upgraded``; a test gives one that fails)."""
    started = time.monotonic()
    pgdata = home / "pgdata"
    refuse_if_running(pgdata)
    with upgrading_alone(home):
        undo_unfinished(home, say)
        remove_dead_copies(home, say)
        return upgrade_alone(home, started, wheel=wheel, trusted=trusted, offline=offline, say=say, open_new=open_new)


def upgrade_alone(
    home: Path,
    started: float,
    *,
    wheel: Path | None,
    trusted: str | None,
    offline: bool,
    say: Say,
    open_new: OpenHome | None,
) -> Upgraded:
    """The upgrade's five steps, under ``upgrading_alone``."""
    pgdata = home / "pgdata"
    found, target = home_major(pgdata), installed_major()
    if found is None:
        raise InputError(f"no embedded Postgres home at {pgdata}: there is nothing to upgrade")
    if found == target:
        raise InputError(f"the home {pgdata} already runs on Postgres {target}: there is nothing to upgrade")
    if found > target:
        check_home(pgdata)
    old = old_server(found, home / "cache" / "pgserver", wheel=wheel, offline=offline, trusted=trusted)
    say(f"Postgres {found} programs: {old.bin} ({old.origin})")
    when = stamp()
    backup = back_up(old.bin, pgdata, home / "backups" / f"pre-upgrade-pg{found}-{when}.dump", found, say)
    fresh, kept = home / f".pgdata-pg{target}-{when}", home / f"pgdata-pg{found}-{when}"
    say(f"[2/5] pg_upgrade from Postgres {found} to {target} into {fresh}")
    run_pg_upgrade(old.bin, shipped_tools()[target], pgdata, fresh, say)
    swapping = Unfinished(found, target, kept.name, fresh.name)
    record_unfinished(home, swapping)  # until the new folder has opened, a start finds it and stops
    pgdata.rename(kept)
    fresh.rename(pgdata)
    say(f"[3/5] the old folder is kept as {kept}; opening the home on Postgres {target}")
    try:
        (open_new or open_upgraded)(pgdata, say)
    except Exception as exc:
        raise swap_back(home, swapping, when, exc) from exc
    clear_unfinished(home)
    return Upgraded(found, target, backup, kept, time.monotonic() - started)


@contextmanager
def upgrading_alone(home: Path) -> Iterator[None]:
    """One ``paperping upgrade-home`` at a time on a home: a lock on the home's folder, which goes with the process
    however it ends (a kill included), so that a second one stops before it touches anything."""
    try:
        fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"no embedded Postgres home at {home / 'pgdata'}: there is nothing to upgrade") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DatabaseError(
                f"another `paperping upgrade-home` is running on {home}: nothing was changed. Let it finish, then run "
                "`paperping status`"
            ) from None
        yield
    finally:
        os.close(fd)  # and the lock with it


def remove_dead_copies(home: Path, say: Say) -> list[Path]:
    """Delete what an upgrade killed while ``pg_upgrade`` ran leaves: its new folder (``.pgdata-pgNN-DATE``), written
    before the journal and never moved in. Only under ``upgrading_alone``, and only a folder no running program
    names (an orphaned ``pg_upgrade``, or a server left on it), which is kept and named instead."""
    removed = []
    for path in sorted(home.iterdir()):
        if not (FRESH_NAME.fullmatch(path.name) and path.is_dir() and not path.is_symlink()):
            continue
        user = program_using(path)
        if user is not None:
            say(f"{path} is an earlier upgrade's unfinished copy, still used by {user}: it is left as it is")
            continue
        shutil.rmtree(path)
        removed.append(path)
        say(f"an earlier upgrade stopped while pg_upgrade ran: its unfinished copy {path} is deleted")
    return removed


def program_using(folder: Path) -> str | None:
    """A running program (its name and pid) whose command line names ``folder``, else None."""
    for proc in psutil.process_iter(["pid", "name", "cmdline"]):
        if any(str(folder) in arg for arg in proc.info["cmdline"] or []):
            return f"{proc.info['name']} (pid {proc.info['pid']})"
    return None


def back_up(old_bin: Path, pgdata: Path, backup: Path, major: int, say: Say) -> Path | None:
    """Step 1: PaperPing's database dumped with the old major's ``pg_dump``; None when the home holds none."""
    with running(old_bin, pgdata) as server:
        if not has_paperping(server):
            say("[1/5] the home holds no PaperPing database: nothing to back up")
            return None
        say(f"[1/5] backup with Postgres {major}'s pg_dump: {backup}")
        info = backup_database(with_db(server, DB_NAME), backup, tools=old_bin)
        say(f"      {info.describe()}")
        return backup


def swap_back(home: Path, swapped: Unfinished, when: str, error: Exception) -> DatabaseError:
    """Put the old folder back after the upgraded one failed to open; the error that says so."""
    pgdata, kept, old, new = home / "pgdata", home / swapped.kept, swapped.old_major, swapped.new_major
    failed = home / f"pgdata-failed-pg{new}-{when}"
    try:
        pgdata.rename(failed)
        kept.rename(pgdata)
    except OSError as exc:
        said = (
            f"Postgres {new} could not open the upgraded home ({error}); putting the old folder back failed ({exc}): "
        )
        return HomeUpgradeUnfinished(said + unfinished_help(home, swapped))
    clear_unfinished(home)
    return DatabaseError(
        f"Postgres {new} could not open the upgraded home: {error}\n"
        f"The old folder is back in place: {pgdata} is the Postgres {old} home it was before the upgrade, unchanged. "
        f"The upgraded copy that failed is kept as {failed} (its log is in it; once read: rm -rf '{failed}'). "
        f"To run PaperPing on the home again, stay on Postgres {old}: {going_back(old)}"
    )


def refuse_if_running(pgdata: Path) -> None:
    """Stop, having changed nothing, while a Postgres server runs on ``pgdata`` (a ``paperping run`` keeps one)."""
    pid = running_server(pgdata)
    if pid is not None:
        raise DatabaseError(
            f"a Postgres server (pid {pid}) still runs on {pgdata}: nothing was changed. Stop every PaperPing process "
            f"on this home (`paperping run` and any other command using it), then run `paperping upgrade-home` again"
        )


def running_server(pgdata: Path) -> int | None:
    """The pid of the Postgres server whose ``postmaster.pid`` is in ``pgdata``, when it is alive."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None  # none there, or none we may read: starting the old server below fails if one runs
    try:
        alive = psutil.Process(pid)
        return pid if "postgres" in alive.name() else None  # a pid left by a crash may since be another program's
    except psutil.NoSuchProcess:
        return None  # a server that was killed: pg_ctl starts and stops it cleanly
    except psutil.AccessDenied:
        return pid


@contextmanager
def running(bin_dir: Path, pgdata: Path) -> Iterator[str]:
    """The old server started on ``pgdata`` for the backup, on a private socket only, stopped afterwards."""
    sockets = Path(tempfile.mkdtemp(prefix="pp-up-"))
    give_to_service(sockets)
    ctl = [str(bin_dir / "pg_ctl"), "-D", str(pgdata)]
    options = f"-c listen_addresses='' -k {sockets} -p 5432"
    pg_run([*ctl, "-w", "-t", "120", "-l", str(sockets / "log"), "-o", options, "start"])
    try:
        yield f"host={sockets} port=5432 user=postgres dbname=postgres"
    finally:
        pg_run([*ctl, "-w", "-m", "fast", "stop"])
        shutil.rmtree(sockets, ignore_errors=True)


def with_db(conninfo: str, name: str) -> str:
    return conninfo.replace("dbname=postgres", f"dbname={name}")


def has_paperping(conninfo: str) -> bool:
    with psycopg.connect(conninfo) as conn:
        return homes.load_has_database(conn, DB_NAME)


def run_pg_upgrade(old_bin: Path, new_bin: Path, pgdata: Path, fresh: Path, say: Say) -> None:
    """``pg_upgrade`` (copy mode: the old folder stays whole) into a new folder made like the old one."""
    work = Path(tempfile.mkdtemp(prefix="pp-upgrade-"))
    fresh.mkdir()
    give_to_service(work, fresh)
    checksums = re.search(r"checksum version:\s*(\d+)", pg_run([str(old_bin / "pg_controldata"), "-D", str(pgdata)]))
    init = [str(new_bin / "initdb"), "--auth=trust", "--auth-local=trust", "--encoding=utf8", "-U", "postgres"]
    if checksums is None or checksums.group(1) == "0":
        init.append("--no-data-checksums")  # pg_upgrade needs both alike; the old folder is left untouched
    try:
        pg_run([*init, "-D", str(fresh)])
        argv = [str(new_bin / "pg_upgrade"), "-b", str(old_bin), "-B", str(new_bin), "-d", str(pgdata)]
        jobs = str(min(os.cpu_count() or 1, 8))
        pg_run([*argv, "-D", str(fresh), "-U", "postgres", "-j", jobs, "--socketdir", str(work)], cwd=work, say=say)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def open_upgraded(pgdata: Path, say: Say) -> None:
    """Start the new server, bring pgvector's extension to the installed version, apply migrations, then gather the
    planner's statistics."""
    uri, server = start_embedded(pgdata, upgrading=True)
    try:
        db = migrated_database(uri, DB_NAME)
        with psycopg.connect(db.conninfo, autocommit=True) as conn:
            homes.update_vector_extension(conn)
        db.close()
        say("[4/5] schema migrations applied")
        gather_statistics(uri, home_major(pgdata) or installed_major(), say)
    finally:
        server.cleanup()


def analyze_commands(major: int) -> list[list[str]]:
    """``vacuumdb``'s options as ``pg_upgrade`` of this major advises once the new server runs: from 18 on it carries
    most statistics over, so the missing ones are made in stages, then all of them refreshed."""
    if major >= 18:
        return [["--all", "--analyze-in-stages", "--missing-stats-only"], ["--all", "--analyze-only"]]
    return [["--all", "--analyze-in-stages"]]


def gather_statistics(uri: str, major: int, say: Say) -> bool:
    """Step 5: the planner's statistics with the new major's ``vacuumdb``, its lines printed as it goes. A failure
    only warns: the upgrade is done, and autovacuum gathers them in time."""
    params = conninfo_to_dict(uri)
    where = ["-h", str(params["host"]), "-U", str(params.get("user") or "postgres")]
    where += ["-p", str(params["port"])] if params.get("port") else []
    vacuumdb = str(shipped_tools()[major] / "vacuumdb")
    failed: list[str] = []

    def relay(line: str) -> None:
        if line.startswith("vacuumdb: error:"):  # with --all it goes on to the next database, and may exit 0
            failed.append(line.removeprefix("vacuumdb: error: "))
        say(f"      {line}")

    for options in analyze_commands(major):
        say(f"[5/5] the planner's statistics: vacuumdb {' '.join(options)}")
        try:
            pg_run([vacuumdb, *options, *where], say=relay)
        except (DatabaseError, OSError) as exc:
            failed.append(str(exc))
        if failed:
            say(
                f"warning: gathering the planner's statistics failed ({failed[0]}). The upgrade itself is done and "
                f"the home opens; autovacuum gathers them over time, and some queries may be slower until then."
            )
            return False
    return True


def upgrade_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wheel", type=Path, help="the old release's wheel, downloaded elsewhere, when this machine has no registry"
    )
    parser.add_argument(
        "--wheel-sha256",
        metavar="SHA256",
        help="run the old programs from a wheel of this sha256 even though it is not the one published on PyPI "
        "(only for a wheel you built or checked yourself: its programs run with the home's data in reach)",
    )


def upgrade(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    if settings.database_url:
        raise InputError("DATABASE_URL is set: its server is upgraded by whoever runs it, not by PaperPing")
    done = upgrade_home(settings.home, wheel=args.wheel, trusted=args.wheel_sha256, offline=settings.offline)
    print(f"upgraded the home from Postgres {done.old_major} to {done.new_major} in {done.seconds:.0f} s")
    if done.backup is not None:
        print(f"backup kept: {done.backup} (`paperping restore` reads it)")
    print(f"old folder kept: {done.old_folder}; once PaperPing runs well, delete it: rm -rf '{done.old_folder}'")
    print(f"to go back: {going_back(done.old_major)}, then mv '{settings.home / 'pgdata'}' aside and")
    print(f"            mv '{done.old_folder}' '{settings.home / 'pgdata'}'")
    return 0


UPGRADE_HOME = Subcommand(
    "upgrade-home", "move a home made by an older embedded Postgres onto the installed one", upgrade_arguments, upgrade
)
