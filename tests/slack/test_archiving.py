"""Archiving and unarchiving a channel, as Slack says it in the channel (``channel_archive`` and
``channel_unarchive`` messages), through the real bolt app against the Slack stand-in: what the channel is now
is Slack's word (``conversations.info``), so that a late, resent or odd message never stops or starts it wrongly."""

from __future__ import annotations

from typing import Any

from socialrag import storage
from socialrag.db import Database
from tests.support.harness import Harness, T

JOINED = {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "inviter": "U1"}


def _settings(db: Database) -> storage.settings.ChannelSettings:
    with db.connection() as conn:
        return storage.settings.load_channel_settings(conn, T, "C1")


def _said(subtype: str, ts: str) -> dict[str, Any]:
    return {"type": "message", "subtype": subtype, "channel": "C1", "user": "U1", "ts": ts, "event_ts": ts}


def test_an_archive_message_handled_after_the_unarchive_stops_nothing(harness: Harness, db: Database) -> None:
    """The channel was archived and unarchived at once; the two messages are handled in the other order (two
    processes, or the first copy of the archive failed and Slack sent it again later). Slack says the channel is
    not archived: it keeps posting."""
    harness.event({**JOINED, "event_ts": "1.0"})
    harness.event(_said("channel_unarchive", "3.0"))
    harness.event(_said("channel_archive", "2.0"))
    s = _settings(db)
    assert s.active and s.stopped_reason is None and s.next_post_at is not None


def test_an_unarchive_message_while_slack_says_archived_starts_nothing(harness: Harness, db: Database) -> None:
    """Archived, the channel stops; an unarchive message while Slack still says the channel is archived (a late
    copy of an earlier one, or an odd event), or while Slack cannot say, starts nothing: a post there would fail."""
    harness.event({**JOINED, "event_ts": "1.0"})
    harness.standin.state.channels["C1"]["is_archived"] = True
    harness.event(_said("channel_archive", "2.0"))
    assert _settings(db).stopped_reason == "slack: is_archived"
    harness.event(_said("channel_unarchive", "3.0"))
    assert not _settings(db).active, "Slack says the channel is still archived"
    harness.standin.state.channels["C1"]["is_archived"] = False
    harness.standin.fail_next["conversations.info"] = 1
    harness.event(_said("channel_unarchive", "4.0"))
    assert not _settings(db).active, "Slack could not say whether it is archived"
    harness.event(_said("channel_unarchive", "5.0"))
    s = _settings(db)
    assert s.active and s.stopped_reason is None and s.next_post_at is not None
