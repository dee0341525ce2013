"""A home's data as one file and back: ``pg_dump -Fc`` (one snapshot, pgvector's extension and vectors included,
no lock a serving PaperPing waits on) written beside its target and renamed when whole, with a small sidecar
that says what it holds; a restore into a fresh database that becomes the home's only once complete and migrated;
and a move of a home into another Postgres with pgvector."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict

from socialrag.cli.backup_files import FreeBytes, check_space, free_bytes, private_copy, read_note, sidecar
from socialrag.cli.forget_lists import Reapplied, StaysGone, catch_up, load_forget_list, reapply_forget_list
from socialrag.cli.restore_check import ENCODING, check_file, toc_of
from socialrag.db import put_back_replaced
from socialrag.errors import DatabaseError, InputError
from socialrag.files import dead_partials, write_new
from socialrag.migrate import apply_migrations, load_migrations
from socialrag.pgtools import choose_tools, run_tool, server_major, shipped_tools, tool_output, tools_for, with_dbname
from socialrag.storage import homes

MAGIC = b"PGDMP"  # how every pg_dump custom-format file begins
SETTLE_S = 5.0  # how long a restore waits for connections that have just closed before refusing to switch
LOCK_WAIT_MS = 20_000  # pg_dump gives up rather than queue behind a schema change (and make the service queue)
_COPY = re.compile(r"^COPY public\.schema_migrations \(")
CORE_TABLES = ("schema_migrations", "channels", "messages", "papers")  # a dump without them is another program's
# what a move takes from the dump it just made of the home: PaperPing's kinds of object in schema public, pgvector,
# and the schema's one function and trigger. A restore of a file checks more (``restore_check``): every entry's SQL
# must be the one PaperPing's migrations make, or nothing is restored
_KINDS = (
    "TABLE", "TABLE DATA", "SEQUENCE", "SEQUENCE OWNED BY", "SEQUENCE SET", "DEFAULT", "CONSTRAINT",
    "FK CONSTRAINT", "INDEX",
)  # fmt: skip
_OWN = (
    "EXTENSION - vector ",
    "FUNCTION public record_popularity() ",
    "TRIGGER public papers papers_popularity_history ",
)
_ENTRY = re.compile(r"^\d+; \d+ \d+ (.+)$")


@dataclass(frozen=True)
class BackupInfo:
    """What a backup holds, as its sidecar ``FILE.json`` records it (what the file itself says when it has none)."""

    migration: int
    tables: int
    size: int
    paperping: str | None = None
    postgres: int | None = None
    sha256: str | None = None
    created_at: str | None = None

    def describe(self) -> str:
        made = f"PaperPing {self.paperping}, " if self.paperping else ""
        when = f", taken {self.created_at}" if self.created_at else ""
        return f"{made}schema migration {self.migration:04d}, {self.tables} tables, {self.size / 1e6:.1f} MB{when}"


@dataclass(frozen=True)
class Summary:
    channels: int
    papers: int
    posts: int
    migration: int

    def describe(self) -> str:
        return f"{self.channels} channels, {self.papers} papers, {self.posts} posts (schema {self.migration:04d})"


def paperping_version() -> str | None:
    try:
        return metadata.version("paperping")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a checkout that was never installed
        return None


def backup_database(conninfo: str, dest: Path, tools: Path | None = None) -> BackupInfo:
    """Write the database to ``dest`` (custom format) and its sidecar; a failed or killed backup leaves nothing
    under ``dest``. ``tools``: the folder of the ``pg_dump`` to use (by default the one for the server's major)."""
    tools = tools or tools_for(conninfo)
    migration, tables = _describe_schema(conninfo)
    dest = dest.expanduser().absolute()
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    staged = dest.with_name(f".{sidecar(dest).name}.partial-{os.getpid()}")
    for leftover in (partial, staged, *dead_partials(dest)):
        leftover.unlink(missing_ok=True)  # a link left there is removed, never written through
    # only this user reads it (it holds the channels' messages and the workspaces' tokens); pg_dump keeps the mode
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    try:
        argv = [str(tools / "pg_dump"), "-Fc", f"-E{ENCODING}", f"--lock-wait-timeout={LOCK_WAIT_MS}"]
        argv += ["-f", str(partial)]
        run_tool(argv, conninfo, what="backup", tables=tables)
        with partial.open("rb") as fh:
            os.fsync(fh.fileno())
        info = BackupInfo(
            migration=migration,
            tables=tables,
            size=partial.stat().st_size,
            paperping=paperping_version(),
            postgres=server_major(conninfo),
            sha256=_sha256(partial),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        # the sidecar is written whole before either file is replaced: a full disk keeps the last backup's pair
        write_new(staged, json.dumps(asdict(info), indent=2) + "\n")
        os.replace(partial, dest)
        os.replace(staged, sidecar(dest))
    except BaseException:
        partial.unlink(missing_ok=True)
        staged.unlink(missing_ok=True)
        raise
    return info


def _describe_schema(conninfo: str) -> tuple[int, int]:
    """(the last migration applied, the number of tables) of a PaperPing database."""
    with psycopg.connect(conninfo) as conn:
        if not homes.load_has_schema(conn):
            raise InputError("this database holds no PaperPing schema: there is nothing to back up")
        return homes.load_schema_size(conn)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_backup(path: Path, tools: Path) -> BackupInfo:
    """What a backup file holds, after checking it is whole: a file that is not a PaperPing backup, or one cut
    short, raises ``InputError`` with what it is."""
    if not path.is_file():
        raise InputError(f"no backup file at {path}")
    with path.open("rb") as fh:
        if fh.read(len(MAGIC)) != MAGIC:
            raise InputError(f"{path} is not a PaperPing backup (not a file that `paperping backup` writes)")
    size = path.stat().st_size
    noted = read_note(path)
    if noted and noted.get("size") != size:
        raise InputError(f"{path} is truncated or damaged: {size:,} bytes where the backup wrote {noted['size']:,}")
    if noted and noted.get("sha256") and noted["sha256"] != _sha256(path):
        raise InputError(f"{path} is damaged: its checksum is not the one the backup recorded")
    toc_of(path)  # read by PaperPing first: pg_restore trusts what the file says of its own size
    listing = _restore_output(tools, ["-l", str(path)], path)
    missing = [t for t in CORE_TABLES if f" TABLE DATA public {t} " not in listing]
    if missing:
        raise InputError(
            f"{path} is a Postgres backup but not of a PaperPing home (it has no {', '.join(missing)} table)"
        )
    migrations = _restore_output(tools, ["-a", "-t", "schema_migrations", "-f", "-", str(path)], path)
    try:
        migration = _last_migration(migrations)  # the file's own word, whatever the sidecar says
    except ValueError as exc:
        raise InputError(f"{path} is not a PaperPing backup (its schema_migrations are another program's)") from exc
    found = BackupInfo(migration=migration, tables=listing.count(" TABLE DATA "), size=size)
    if not noted:
        return found
    made, when = noted.get("paperping"), noted.get("created_at")
    return BackupInfo(
        migration=migration,
        tables=found.tables,
        size=size,
        paperping=made if isinstance(made, str) and made.isprintable() else None,  # no escape reaches the terminal
        postgres=noted.get("postgres") if isinstance(noted.get("postgres"), int) else None,
        sha256=noted.get("sha256"),
        created_at=when if isinstance(when, str) and when.isprintable() else None,
    )


def _restore_output(tools: Path, args: list[str], path: Path) -> str:
    try:
        return tool_output([str(tools / "pg_restore"), *args])
    except ValueError as exc:
        raise InputError(f"{path} cannot be read as a backup; it is truncated or damaged ({exc})") from exc


def _last_migration(copy_text: str) -> int:
    versions, inside = [], False
    for line in copy_text.splitlines():
        if _COPY.match(line):
            inside = True
        elif inside and line == "\\.":
            break
        elif inside:
            versions.append(int(line.split("\t", 1)[0]))
    return max(versions, default=0)


def restore_database(
    path: Path, server: str, name: str, *, force: bool = False, data: Path | None = None, free: FreeBytes = free_bytes
) -> tuple[BackupInfo, Summary, Reapplied]:
    """Restore ``path`` as database ``name`` of ``server`` (a connection to any other database there): into a new
    database, migrated to today's schema, with the forget list and the deletions of the database it replaces
    applied again (``forget_lists``), that replaces ``name`` only when complete, if ``data`` has room (``check_space``).
    The file is read once, into a copy only this user reads (``private_copy``): what is checked is what is restored."""
    check_room(name)
    with private_copy(path) as copy:
        check_space(copy, data, free)
        return _restore_copy(copy, server, name, force=force)


def _restore_copy(path: Path, server: str, name: str, *, force: bool) -> tuple[BackupInfo, Summary, Reapplied]:
    tools = tools_for(server)
    info = read_backup(path, tools)
    known = max(m.version for m in load_migrations())
    if info.migration > known:
        raise InputError(
            f"{path} comes from a newer PaperPing (schema {info.migration:04d}, this one knows {known:04d}): "
            "upgrade PaperPing, then restore"
        )
    target = with_dbname(server, name)
    with psycopg.connect(server, autocommit=True) as conn:
        put_back_replaced(conn, name)  # a restore stopped between its renames left the home under another name
    exists = _database_exists(server, name)
    if not force and exists and holds_data(target):
        raise InputError(f"database {name} already holds a home's data; add --force to replace it with {path}")
    stays_gone = load_forget_list(target, name) if exists else StaysGone()
    chosen = check_file(path, server, name, info.migration, tools)
    staging = f"{name}_restoring"
    _drop_database(server, staging)  # what an earlier restore left when it was stopped
    _create_database(server, staging)
    restored = with_dbname(server, staging)
    try:
        restore_into(tools, path, restored, tables=info.tables, chosen=chosen)
        first = reapply_forget_list(restored, stays_gone)
    except BaseException as exc:
        _drop_database(server, staging)
        if isinstance(exc, DatabaseError | psycopg.errors.DiskFull):  # a full disk: said by pg_restore, a migration
            raise DatabaseError(f"{exc}. The home is as it was; the half-restored copy was removed") from exc
        raise

    def last() -> Reapplied:  # what the home gained meanwhile (a forget-me heard), read again once nothing uses it
        return catch_up(target, name, restored, stays_gone, first) if exists else first

    reapplied = _switch(server, name, staging, last)
    return info, summarize(target), reapplied


NAME_BYTES = 63  # Postgres cuts a longer name to this: NAME_restoring would be NAME itself, dropped
SUFFIXES = ("_checking", "_restoring", "_replaced")  # the databases a restore makes beside the home's


def check_room(name: str) -> None:
    room = NAME_BYTES - max(len(suffix) for suffix in SUFFIXES)
    if len(name.encode()) > room:
        raise InputError(
            f"the database name {name!r} is too long for a restore, whose own databases beside it ({name}_restoring) "
            f"Postgres would cut to the home's own name: nothing was changed. Rename the database to at most {room} "
            "bytes (ALTER DATABASE ... RENAME TO ...), set DATABASE_URL to it and restore again"
        )


def restore_into(
    tools: Path, path: Path, conninfo: str, *, tables: int, clean: bool = False, chosen: list[int] | None = None
) -> None:
    """``pg_restore`` into ``conninfo`` in one transaction, then today's migrations. Ownership, grants and the
    extension's comment (which only its owner may set) stay behind, so that any user can restore. ``chosen``: the
    entries to restore (``restore_check.check_dump``); by default PaperPing's kinds of entry (a move's own dump)."""
    if chosen is None:
        listing = _restore_output(tools, ["-l", str(path)], path)
        lines = [x for x in listing.splitlines() if _restored(x)]
    else:
        lines = [f"{dump_id};" for dump_id in chosen]
    with tempfile.NamedTemporaryFile("w", suffix=".list", delete=False) as fh:
        fh.write("\n".join(lines) + "\n")
    try:
        argv = [str(tools / "pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"]
        argv += [*(["--clean", "--if-exists"] if clean else []), "-L", fh.name, str(path)]
        run_tool(argv, conninfo, what="restore", tables=tables)
    finally:
        os.unlink(fh.name)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        apply_migrations(conn)


def _restored(line: str) -> bool:
    """Whether a line of ``pg_restore -l`` names an entry a restore takes (see ``_KINDS``)."""
    entry = _ENTRY.match(line)
    if entry is None:
        return False
    what = entry.group(1) + " "
    if any(what.startswith(own) for own in _OWN):
        return True
    return any(what.startswith(f"{kind} public ") for kind in _KINDS)


def holds_data(conninfo: str) -> bool:
    """Whether a database holds a home's data (channels, messages or papers), not just an empty schema."""
    with psycopg.connect(conninfo) as conn:
        return homes.load_has_schema(conn) and homes.load_holds_data(conn)


def has_paperping_tables(conninfo: str) -> bool:
    with psycopg.connect(conninfo) as conn:
        return homes.load_has_schema(conn)


def summarize(conninfo: str) -> Summary:
    with psycopg.connect(conninfo) as conn:
        return Summary(*homes.load_home_counts(conn))


def _database_exists(server: str, name: str) -> bool:
    with psycopg.connect(server, autocommit=True) as conn:
        return homes.load_database_exists(conn, name)


def _create_database(server: str, name: str) -> None:
    try:
        with psycopg.connect(server, autocommit=True) as conn:
            homes.create_database(conn, name)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise DatabaseError(
            f"this database user may not create a database to restore into ({exc}); restore into an empty "
            "database instead: pg_restore --no-owner --no-privileges -d DATABASE_URL FILE"
        ) from exc


def _drop_database(server: str, name: str) -> None:
    with psycopg.connect(server, autocommit=True) as conn:
        homes.drop_database(conn, name, force=True)


def _switch(server: str, name: str, staging: str, last: Callable[[], Reapplied]) -> Reapplied:
    """``staging`` becomes ``name``; the database it replaces goes once nothing uses it. ``last`` runs once nothing
    uses ``name``, before the renames (a client that connects meanwhile stops them); what it returns is returned."""
    with psycopg.connect(server, autocommit=True) as conn:
        in_use = DatabaseError(
            f"database {name} is in use (a running `paperping run`?): stop what uses it, then restore again; the "
            f"restored copy waits as database {staging}"
        )
        if homes.load_other_sessions(conn, name, settle_s=SETTLE_S):
            raise in_use
        result = last()
        old = f"{name}_replaced"
        homes.drop_database(conn, old)
        try:  # one that connects after the look stops the rename
            if homes.load_database_exists(conn, name):
                homes.rename_database(conn, name, old)
        except psycopg.errors.ObjectInUse as exc:
            raise in_use from exc
        homes.rename_database(conn, staging, name)
        homes.drop_database(conn, old)
    return result


def database_name(conninfo: str) -> str:
    name = conninfo_to_dict(conninfo).get("dbname")
    if not name:
        raise InputError("the database URL names no database")
    return str(name)


def move_database(source: str, target: str, *, force: bool = False) -> tuple[Summary, Summary]:
    """Copy the database at ``source`` into ``target`` (another Postgres with pgvector) by dump and restore, in one
    transaction there; returns both summaries, which match."""
    shipped = shipped_tools()
    tools = choose_tools(max(server_major(source), server_major(target)), shipped)
    check_vector(target)
    if has_paperping_tables(target) and not force:
        raise InputError("the target already holds PaperPing tables; add --force to replace what they hold")
    with tempfile.TemporaryDirectory(prefix="paperping-move-") as folder:
        dump = Path(folder) / "home.dump"
        info = backup_database(source, dump)
        restore_into(tools, dump, target, tables=info.tables, clean=force)
    return summarize(source), summarize(target)


def check_vector(conninfo: str) -> None:
    """The target must offer pgvector; say how to get it when it does not."""
    with psycopg.connect(conninfo) as conn:
        available = homes.load_vector_available(conn)
    if not available:
        raise DatabaseError(
            "the target Postgres has no pgvector extension: on a managed Postgres enable it in the provider's "
            "settings (AWS RDS, Google Cloud SQL, Azure, Supabase and Neon ship it), on your own server install "
            "pgvector (apt install postgresql-NN-pgvector), then run CREATE EXTENSION vector; as an admin"
        )
