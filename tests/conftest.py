"""Shared fixtures: one embedded Postgres with pgvector per test session, a fresh database per test.

Nothing here imports the database driver until a test asks for a database, so the database-free tests of
``tests/unit`` collect and run without it."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from socialrag.db import Database

TEMPLATE = "paperping_template"
_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_server_uri() -> Iterator[str]:
    """A real Postgres with pgvector: the embedded server PaperPing itself uses, in a temporary folder."""
    from socialrag.db import Database, _with_dbname, ensure_database, start_embedded

    home = Path(tempfile.mkdtemp(prefix="paperping-test-"))
    uri, server = start_embedded(home / "pgdata")
    ensure_database(uri, TEMPLATE)
    Database(_with_dbname(uri, TEMPLATE)).migrate()
    yield uri
    server.cleanup()
    shutil.rmtree(home, ignore_errors=True)  # a test session leaves no database behind (80 MB each)


@pytest.fixture
def db(pg_server_uri: str) -> Iterator[Database]:
    """A freshly migrated database of its own for one test (copied from a migrated template)."""
    import psycopg

    from socialrag.db import Database, _with_dbname

    name = f"pp_test_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
    database = Database(_with_dbname(pg_server_uri, name))
    yield database
    database.close()
    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
