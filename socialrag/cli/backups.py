"""``paperping backup``, ``restore`` and ``move-to``: a home's data kept as one file, brought back, or moved into
a managed Postgres with pgvector."""

from __future__ import annotations

import argparse
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from socialrag.cli.archive import backup_database, database_name, move_database, restore_database
from socialrag.cli.subcommand import OpenDatabase, Subcommand
from socialrag.config import Settings
from socialrag.db import DB_NAME, start_embedded
from socialrag.errors import InputError
from socialrag.pgtools import with_dbname
from socialrag.text import printable


def backup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="where to write the backup (FILE.json beside it says what it holds)")


def backup(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    # a stop (a cron job's timeout, systemd) ends the backup as an error would: pg_dump is stopped and the
    # half-written file removed, and the last backup stays as it was
    signal.signal(signal.SIGTERM, _stop)
    if args.file.is_dir():
        raise InputError(
            f"{args.file} is a folder: give the backup a file name, such as {args.file / 'paperping.dump'}"
        )
    try:
        info = backup_database(open_db().conninfo, args.file)
    except OSError as exc:  # its folder cannot be made or written (a file in its place, no permission, a full disk)
        raise InputError(
            f"could not write the backup to {args.file} ({exc.strerror or exc}); the last backup is kept as it was"
        ) from exc
    print(f"backup written to {printable(str(args.file))}: {info.describe()}")
    return 0


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(f"backup stopped by signal {signum}; the last backup is kept as it was")


def restore_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a file `paperping backup` wrote")
    parser.add_argument("--force", action="store_true", help="replace a home that already holds data")


@contextmanager
def home_server(settings: Settings) -> Iterator[tuple[str, str, Path | None]]:
    """(a connection to the home's server outside PaperPing's database, that database's name, the server's data
    folder: the embedded server's, None for ``DATABASE_URL``'s, whose disk is that server's own)."""
    if settings.database_url:
        yield with_dbname(settings.database_url, "postgres"), database_name(settings.database_url), None
        return
    uri, server = start_embedded(settings.home / "pgdata")
    try:
        yield uri, DB_NAME, settings.home / "pgdata"
    finally:
        server.cleanup()


def restore(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    with home_server(settings) as (server, name, data):
        info, summary, reapplied = restore_database(args.file, server, name, force=args.force, data=data)
    print(f"restored {printable(str(args.file))} ({info.describe()})")
    if said := reapplied.describe():
        print(said)
    print(f"the home now holds {summary.describe()}")
    return 0


def move_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="DATABASE_URL", help="the Postgres with pgvector to move into")
    parser.add_argument("--force", action="store_true", help="replace PaperPing tables the target already has")


def move_to(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    if settings.database_url and settings.database_url == args.url:
        raise InputError("DATABASE_URL already names that database: there is nothing to move")
    source, target = move_database(open_db().conninfo, args.url, force=args.force)
    print(f"moved {target.describe()}")
    if source != target:
        print(f"warning: the home holds {source.describe()}: something wrote to it during the move; move again")
        return 1
    print("set this for every PaperPing process (and keep the home as a fallback until it runs there):")
    print(
        f"DATABASE_URL={hide_password(args.url)}"
        + (" (with your password)" if "****" in hide_password(args.url) else "")
    )
    return 0


def hide_password(url: str) -> str:
    """``url`` with its password as ``****``, in the URL's user part, a URL's parameter or a keyword of
    ``key=value`` form: what is printed may end in a terminal's log or a CI's."""
    url = re.sub(r"^([a-z][a-z0-9+.-]*://[^:/@]*:).*@(?=[^@/]*(?:[/?]|$))", r"\1****@", url, flags=re.IGNORECASE)
    if "://" in url:
        return re.sub(r"([?&](?:ssl)?password=)[^&#]*", r"\1****", url, flags=re.IGNORECASE)
    return re.sub(r"(\b(?:ssl)?password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|\S+)", r"\1****", url, flags=re.IGNORECASE)


BACKUP = Subcommand("backup", "write the home's data to a file, while PaperPing serves", backup_arguments, backup)
RESTORE = Subcommand("restore", "bring a backup back into a new or emptied home", restore_arguments, restore)
MOVE_TO = Subcommand("move-to", "move the home's data into another Postgres with pgvector", move_arguments, move_to)
