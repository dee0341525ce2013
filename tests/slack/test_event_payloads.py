"""Live events with fields Postgres or PaperPing cannot take as they are, through the real bolt app with signed
requests: a share whose text holds half of an emoji is stored without it, and a reaction event missing what it is
of is dropped; both are answered 200, so that Slack does not send them three times again for nothing."""

from __future__ import annotations

from typing import Any

import pytest

from socialrag.db import Database
from tests.support.harness import Harness, count, message_event

ARXIV = "<https://arxiv.org/abs/1706.03762|Attention>"
ROOT = "1700000002.000100"


def test_a_share_with_half_an_emoji_is_stored_without_it(harness: Harness, db: Database) -> None:
    # JSON's "\ud83d" without its other half (an emoji cut in two by a client): UTF-8, and so Postgres, cannot hold it
    response = harness.event(message_event(ROOT, f"read this \ud83d {ARXIV}", user="U2\udfff"))
    assert response.status_code == 200, "a share Slack sent once is not refused and sent again"
    with db.connection() as conn:
        row = conn.execute("SELECT text, user_id FROM messages WHERE ts = %s", (ROOT,)).fetchone()
    assert row is not None and row[0] == f"read this  {ARXIV}" and row[1] == "U2"


def reaction(**changes: Any) -> dict[str, Any]:
    event = {
        "type": "reaction_added",
        "user": "U3",
        "reaction": "+1",
        "event_ts": "1700000004.000100",
        "item": {"type": "message", "channel": "C1", "ts": ROOT},
    }
    return {k: v for k, v in (event | changes).items() if v is not None}


@pytest.mark.parametrize(
    "changes",
    [
        {"user": None},
        {"reaction": None},
        {"reaction": ["+1"]},
        {"event_ts": "nan"},
        {"event_ts": "1e400"},
        {"item": {"type": "message", "channel": "C1"}},
        {"item": {"type": "message", "ts": ROOT}},
        {"item": "C1"},
    ],
)
def test_a_malformed_reaction_is_dropped_and_answered(harness: Harness, db: Database, changes: dict[str, Any]) -> None:
    harness.event(message_event(ROOT, f"read this {ARXIV}"))
    response = harness.event(reaction(**changes))
    assert response.status_code == 200, "Slack is not asked to send it again"
    assert count(db, "SELECT count(*) FROM reactions") == 0
    assert count(db, "SELECT count(*) FROM removed_reactions") == 0
    assert harness.event(reaction()).status_code == 200
    assert count(db, "SELECT count(*) FROM reactions") == 1, "a well-formed one still counts"


def test_another_apps_message_in_a_dm_is_never_indexed(harness: Harness, db: Database) -> None:
    """A DM is never indexed, whoever wrote in it: a message there with no member (another app's) stored nothing."""
    dm = {"channel": "DU2", "channel_type": "im", "subtype": "bot_message", "bot_id": "BX", "username": "other"}
    harness.event({"type": "message", "text": f"read {ARXIV}", "ts": ROOT, "event_ts": ROOT, **dm})
    assert count(db, "SELECT count(*) FROM messages WHERE channel_id LIKE 'D%%'") == 0
    assert count(db, "SELECT count(*) FROM channels WHERE channel_id LIKE 'D%%'") == 0
