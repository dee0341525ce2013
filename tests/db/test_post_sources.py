"""PaperPing's stored posts rest on what the channel still keeps: a post deleted in Slack is left out of `why`, App
Home and status and keeps only its paper; a reason whose message was deleted leaves the stored drafts; the model's
words are cleared where they may quote what went, and after 30 days everywhere; quotes stored before this release
are taken out by migration 0037."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from socialrag import knowledge, storage
from socialrag.db import Database, _with_dbname
from socialrag.knowledge.intake import index_messages
from socialrag.migrate import apply_migrations
from socialrag.models import (
    AuthorDiscussedHere,
    Channel,
    Draft,
    EarlierReception,
    Member,
    Message,
    PaperMeta,
    PaperRef,
    RelatedToEarlierPaper,
    SocialSignal,
    draft_json,
)
from socialrag.resources import resource_dir
from tests.support.slots import slot_worker

T = "T0LAB"
AT = datetime(2021, 1, 4, 10, tzinfo=UTC)
SHARE_TS, REPLY_TS, EARLIER_POST, LATEST_POST = "10.000001", "10.000002", "20.000001", "30.000001"
SHARE = "https://lab.slack.com/archives/C1/p10000001"
REPLY = "https://lab.slack.com/archives/C1/p10000002?thread_ts=10.000001&cid=C1"


def _draft(reply_id: int, title: str) -> dict[str, Any]:
    signals = (
        SocialSignal(RelatedToEarlierPaper("Weight Poisoning", "cites", 0.7, sharer="U3"), 3.0, ("U3",), (SHARE,)),
        SocialSignal(
            EarlierReception("Weight Poisoning", 0, 0, 1, ("U1",), first_reply_id=reply_id), 1.0, (), (REPLY,)
        ),
        SocialSignal(AuthorDiscussedHere("Ann Lee", 2), 1.0),
    )
    paper = PaperMeta(1, title, "https://arxiv.org/abs/2101.00001", ("Ann Lee",), None, 2021, None)
    draft = Draft(T, "C1", paper, "template", "It builds on <@U3>'s thread.", signals, SHARE, "Weight Poisoning")
    return draft_json(draft)


def _lab(db: Database) -> int:
    """#c1: U3 shared a paper and U1 replied in its thread; PaperPing posted twice there, both times pointing at that
    thread; the model wrote in #c1 and #c2. Returns the reply's row."""
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        for channel in ("C1", "C2"):
            storage.workspaces.upsert_channel(conn, Channel(T, channel, channel.lower()))
        storage.workspaces.upsert_members(conn, [Member(T, "U1", "ana"), Member(T, "U3", "chen")])
        ref = PaperRef("arxiv", "2004.06660", "https://arxiv.org/abs/2004.06660")
        index_messages(
            conn,
            [
                Message(
                    T, "C1", SHARE_TS, "U3", "<https://arxiv.org/abs/2004.06660>", AT, papers=(ref,), permalink=SHARE
                ),
                Message(
                    T, "C1", REPLY_TS, "U1", "the regulariser is a neat trick", AT, thread_ts=SHARE_TS, permalink=REPLY
                ),
            ],
        )
        reply_id = storage.messages.load_message_id(conn, T, "C1", REPLY_TS)
        assert reply_id is not None
        for n, ts in enumerate((EARLIER_POST, LATEST_POST)):
            conn.execute(
                "INSERT INTO recommendations (team_id, channel_id, slot_key, status, style, draft, message_ts, posted_at)"
                " VALUES (%s, 'C1', %s, 'posted', 'template', %s, %s, %s::timestamptz + %s * interval '1 day')",
                (T, ts, Jsonb(_draft(reply_id, f"Post {n}")), ts, AT, n),
            )
        for channel in ("C1", "C2"):
            conn.execute(
                "INSERT INTO llm_calls (team_id, channel_id, prompt_name, prompt_version, prompt_hash, model, output,"
                " latency_ms, outcome) VALUES (%s, %s, 'answer', 2, 'x', 'm', 'ana said: a neat trick', 5, 'ok')",
                (T, channel),
            )
    return reply_id


def _deleted_in_slack(db: Database, ts: str) -> None:
    """Slack said the message was deleted: the knowledge base lets it go, then the stored posts follow."""
    with db.connection() as conn:
        removed = knowledge.record_deletion(conn, T, "C1", ts)
        storage.post_sources.record_message_deleted(conn, T, "C1", ts, removed=removed)


def test_a_post_deleted_in_slack_is_left_out_and_keeps_only_its_paper(db: Database) -> None:
    _lab(db)
    _deleted_in_slack(db, LATEST_POST)
    with db.connection() as conn:
        why = storage.posts.load_last_posted_draft(conn, T, "C1")
        home = storage.posts.load_post_engagement(conn, T, "C1")
        clicked = storage.posts.load_posted_draft(conn, T, "C1", LATEST_POST)
        kept = conn.execute("SELECT draft, deleted_at FROM recommendations WHERE message_ts = %s", (LATEST_POST,))
        draft, deleted_at = kept.fetchone() or (None, None)
        outputs = dict(conn.execute("SELECT channel_id, output FROM llm_calls").fetchall())
    assert why is not None and why["paper"]["title"] == "Post 0", "`why` explains the post still in Slack"
    assert [p.message_ts for p in home] == [EARLIER_POST], "App Home and status list only posts still in Slack"
    assert clicked is None and deleted_at is not None
    assert draft["paper"]["title"] == "Post 1" and draft["signals"] == [] and draft["explanation"] == ""
    assert "U3" not in json.dumps(draft) and "lab.slack.com" not in json.dumps(draft)
    assert outputs == {"C1": None, "C2": "ana said: a neat trick"}, "only the channel's model output goes"


def test_a_deleted_reply_leaves_the_reasons_that_rested_on_it(db: Database) -> None:
    reply_id = _lab(db)
    with db.connection() as conn:
        assert storage.post_sources.load_kept_replies(conn, T, "C1", [reply_id]) == {
            reply_id: "the regulariser is a neat trick"
        }
    _deleted_in_slack(db, REPLY_TS)
    with db.connection() as conn:
        assert storage.post_sources.load_kept_replies(conn, T, "C1", [reply_id]) == {}
        drafts = [r[0] for r in conn.execute("SELECT draft FROM recommendations ORDER BY id").fetchall()]
    for draft in drafts:
        assert [s["kind"] for s in draft["signals"]] == ["h5", "h2"], "the reception rested on the reply alone"
        assert draft["thread_link"] == SHARE, "the earlier thread's first message is still there"
    _deleted_in_slack(db, SHARE_TS)
    with db.connection() as conn:
        drafts = [r[0] for r in conn.execute("SELECT draft FROM recommendations ORDER BY id").fetchall()]
    assert all([s["kind"] for s in d["signals"]] == ["h2"] and d["thread_link"] is None for d in drafts)


def test_what_the_model_wrote_is_cleared_after_30_days(db: Database) -> None:
    _lab(db)
    with db.connection() as conn:
        conn.execute("UPDATE llm_calls SET created_at = now() - interval '31 days' WHERE channel_id = 'C2'")
    slot_worker(db, lambda team: None, lambda *args: None).tick()  # the worker's chores after each tick
    with db.connection() as conn:
        outputs = dict(conn.execute("SELECT channel_id, output FROM llm_calls").fetchall())
        rows = conn.execute("SELECT count(*) FROM llm_calls").fetchone()
    assert outputs == {"C1": "ana said: a neat trick", "C2": None} and rows == (2,), "the row itself stays"


def test_migration_0037_takes_stored_quotes_out_of_drafts(pg_server_uri: str, tmp_path: Path) -> None:
    """A home from before this release: its drafts quoted the first reply of an earlier thread."""
    before = tmp_path / "sql"
    before.mkdir()
    for path in resource_dir("sql").iterdir():
        if path.suffix == ".sql" and int(path.name[:4]) < 37:
            shutil.copy(path, before / path.name)
    name = "pp_test_before_0037"
    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(_with_dbname(pg_server_uri, name), autocommit=True) as conn:
            apply_migrations(conn, before)
            conn.execute("INSERT INTO teams (team_id) VALUES (%s)", (T,))
            conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES (%s, 'C1', 'c1')", (T,))
            h6 = {"kind": "h6", "fact": {"paper_title": "W", "replies": 1, "first_reply": "my words"}, "permalinks": []}
            single = {"paper": {"title": "A"}, "style": "template", "signals": [h6]}
            digest = {"digest": [single, single], "kind": "weekly"}
            for key, draft in (("a", single), ("b", digest)):
                conn.execute(
                    "INSERT INTO recommendations (team_id, channel_id, slot_key, status, style, draft)"
                    " VALUES (%s, 'C1', %s, 'posted', 'template', %s)",
                    (T, key, Jsonb(draft)),
                )
            apply_migrations(conn)
            stored = [r[0] for r in conn.execute("SELECT draft FROM recommendations ORDER BY slot_key").fetchall()]
    finally:
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    plain = {**h6, "fact": {"paper_title": "W", "replies": 1}}
    assert stored[0] == {**single, "signals": [plain]}
    assert stored[1] == {"digest": [{**single, "signals": [plain]}] * 2, "kind": "weekly"}
