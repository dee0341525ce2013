"""App Home builds of one member, through signed requests into the real bolt app, slack_sdk and the Slack
stand-in: a build that started before a change and reaches Slack after the build for the change never leaves
the member looking at the older state."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import urlencode

from socialrag.db import Database
from tests.slack.test_home_limits import member_in_channels
from tests.support.harness import Harness, T
from tests.support.slack_standin import Call


def click_mentions(harness: Harness, user: str, value: str, seen: str = "") -> None:
    """A click on the Home's mentions button; ``seen``: the hash of the Home the member clicked in."""
    payload = {
        "type": "block_actions",
        "team": {"id": T},
        "user": {"id": user, "team_id": T},
        "view": {"type": "home", "team_id": T, "id": "V1", **({"hash": seen} if seen else {})},
        "actions": [{"action_id": "home_mentions", "type": "button", "value": value, "action_ts": "2.0"}],
        "trigger_id": "1",
        "token": "x",
    }
    response = harness.signed(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    assert response.status_code == 200


def hold_first_publish(harness: Harness) -> list[Call]:
    """Slack takes 2 s over the next ``views.publish``; the list it returns gets that call once it is made."""
    first: list[Call] = []

    def slow_first_publish(call: Call) -> bool:
        if call.method != "views.publish" or first:
            return False
        first.append(call)
        return True

    harness.standin.hold, harness.standin.hold_seconds = slow_first_publish, 2.0
    return first


def wait_for(first: list[Call]) -> None:
    deadline = time.monotonic() + 10
    while not first:  # the opening's Home, built with mentions on, is on its way to Slack
        assert time.monotonic() < deadline, "the opening published nothing"
        time.sleep(0.05)
    assert "Mentions: on" in json.dumps(json.loads(first[0].params["view"]))


def test_a_home_built_before_a_change_and_published_after_it_is_built_again(harness: Harness, db: Database) -> None:
    """The member opens the tab; Slack is slow to take that Home, and meanwhile they turn mentions off. The
    Home built for the opening (mentions on) used to reach Slack last, beside the one built for the click, so
    the member saw their mentions still on. Now the click's build waits for the opening's, which is built
    once more after it: the Home shown last says mentions are off."""
    member_in_channels(db, "U1", 1)
    first = hold_first_publish(harness)
    harness.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "9.0"})
    wait_for(first)
    click_mentions(harness, "U1", "off")
    time.sleep(0.5)
    harness.settle()
    shown = json.dumps(harness.standin.views["U1"])
    assert "Mentions: off" in shown and "Turn mentions on" in shown, "the Home shown last is the one after the click"
    assert len(harness.standin.calls_to("views.publish")) == 2


def test_across_two_processes_a_home_built_before_a_change_never_replaces_the_one_after_it(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """Two processes of ``paperping run``: the member's opening reaches one, their click the other. The opening's
    Home (mentions on) reaches Slack after the click's (mentions off), and used to replace it. Now each is
    published with the hash of the Home the member saw: Slack refuses the older one (``hash_conflict``), and that
    process builds the Home again from what is stored, mentions off."""
    other = Harness(db, harness.standin, tmp_path / "other")
    try:
        member_in_channels(db, "U1", 1)
        harness.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "8.0"})
        harness.settle()
        seen = harness.standin.view_hashes["U1"]
        first = hold_first_publish(harness)
        opening = {"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "9.0"}
        harness.event({**opening, "view": {"id": "V1", "type": "home", "hash": seen}})
        wait_for(first)
        click_mentions(other, "U1", "off", seen)
        time.sleep(0.5)
        other.settle()
        harness.settle()
        shown = json.dumps(harness.standin.views["U1"])
        assert "Mentions: off" in shown and "Turn mentions on" in shown, "the Home shown last is the newer one"
    finally:
        other.stop()
