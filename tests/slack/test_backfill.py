"""Backfill through the real slack_sdk WebClient against the local stand-in of the Slack Web API."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient

from bot.delivery.joining import ChannelStarts
from bot.slack.backfill import SOURCE, backfill_channel
from bot.slack.pacer import HistoryPacer, SlackPacer
from bot.slack.payloads import ts_to_datetime
from socialrag import knowledge, storage
from socialrag.db import Database
from socialrag.errors import SourceError
from socialrag.knowledge.emoji import READING_LIST_EMOJI
from socialrag.models import Message, PaperRef
from tests.support.slack_standin import SlackStandIn, SlackState

T0 = 1_700_000_000.0
ROOT = Path(__file__).resolve().parents[2]


def lab_state(n_top: int = 60) -> SlackState:
    state = SlackState()
    state.users = {
        u: {
            "id": u,
            "team_id": "T0LAB",
            "name": u.lower(),
            "real_name": f"Member {u}",
            "profile": {"display_name": f"m{u[-1]}"},
        }
        for u in ("U1", "U2", "U3")
    }
    state.channels = {"C1": {"id": "C1", "name": "papers", "is_channel": True}}
    msgs: list[dict[str, Any]] = []
    for i in range(n_top):
        ts = f"{T0 + i * 100:.6f}"
        if i % 3 == 0:  # every third message shares a paper; half of those have a thread
            m: dict[str, Any] = {
                "type": "message",
                "user": "U1",
                "ts": ts,
                "text": f"<https://arxiv.org/abs/2401.{10000 + i}|Paper {i}>",
                "reactions": [{"name": "+1", "users": ["U2"], "count": 1}],
            }
            if i % 6 == 0:
                m.update(thread_ts=ts, reply_count=2)
                msgs += [
                    {"type": "message", "user": "U2", "ts": f"{T0 + i * 100 + 1:.6f}", "thread_ts": ts, "text": "nice"},
                    {
                        "type": "message",
                        "user": "U3",
                        "ts": f"{T0 + i * 100 + 2:.6f}",
                        "thread_ts": ts,
                        "text": "agreed",
                    },
                ]
            msgs.append(m)
        else:
            msgs.append({"type": "message", "user": "U3", "ts": ts, "text": f"chatter {i}"})
    state.messages = {"C1": msgs}
    return state


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    server = SlackStandIn(lab_state()).start()
    yield server
    server.stop()


def test_backfill_pages_waits_out_429_and_slows_to_the_limited_tier(db: Database, standin: SlackStandIn) -> None:
    standin.page_cap = 15  # the workspace's non-Marketplace tier
    standin.rate_limits = {"conversations.history": 1}
    standin.retry_after = 3
    sleeps: list[float] = []
    pacer = HistoryPacer(sleep=sleeps.append, clock=lambda: 0.0)
    client = WebClient(token="xoxb-test", base_url=standin.url)
    report = backfill_channel(db, client, "C1", pacer=pacer)
    with db.connection() as conn:
        counts = storage.messages.load_channel_counts(conn, "T0LAB", "C1")
        names = dict(conn.execute("SELECT user_id, display_name FROM members").fetchall())
        permalink = conn.execute("SELECT permalink FROM messages ORDER BY ts LIMIT 1").fetchone()
        checkpoint = storage.checkpoints.load_checkpoint(conn, "T0LAB", "C1", SOURCE)
    # 20 shares and their 20 thread replies; the 40 chatter messages are never stored
    assert counts == {"messages": 40, "papers": 20, "reactions": 20, "replies": 20, "members": 3}
    assert 3.0 in sleeps, "the Retry-After of the 429 was honoured"
    assert pacer.limited and 60.0 in sleeps, "15-message pages switch to one request a minute"
    history = standin.calls_to("conversations.history")
    assert len(history) == 1 + 4 and all(c.params["limit"] == "15" for c in history[2:])
    assert report.pages == 4 and report.threads == 10
    assert names == {"U1": "m1", "U2": "m2", "U3": "m3"}
    assert permalink is not None and permalink[0].startswith("https://lab.slack.com/archives/C1/p")
    assert checkpoint is not None and checkpoint.completed_at is not None


def test_backfill_twice_changes_nothing(db: Database, standin: SlackStandIn) -> None:
    client = WebClient(token="xoxb-test", base_url=standin.url)
    backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
    with db.connection() as conn:
        before = conn.execute("SELECT string_agg(xmin::text, ',' ORDER BY id) FROM messages").fetchone()
    backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
    with db.connection() as conn:
        after = conn.execute("SELECT string_agg(xmin::text, ',' ORDER BY id) FROM messages").fetchone()
    assert before == after


@pytest.mark.slow
def test_killed_backfill_resumes_where_it_stopped(db: Database, standin: SlackStandIn) -> None:
    standin.page_cap = 20
    standin.hold = lambda call: (
        call.method == "conversations.history"
        and bool(call.params.get("cursor"))
        and len(standin.calls_to("conversations.history")) == 3
    )
    env = {
        **os.environ,
        "DATABASE_URL": db.conninfo,
        "SLACK_API_URL": standin.url,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "PAPERPING_HOME": "/nonexistent",
    }
    env.pop("PAPERPING_OFFLINE", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "backfill", "C1", "--no-metadata", "--no-embed"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 60
    while len(standin.calls_to("conversations.history")) < 3 and time.time() < deadline:
        time.sleep(0.05)
    assert len(standin.calls_to("conversations.history")) == 3, proc.stderr.read() if proc.poll() else "no 3rd page"
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    with db.connection() as conn:
        checkpoint = storage.checkpoints.load_checkpoint(conn, "T0LAB", "C1", SOURCE)
        partial = storage.messages.load_channel_counts(conn, "T0LAB", "C1")["messages"]
    assert checkpoint is not None and checkpoint.completed_at is None
    held_cursor = standin.calls_to("conversations.history")[2].params["cursor"]
    assert checkpoint.cursor == held_cursor
    assert 0 < partial < 40
    standin.hold = None
    report = backfill_channel(
        db, WebClient(token="xoxb-test", base_url=standin.url), "C1", pacer=HistoryPacer(sleep=lambda s: None)
    )
    assert report.resumed
    assert standin.calls_to("conversations.history")[3].params["cursor"] == held_cursor
    with db.connection() as conn:
        counts = storage.messages.load_channel_counts(conn, "T0LAB", "C1")
    assert counts["messages"] == 40 and counts["replies"] == 20 and counts["reactions"] == 20


def test_a_backfill_with_a_member_of_another_organisation_completes(db: Database) -> None:
    """Slack Connect: the member who reacts is from a partner organisation (their own `team_id`). The backfill's
    last step stores the members, and its checkpoint completes, so a restart does not read the history again."""
    state = lab_state(12)
    state.users["U2"] = {**state.users["U2"], "team_id": "T0PARTNER"}
    server = SlackStandIn(state).start()
    try:
        client = WebClient(token="xoxb-test", base_url=server.url)
        backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
    finally:
        server.stop()
    with db.connection() as conn:
        done = conn.execute("SELECT completed_at IS NOT NULL FROM import_checkpoints").fetchall()
        partner = conn.execute("SELECT team_id FROM members WHERE user_id = 'U2'").fetchall()
    assert done == [(True,)] and partner == [("T0LAB",)]


def _stored(db: Database) -> list[str]:
    with db.connection() as conn:
        return [r[0] for r in conn.execute("SELECT ts FROM messages ORDER BY ts").fetchall()]


def _ts(i: int, reply: int = 0) -> str:
    return f"{T0 + i * 100 + reply:.6f}"


def test_reading_the_history_again_removes_what_was_deleted_meanwhile(db: Database) -> None:
    """While PaperPing was out of #papers, a share, a thread (its first message and replies), and one reply of
    another thread were deleted in Slack. Reading the history again (on the next invitation) takes them out of the
    base and remembers them as deleted; a share posted as the read began, which the read could not see, stays."""
    state = lab_state(12)  # shares at 0, 3, 6, 9; threads on 0 and 6
    state.channels["C1"]["created"] = int(T0) - 60
    server = SlackStandIn(state).start()
    try:
        client = WebClient(token="xoxb-test", base_url=server.url)
        backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
        assert len(_stored(db)) == 8
        gone = {_ts(6), _ts(6, 1), _ts(6, 2), _ts(3), _ts(0, 2)}
        state.messages["C1"] = [m for m in state.messages["C1"] if m["ts"] not in gone]
        for m in state.messages["C1"]:
            if m["ts"] == _ts(0):
                m["reply_count"] = 1
        with db.connection() as conn:  # heard live just before the read began: not in its pages
            just_now = f"{time.time() - 30:.6f}"
            knowledge.record_message(conn, _share(just_now), by_member=True)
        report = backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
    finally:
        server.stop()
    assert _stored(db) == [_ts(0), _ts(0, 1), _ts(9), just_now]
    assert report.removed == 5
    with db.connection() as conn:
        assert storage.deletions.load_deleted(conn, [("T0LAB", "C1", _ts(3))]) == {("T0LAB", "C1", _ts(3))}
        state_after = conn.execute("SELECT state FROM import_checkpoints").fetchone()[0]
    assert "gone" not in state_after, "the list of what went is not kept once it is done"


def test_being_invited_back_removes_what_was_deleted_meanwhile(db: Database) -> None:
    """PaperPing is invited back into #papers after a share was deleted there: the read the invitation queues
    and starts takes the share out of the base, as any history read does."""
    state = lab_state(12)
    server = SlackStandIn(state).start()
    try:
        client = WebClient(token="xoxb-test", base_url=server.url)
        backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
        state.messages["C1"] = [m for m in state.messages["C1"] if m["ts"] != _ts(3)]
        starts = ChannelStarts(db, SlackPacer(sleep=lambda s: None))
        starts.queue_backfill("T0LAB", "C1")
        starts.backfill(client, "T0LAB", "C1")
    finally:
        server.stop()
    assert _ts(3) not in _stored(db) and _ts(0) in _stored(db)
    with db.connection() as conn:
        assert storage.deletions.load_deleted(conn, [("T0LAB", "C1", _ts(3))]) == {("T0LAB", "C1", _ts(3))}


@pytest.mark.parametrize("created", [T0 - 3600, T0 + 200 * 86400], ids=["first-day", "older-than-created"])
def test_messages_older_than_anything_the_history_returns_are_kept(db: Database, created: float) -> None:
    """Slack stops showing the oldest share and its thread, and the message before the next share: a free
    workspace's 90 days may end inside the channel's first day, and an imported history is older than the day
    Slack says the channel was made. Slack may only be hiding them, so the read removes none of them, nor
    remembers them as deleted."""
    state = lab_state(12)
    state.channels["C1"]["created"] = int(created)
    server = SlackStandIn(state).start()
    try:
        client = WebClient(token="xoxb-test", base_url=server.url)
        backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
        hidden = {_ts(0), _ts(0, 1), _ts(0, 2), _ts(1), _ts(2)}
        state.messages["C1"] = [m for m in state.messages["C1"] if m["ts"] not in hidden]
        report = backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
    finally:
        server.stop()
    assert report.removed == 0 and {_ts(0), _ts(0, 1), _ts(0, 2)} <= set(_stored(db))
    with db.connection() as conn:
        assert storage.deletions.load_deleted(conn, [("T0LAB", "C1", _ts(0))]) == set()


def test_a_history_that_may_be_cut_short_or_a_read_that_fails_removes_nothing(db: Database) -> None:
    """A history whose first message is long after the channel was made may hide its older messages (a free
    workspace shows its last 90 days): a stored share older than anything it returned stays. And a read that
    fails on the way removes nothing of what it did not see."""
    state = lab_state(12)
    state.channels["C1"]["created"] = int(T0) - 400 * 86400
    server = SlackStandIn(state).start()
    try:
        client = WebClient(token="xoxb-test", base_url=server.url)
        backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
        older = f"{T0 - 200 * 86400:.6f}"
        with db.connection() as conn:
            knowledge.record_message(conn, _share(older), by_member=True)
        state.messages["C1"] = [m for m in state.messages["C1"] if m["ts"] not in (_ts(3), _ts(9))]
        server.fail_next["conversations.replies"] = 1
        with pytest.raises(SourceError):
            backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
        assert _ts(3) in _stored(db) and _ts(9) in _stored(db), "the read did not complete"
        report = backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
    finally:
        server.stop()
    assert report.resumed and report.removed == 2
    assert older in _stored(db) and _ts(3) not in _stored(db) and _ts(9) not in _stored(db)


def test_reading_the_history_again_keeps_the_button_clicks_on_paperpings_posts(db: Database) -> None:
    """A member saved the paper of one of PaperPing's posts with its button, and another marked it relevant.
    Reading the history again (the post is in it, with Slack's emoji only) leaves both clicks and the saved paper
    in the reading list."""
    state = lab_state(3)
    own = {
        "type": "message",
        "user": "UBOT",
        "bot_id": "BBOT",
        "ts": _ts(5),
        "text": "<https://arxiv.org/abs/2401.55555|A>",
    }
    state.messages["C1"].append(own)
    server = SlackStandIn(state).start()
    try:
        client = WebClient(token="xoxb-test", base_url=server.url)
        backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
        at = datetime.now(UTC)
        with db.connection() as conn:
            assert knowledge.record_click(conn, "T0LAB", "C1", _ts(5), "U2", "save", at)
            assert knowledge.record_click(conn, "T0LAB", "C1", _ts(5), "U3", "relevant", at)
        backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None), restart=True)
    finally:
        server.stop()
    with db.connection() as conn:
        counts = knowledge.load_click_counts(conn, "T0LAB", "C1", _ts(5))
        saved, _ = storage.reading_list.load_reading_list(conn, "T0LAB", "C1", READING_LIST_EMOJI, limit=5)
    assert counts == {"save": 1, "relevant": 1, "not_for_us": 0}
    assert [p.savers for p in saved] == [("U2",)]


def test_a_forgotten_member_is_not_written_into_the_checkpoint_nor_looked_up(db: Database) -> None:
    """U2 asked to be forgotten: their reactions in the history are not stored, their id is not saved in the
    read's checkpoint, and Slack is not asked who they are."""
    server = SlackStandIn(lab_state(12)).start()
    try:
        with db.connection() as conn:
            storage.privacy.forget_member(conn, "T0LAB", "U2")
        backfill_channel(db, WebClient(token="xoxb-test", base_url=server.url), "C1")
        asked = [c.params.get("user") for c in server.calls_to("users.info")]
    finally:
        server.stop()
    with db.connection() as conn:
        users = conn.execute("SELECT state -> 'users' FROM import_checkpoints").fetchone()[0]
        reactions = conn.execute("SELECT count(*) FROM reactions WHERE user_id = 'U2'").fetchone()[0]
    assert users == ["U1", "U3"] and "U2" not in asked and reactions == 0


def _share(ts: str) -> Message:
    ref = PaperRef("arxiv", "2401.99999", "https://arxiv.org/abs/2401.99999")
    return Message("T0LAB", "C1", ts, "U1", "<https://arxiv.org/abs/2401.99999>", ts_to_datetime(ts), papers=(ref,))
