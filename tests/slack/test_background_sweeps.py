"""The background jobs that keep a channel's picture true (the hourly member-list sweep, the history reads of joined
channels) go on past channels Slack will not answer for. Through the real bolt app and the Slack stand-in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel
from tests.support.harness import Harness, T
from tests.support.members import members_of, wait_until


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


def test_a_history_read_slack_broke_off_is_taken_up_again_by_the_hourly_job(harness: Harness, db: Database) -> None:
    """Slack answers an error while PaperPing reads a joined channel's history. Before, the read was resumed only
    when a process started: a worker running for weeks left the channel's history half read (and `status` saying it
    was still reading) until someone restarted it. The hourly job now takes up the reads left unfinished."""
    from bot.cli.process import member_sweep
    from bot.slack.backfill import SOURCE

    harness.standin.fail_next["conversations.history"] = 50  # Slack's errors on every history page for now
    harness.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "event_ts": "1.0"})
    wait_until(lambda: harness.standin.calls_to("conversations.history") and not harness.ctx.channels._reading)

    def finished() -> bool:
        with db.connection() as conn:
            saved = storage.checkpoints.load_checkpoint(conn, T, "C1", SOURCE)
        return saved is not None and saved.completed_at is not None

    assert not finished(), "the read broke off"
    harness.standin.fail_next.clear()  # Slack answers again
    client = WebClient(token="x", base_url=harness.standin.url)
    member_sweep(db, harness.ctx, lambda team: client)()  # the next hourly run
    wait_until(finished, 30)


def test_unfinished_history_reads_are_taken_up_a_few_at_a_time(
    harness: Harness, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace joined to thousands of channels leaves as many reads unfinished: a start (or the hourly job)
    takes up ``MOST_RESUMED`` at once, not a thread for each."""
    import bot.delivery.joining as joining

    monkeypatch.setattr(joining, "MOST_RESUMED", 1)
    channels = harness.ctx.channels
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        for channel in ("CA", "CB"):
            storage.workspaces.upsert_channel(conn, Channel(T, channel, channel.lower()))
            storage.settings.upsert_channel_setting(conn, T, channel, active=True)
    for channel in ("CA", "CB"):
        channels.queue_backfill(T, channel)
    channels._reading.add((T, "CBUSY"))  # one read under way in this process already
    client = WebClient(token="x", base_url=harness.standin.url)
    assert channels.resume_backfills(lambda team: client) == [], "the bound is reached: the others wait"
    channels._reading.discard((T, "CBUSY"))
    assert len(channels.resume_backfills(lambda team: client)) == 1, "one at a time"
