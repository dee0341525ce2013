"""`/paperping fulltext on|off` (a channel) and `/paperping fulltext on|off workspace` (its admins), through the
real bolt app and the Slack stand-in. The four questions of a new command: whose content it acts on (the channel's
own setting; the workspace's only by an admin), who may make it act (members, not guests or other organisations,
and in a locked channel its inviter and the admins), how much work one member causes (none fetched by the command:
the service's job reads a few papers a run, whatever was shared), and a slow, huge or malformed source (the job's;
`tests/unit/test_fulltext_hosts.py`), plus what a member typed wrong."""

from __future__ import annotations

from socialrag import storage
from socialrag.db import Database
from tests.support.harness import Harness, T


def _settings(db: Database) -> tuple[bool, bool]:
    with db.connection() as conn:
        channel = storage.settings.load_channel_settings(conn, T, "C1").fulltext
        return channel, storage.fulltext.load_workspace_fulltext(conn, T)


def test_a_member_turns_full_text_off_and_on_for_the_channel_and_the_group_sees_it(
    harness: Harness, db: Database
) -> None:
    assert "Full text: read for 0 of 0 papers" in harness.command("status")
    answer = harness.command("fulltext off")
    assert answer.startswith("Done: I won't read the full text of papers for this channel")
    assert _settings(db) == (False, True)
    assert any("<@U2> turned off PaperPing's reading of the full text" in p["text"] for p in harness.standin.posts)
    assert "Full text: off here" in harness.command("status")
    assert harness.command("fulltext ON").startswith("Done: I'll read the open-access full text")
    assert _settings(db) == (True, True)


def test_only_admins_turn_it_off_for_the_workspace_and_a_channel_then_says_so(harness: Harness, db: Database) -> None:
    refused = harness.command("fulltext off workspace", user="U2")
    assert "Only the workspace's admins" in refused and _settings(db) == (True, True)
    assert "Only the workspace's admins" in harness.command("fulltext off workspace", user="UG1"), "nor a guest"
    done = harness.command("fulltext off workspace", user="U4")
    assert done == "Done: I won't read papers' full text for any channel of this workspace."
    assert _settings(db) == (True, False), "the channel's own setting is left as it was"
    assert "admins turned it off for the whole workspace" in harness.command("fulltext on", user="U2")
    assert "the workspace's admins turned it off" in harness.command("status")
    assert harness.command("fulltext on workspace", user="U4").startswith("Done: I read papers' open-access")
    assert _settings(db) == (True, True)


def test_guests_other_organisations_and_a_locked_channel(harness: Harness, db: Database) -> None:
    assert "Guests can't" in harness.command("fulltext off", user="UG1")
    harness.standin.state.users["UX1"] = {"id": "UX1", "team_id": "T0OTHER", "name": "xavier", "is_stranger": True}
    assert "other organisations" in harness.command("fulltext off", user="UX1")
    assert "other organisations" in harness.command("fulltext off workspace", user="UX1")
    harness.event(
        {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "inviter": "U1", "event_ts": "1"}
    )
    harness.command("lock", user="U1")
    assert "settings here are locked" in harness.command("fulltext off", user="U3")
    assert _settings(db) == (True, True)
    assert harness.command("fulltext off", user="U4").startswith("Done"), "an admin may"


def test_what_a_member_typed_wrong_gets_what_to_type(harness: Harness, db: Database) -> None:
    for text in ("fulltext", "fulltext maybe", "fulltext off everywhere", "fulltext workspace off", "fulltext on on"):
        answer = harness.command(text)
        assert answer.startswith("Try `/paperping fulltext on` or `/paperping fulltext off`"), text
    assert _settings(db) == (True, True)
