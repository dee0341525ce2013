"""Old homes open with today's code: a home as an old release left it (its schema, its recorded migrations and a
lab's data, from ``tests/data/old_homes/``) takes every newer migration, keeps every row and value it held, and
its channel goes on posting."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from slack_sdk import WebClient

from bot.cli import main
from socialrag.config import Settings
from socialrag.db import Database, _with_dbname, migrated_database
from socialrag.migrate import load_migrations
from socialrag.models import Draft
from socialrag.recommender.serve.service import Recommender
from tests.support.labbase import CachedEmbedder
from tests.support.slack_standin import SlackStandIn, SlackState
from tests.support.slots import slot_worker

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "old_homes"
HOMES = sorted(p.name for p in FIXTURES.glob("v*.sql"))
TEAM, CHANNEL = "T0OLD", "C0LAB"
LATER = datetime(2021, 1, 18, 10, tzinfo=UTC)  # a Monday, inside the channel's posting hours

# What a later migration removed on purpose: 0014 stopped keeping a member's real name (docs/privacy.md).
DROPPED = {("members", "real_name")}
# What a later migration rewrote on purpose: 0027 gave a channel on the default sources the new defaults.
REWRITTEN = {
    ("channel_settings", "sources"): ["catalog", "semanticscholar", "arxiv", "openalex", "biorxiv", "medrxiv", "pubmed"]
}

pytestmark = pytest.mark.slow


def old_rows(conn: psycopg.Connection) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table (as JSON, so values compare exactly), sorted."""
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            " AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'"
        ).fetchall()
    ]
    out = {}
    for table in tables:
        rows = conn.execute(f'SELECT to_jsonb(t)::text FROM "{table}" t').fetchall()
        out[table] = sorted((json.loads(r[0]) for r in rows), key=lambda d: json.dumps(d, sort_keys=True))
    return out


@pytest.fixture(params=HOMES)
def old_home(request: pytest.FixtureRequest, pg_server_uri: str) -> Iterator[tuple[str, str]]:
    """A database loaded from one fixture, as the old release left it (no newer migration applied)."""
    name = f"pp_old_{os.getpid()}_{request.param.split('_')[0]}"
    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(_with_dbname(pg_server_uri, name)) as conn:
        conn.execute((FIXTURES / request.param).read_bytes())
    yield pg_server_uri, name
    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_an_old_home_keeps_every_row_and_value(old_home: tuple[str, str]) -> None:
    uri, name = old_home
    with psycopg.connect(_with_dbname(uri, name)) as conn:
        before = old_rows(conn)
        recorded = {r[0] for r in conn.execute("SELECT version FROM schema_migrations").fetchall()}
    db = migrated_database(uri, name)
    try:
        with db.connection() as conn:
            after = old_rows(conn)
            versions = {r[0] for r in conn.execute("SELECT version FROM schema_migrations").fetchall()}
    finally:
        db.close()
    assert versions == {m.version for m in load_migrations()} and recorded < versions, "every newer one applied"
    assert sum(len(rows) for rows in before.values()) > 40, "the fixture holds a lab's data"
    for table, rows in before.items():
        columns = [k for k in rows[0] if (table, k) not in DROPPED | REWRITTEN.keys()] if rows else []
        kept = sorted(
            ({k: row[k] for k in columns} for row in after[table]), key=lambda d: json.dumps(d, sort_keys=True)
        )
        old = sorted(({k: row[k] for k in columns} for row in rows), key=lambda d: json.dumps(d, sort_keys=True))
        assert kept == old, f"{table}: every old row is there with the same values"
    assert all(col not in row for table, col in DROPPED for row in after.get(table, []))
    assert all(row[col] == new for (table, col), new in REWRITTEN.items() for row in after.get(table, []))


def test_an_old_home_reports_and_goes_on_posting(
    old_home: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    uri, name = old_home
    with psycopg.connect(_with_dbname(uri, name)) as conn:
        (vector,) = conn.execute("SELECT embedding::text FROM paper_embeddings WHERE paper_id = 1").fetchone() or ("",)
        has_posts = conn.execute("SELECT to_regclass('recommendations') IS NOT NULL").fetchone() == (True,)
        posted = {r[0] for r in conn.execute("SELECT paper_id FROM recommendations").fetchall()} if has_posts else set()
    db = migrated_database(uri, name)
    try:
        with db.connection() as conn:
            again = conn.execute("SELECT embedding::text FROM paper_embeddings WHERE paper_id = 1").fetchone()
        assert again == (vector,), "the stored vector is the same"
        monkeypatch.setenv("DATABASE_URL", db.conninfo)
        monkeypatch.setenv("PAPERPING_OFFLINE", "1")
        monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
        assert main(["status", "--json"]) == 0
        (channel,) = json.loads(capsys.readouterr().out)["channels"]
        assert (channel["id"], channel["messages"], channel["papers"], channel["reactions"]) == (CHANNEL, 4, 3, 5)
        assert channel["replies"] == 1 and channel["members"] == 4
        recommender = Recommender(Settings(home=tmp_path, offline=True), db, embedder=CachedEmbedder())
        try:
            made = recommender.draft_for_slot(TEAM, CHANNEL, LATER, None)
            # a channel that never had a post gets the first day's ratings (a digest of papers) first
            drafts = [made] if isinstance(made, Draft) else list(getattr(made, "drafts", ()))
            assert drafts, made
            assert not {d.paper.paper_id for d in drafts} & (posted | {1, 2, 3}), "nothing shared or posted again"
            post_a_slot(db, recommender)
        finally:
            recommender.close()
    finally:
        db.close()


def post_a_slot(db: Database, recommender: Recommender) -> None:
    """The slot worker posts the channel's next slot into a Slack stand-in, and records it."""
    with db.connection() as conn:
        conn.execute(
            """INSERT INTO channel_settings (team_id, channel_id, next_post_at) VALUES (%(t)s, %(c)s, %(at)s)
               ON CONFLICT (team_id, channel_id) DO UPDATE SET next_post_at = %(at)s""",
            {"t": TEAM, "c": CHANNEL, "at": LATER},
        )
    state = SlackState(team_id=TEAM, domain="oldlab", channels={CHANNEL: {"id": CHANNEL, "name": "nlp-lab"}})
    slack = SlackStandIn(state).start()
    try:
        client = WebClient(token="xoxb-test", base_url=slack.url, retry_handlers=[])
        worker = slot_worker(db, lambda team: client, recommender, clock=lambda: LATER)
        assert worker.tick() == 1, "the old channel's slot is served"
        (post,) = [p for p in slack.posts if p.get("blocks")]
        assert post["channel"] == CHANNEL
    finally:
        slack.stop()
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT status, message_ts FROM recommendations WHERE team_id = %s AND posted_at >= %s", (TEAM, LATER)
        ).fetchall()
    assert rows == [("posted", post["ts"])]
