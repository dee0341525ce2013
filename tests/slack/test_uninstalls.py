"""Uninstalling PaperPing, or revoking its token, when Slack's copy of the event comes late: a workspace that
installed PaperPing again in between keeps its new installation."""

from __future__ import annotations

import json
import time

import pytest

from socialrag import storage
from socialrag.db import Database
from tests.support.harness import Harness, T


def reinstall(db: Database) -> None:
    with db.connection() as conn:
        storage.installs.upsert_installation(
            conn,
            {"team_id": T, "team_name": "lab", "bot_token": "xoxb-new", "bot_user_id": "UBOT", "bot_id": "B1",
             "installer_id": "U1", "scopes": "chat:write"},
        )  # fmt: skip


def uninstall(event: dict[str, object], event_id: str, event_time: object) -> dict[str, object]:
    return {"type": "event_callback", "team_id": T, "api_app_id": "A1", "event": event, "event_id": event_id,
            "event_time": event_time}  # fmt: skip


def installed(db: Database) -> bool:
    with db.connection() as conn:
        return storage.installs.load_installation(conn, T) is not None


@pytest.mark.parametrize(
    "event", [{"type": "app_uninstalled"}, {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["UBOT"]}}]
)
def test_a_late_copy_of_an_uninstall_keeps_the_installation_made_after_it(
    harness: Harness, db: Database, event: dict[str, object]
) -> None:
    """The uninstall failed here (the database away), the admin installed PaperPing again, and Slack's next copy
    of the uninstall, sent minutes later, arrives: the new token stays."""
    reinstall(db)
    late = uninstall({**event, "event_ts": "1.0"}, "EvLate", int(time.time()) - 300)
    answer = harness.signed(json.dumps(late), "application/json", retry=2)
    time.sleep(0.3)
    assert answer.status_code == 200
    assert installed(db), "the installation made after the uninstall is kept"


@pytest.mark.parametrize("event_time", [None, "soon", 0, 1, 10**15, True])
def test_an_uninstall_removes_the_installation(harness: Harness, db: Database, event_time: object) -> None:
    """An uninstall made after the installation, or one whose time is missing or odd, removes it."""
    reinstall(db)
    time.sleep(1.1)
    payload = uninstall({"type": "app_uninstalled", "event_ts": "1.0"}, f"EvU{event_time!s:.8}", event_time)
    assert harness.signed(json.dumps(payload), "application/json").status_code == 200
    time.sleep(0.3)
    assert not installed(db)
    payload["event_time"], payload["event_id"] = int(time.time()), "EvNow"
    reinstall(db)
    time.sleep(1.1)
    assert harness.signed(json.dumps(payload), "application/json").status_code == 200
    time.sleep(0.3)
    assert not installed(db), "an uninstall after the installation removes it"
