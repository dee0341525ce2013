"""A home's database as a whole, for backup, restore and moves: whether it holds PaperPing's schema and data,
what it holds in short, and the server-level statements that create, rename and drop a database."""

from __future__ import annotations

import time

import psycopg
from psycopg import sql


def load_has_schema(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT to_regclass('public.schema_migrations') IS NOT NULL").fetchone() == (True,)


def load_schema_size(conn: psycopg.Connection) -> tuple[int, int]:
    """(the last migration applied, the number of tables)."""
    row = conn.execute(
        "SELECT (SELECT max(version) FROM schema_migrations),"
        " (SELECT count(*) FROM pg_tables WHERE schemaname = 'public')"
    ).fetchone()
    assert row is not None
    return int(row[0] or 0), int(row[1] or 0)


def load_holds_data(conn: psycopg.Connection) -> bool:
    """Channels, messages or papers: a home's data, not just an empty schema."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM channels) OR EXISTS (SELECT 1 FROM messages) OR EXISTS (SELECT 1 FROM papers)"
    ).fetchone()
    return bool(row and row[0])


def load_home_counts(conn: psycopg.Connection) -> tuple[int, int, int, int]:
    """(channels, papers, posts made, the last migration)."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM channels), (SELECT count(*) FROM papers),"
        " (SELECT count(*) FROM recommendations WHERE status = 'posted'),"
        " (SELECT max(version) FROM schema_migrations)"
    ).fetchone()
    assert row is not None
    return int(row[0] or 0), int(row[1] or 0), int(row[2] or 0), int(row[3] or 0)


def load_vector_available(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is not None


def load_database_exists(conn: psycopg.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_database WHERE datname = %(n)s", {"n": name}).fetchone() is not None


def load_other_sessions(conn: psycopg.Connection, name: str, *, settle_s: float = 0.0) -> int:
    """How many clients other than this one are connected to database ``name`` (the server's own workers, such as
    autovacuum, are not counted: a rename stops them), waiting up to ``settle_s`` seconds for them to leave: a
    server process lingers a moment after its client has closed. ``conn`` must be in autocommit, so that each look
    sees the present."""
    deadline = time.monotonic() + settle_s
    while True:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = %(n)s AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
            {"n": name},
        ).fetchone()
        users = int(row[0]) if row else 0
        if not users or time.monotonic() >= deadline:
            return users
        time.sleep(0.1)


def create_database(conn: psycopg.Connection, name: str) -> None:
    """An empty database (from template0, so nothing of template1 comes with it); ``conn`` is in autocommit."""
    conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name)))


def drop_database(conn: psycopg.Connection, name: str, *, force: bool = False) -> None:
    query = "DROP DATABASE IF EXISTS {} WITH (FORCE)" if force else "DROP DATABASE IF EXISTS {}"
    conn.execute(sql.SQL(query).format(sql.Identifier(name)))


def rename_database(conn: psycopg.Connection, old: str, new: str) -> None:
    conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(old), sql.Identifier(new)))


def load_has_database(conn: psycopg.Connection, name: str) -> bool:
    """Whether the server holds a database of this name (a home that never held PaperPing's has none)."""
    return conn.execute("SELECT 1 FROM pg_database WHERE datname = %(name)s", {"name": name}).fetchone() is not None


def update_vector_extension(conn: psycopg.Connection) -> None:
    """Bring pgvector's extension to the version the server ships (after ``pg_upgrade``, which keeps the old one)."""
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        conn.execute("ALTER EXTENSION vector UPDATE")
