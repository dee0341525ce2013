"""The background jobs that keep a channel's picture true (the hourly member-list sweep, the history reads of joined
channels) go on past channels Slack will not answer for. Through the real bolt app and the Slack stand-in."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel
from tests.support.harness import Harness, T


def members_of(db: Database, channel: str) -> set[str]:
    with db.connection() as conn:
        rows = conn.execute("SELECT user_id FROM channel_members WHERE channel_id = %s", (channel,)).fetchall()
    return {r[0] for r in rows}


def wait_until(check, seconds: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("not reached in time")


def test_channels_slack_will_not_list_do_not_hold_the_sweep_back(
    harness: Harness, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two channels PaperPing still counts itself in are gone from Slack (their channel_left lost): their lists can
    never be read. The sweep reads a bounded number of lists an hour; before, those two came first at every run
    (never read, so still the stalest) and, as many as the bound, left every other channel's list unread for ever:
    a member who left C1 stayed listed there."""
    import bot.slack.members as members

    monkeypatch.setattr(members, "SWEEP_LIMIT", 2)
    harness.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "event_ts": "1.0"})
    wait_until(lambda: "U3" in members_of(db, "C1"))
    with db.connection() as conn:
        for gone in ("CGONE1", "CGONE2"):  # never read: the stalest of all
            storage.workspaces.upsert_channel(conn, Channel(T, gone, gone.lower()))
            storage.settings.upsert_channel_setting(conn, T, gone, active=True)
    harness.standin.state.channels["C1"]["members"] = ["U1", "U2", "UBOT"]  # U3 left; the event never came
    client = WebClient(token="x", base_url=harness.standin.url)
    later = datetime.now(UTC) + timedelta(days=2)
    for hour in range(3):  # three hourly runs
        members.refresh_stale_lists(db, harness.ctx.pacer.call, lambda team: client, later + timedelta(hours=hour))
    assert "U3" not in members_of(db, "C1"), "C1's list was read again in one of the runs"
