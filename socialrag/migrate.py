"""Forward-only schema migrations: ``sql/NNNN_name.sql`` applied in order and recorded."""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import psycopg

from socialrag.errors import DatabaseError
from socialrag.resources import resource_dir

log = logging.getLogger(__name__)

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
# Any fixed number works; it only has to be the same in every PaperPing process.
_LOCK_KEY = 0x5050_4D49


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load_migrations(folder: Path | None = None) -> list[Migration]:
    """The migration files of ``folder`` (default: the shipped ``sql/``), in version order."""
    folder = folder or resource_dir("sql")
    found: list[Migration] = []
    for path in sorted(folder.iterdir()):
        m = _FILE.match(path.name)
        if m:
            found.append(Migration(int(m.group(1)), m.group(2), path.read_text(encoding="utf-8")))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise DatabaseError(f"two migration files share a number in {folder}")
    return found


def apply_migrations(conn: psycopg.Connection, folder: Path | None = None) -> list[int]:
    """Apply the migrations this database lacks; returns the versions applied now.

    An advisory lock makes concurrent processes wait for each other instead of racing.
    """
    migrations = load_migrations(folder)
    applied_now: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done: dict[int, str] = dict(conn.execute("SELECT version, checksum FROM schema_migrations").fetchall())
        known = max((m.version for m in migrations), default=0)
        if done and max(done) > known:  # an older PaperPing on a home a newer one wrote: refused, not guessed at
            raise DatabaseError(
                f"this database's schema is at migration {max(done):04d}, newer than this PaperPing knows "
                f"({known:04d}): a newer PaperPing wrote it. Run that release (or a later one), not an older one"
            )
        for migration in migrations:
            if migration.version in done:
                if done[migration.version] != migration.checksum:
                    log.warning("migration %04d_%s was edited after it was applied", migration.version, migration.name)
                continue
            log.info("applying migration %04d_%s", migration.version, migration.name)
            conn.execute(migration.sql.encode())
            conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES (%(v)s, %(n)s, %(c)s)",
                {"v": migration.version, "n": migration.name, "c": migration.checksum},
            )
            applied_now.append(migration.version)
    return applied_now
