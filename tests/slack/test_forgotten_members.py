"""A member who used `forget-me` can still use PaperPing, through the real bolt app and slack_sdk against the Slack
stand-in: what they cause stores nothing of theirs, they are told plainly when nothing could be kept, and their
costly requests stay bounded (counted with the workspace's other forgotten members)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from socialrag.db import Database
from socialrag.storage.usage import FORGOTTEN
from tests.slack.test_agent_messages import click
from tests.slack.test_group_memory import lab
from tests.support.harness import Harness, count, message_event

pytestmark = pytest.mark.slow


def test_a_forgotten_member_is_bounded_and_their_answer_marks_are_not_kept(db: Database, tmp_path: Path) -> None:
    harness, standin = lab(db, tmp_path)
    try:
        assert "Done: I deleted" in harness.command("forget-me confirm", user="U2")
        # a question: no list of their channels is kept, so none can be read for them, and they are told why
        said = harness.command("ask what have we read about attention?", user="U2", timeout=30)
        assert said.startswith("I can only answer about a channel I know you are in, and you asked me to"), said
        # a costly request (`like` a link: a search, and the paper first in the index queue): answered, and the
        # second within 30 s refused, with no cooldown or count holding their id
        link = "https://arxiv.org/abs/2401.00001"
        first = harness.command(f"like {link}", user="U2", timeout=30)
        assert "ask again from" not in first, first
        again = harness.command("like attention explanations", user="U2", timeout=30)
        assert again.startswith("You asked for papers like this a moment ago; ask again from"), again
        assert count(db, "SELECT count(*) FROM member_cooldowns WHERE user_id = 'U2'") == 0
        assert count(db, "SELECT count(*) FROM llm_usage WHERE user_id = 'U2'") == 0
        assert count(db, "SELECT count(*) FROM member_cooldowns WHERE user_id = %s AND kind = 'like'", FORGOTTEN) == 1
        assert count(db, "SELECT count(*) FROM llm_usage WHERE user_id = %s AND kind = 'lookups'", FORGOTTEN) == 1
        # another member is not held by it
        assert "a moment ago" not in harness.command("like attention explanations", user="U1", timeout=30)

        # Helpful under an answer in their Messages tab: nothing kept, and they are told so, only them
        click(harness, {"post": {"ts": "1700003000.000200"}}, "helpful:C1")
        assert count(db, "SELECT count(*) FROM answer_feedback") == 0
        told = [e for e in standin.ephemeral if e["channel"] == "DU2" and e["user"] == "U2"]
        assert told and told[-1]["text"].startswith("Your mark was not kept: you asked me to forget you"), told
        assert "/paperping remember-me" in told[-1]["text"]
    finally:
        harness.stop()
        standin.stop()


def test_a_forgotten_members_own_settings_and_unsaves_are_not_kept_and_they_are_told(
    harness: Harness, db: Database
) -> None:
    link = "https://arxiv.org/abs/1706.03762"
    harness.event(message_event("1700000070.000100", f"read <{link}>", user="U2"))  # the paper stays known
    assert harness.command(f"save {link}", user="U3").startswith("Saved")
    assert "Done: I deleted" in harness.command("forget-me confirm", user="U3")
    for typed in (
        "mentions off",
        "link-author 1741101",
        "for-me on",
        "for-me now",
        "my-papers off",
        f"unsave {link}",
    ):
        said = harness.command(typed, user="U3", timeout=30)
        assert said.startswith("Nothing was changed: you asked me to forget you, so I keep no "), (typed, said)
        assert said.endswith("`/paperping remember-me` lifts that."), (typed, said)
    for table in ("member_settings", "reading_list_unsaves", "personal_picks", "member_cooldowns"):
        assert count(db, f"SELECT count(*) FROM {table} WHERE user_id = 'U3'") == 0, table
    # nothing of the other members changes: their own settings still work
    assert harness.command("mentions off", user="U2").startswith("Done: I won't @-mention you")
    assert count(db, "SELECT count(*) FROM member_settings WHERE user_id = 'U2' AND NOT mentions_enabled") == 1


def test_a_forgotten_members_app_home_says_so_and_offers_no_settings(harness: Harness, db: Database) -> None:
    """Their Home shows neither channels nor buttons whose changes would not be kept, but how to lift it; a click
    on a stale Home's mentions button keeps nothing and shows them the same."""
    import json

    opened = {"type": "app_home_opened", "user": "U3", "channel": "DU3", "tab": "home", "event_ts": "1.0"}
    harness.event(opened)
    harness.settle()
    assert "Turn mentions" in json.dumps(harness.standin.views["U3"])
    assert "Done: I deleted" in harness.command("forget-me confirm", user="U3")
    harness.event(opened | {"event_ts": "2.0"})
    harness.settle()
    text = json.dumps(harness.standin.views["U3"])
    assert "You asked me to forget you in this workspace" in text and "remember-me" in text
    assert "Turn mentions" not in text and "Forget me" not in text and "nlp-lab" not in text
    assert count(db, "SELECT count(*) FROM member_settings WHERE user_id = 'U3'") == 0
    assert harness.command("remember-me", user="U3")
    harness.event(opened | {"event_ts": "3.0"})
    harness.settle()
    assert "Turn mentions" in json.dumps(harness.standin.views["U3"]), "remember-me brings the settings back"


def test_a_partner_forgotten_in_their_own_workspace_keeps_nothing_here_and_remember_me_lifts_it(
    harness: Harness, db: Database
) -> None:
    """Slack Connect: a partner organisation's member on their own workspace's forget list keeps no setting or unsave
    in the shared channel either (as for their saves and picks), and `remember-me` typed there, which each refusal
    names, lifts it; as `forget-me` typed there lists them in both workspaces, `remember-me` there lifts both."""
    from socialrag import storage

    link = "https://arxiv.org/abs/1706.03762"
    harness.event(message_event("1700000070.000100", f"read <{link}>", user="U2"))  # the paper is known
    with db.connection() as conn:
        storage.privacy.forget_member(conn, "T0PARTNER", "UP1")
    for typed in ("mentions off", "link-author 1741101", f"unsave {link}"):
        said = harness.command(typed, user="UP1", team="T0PARTNER", timeout=30)
        assert said.startswith("Nothing was changed: you asked me to forget you"), (typed, said)
    for table in ("member_settings", "reading_list_unsaves"):
        assert count(db, f"SELECT count(*) FROM {table} WHERE user_id = 'UP1'") == 0, table
    said = harness.command("remember-me", user="UP1", team="T0PARTNER", timeout=30)
    assert said.startswith("Done: what you share"), said
    assert count(db, "SELECT count(*) FROM forgotten_members WHERE user_id = 'UP1'") == 0
    assert harness.command("mentions off", user="UP1", team="T0PARTNER").startswith("Done: I won't @-mention you")

    assert "Done: I deleted" in harness.command("forget-me confirm", user="UP1", team="T0PARTNER")
    assert count(db, "SELECT count(*) FROM forgotten_members WHERE user_id = 'UP1'") == 2
    assert harness.command("remember-me", user="UP1", team="T0PARTNER", timeout=30).startswith("Done")
    assert count(db, "SELECT count(*) FROM forgotten_members WHERE user_id = 'UP1'") == 0, "lifted in both"


def test_a_forgotten_members_mention_is_answered_only_to_them(db: Database, tmp_path: Path) -> None:
    """A question to @PaperPing in a channel from a member on the forget list was answered in the channel's thread,
    for everyone there to read, with why: that they asked PaperPing to forget them. Now only they are told."""
    harness, standin = lab(db, tmp_path)
    try:
        assert "Done: I deleted" in harness.command("forget-me confirm", user="U2")
        ts = "1700000900.000100"
        text = "<@UBOT> what have we read about tables?"
        harness.event({"type": "app_mention", "channel": "C1", "user": "U2", "text": text, "ts": ts, "event_ts": ts})
        deadline = time.time() + 30
        while time.time() < deadline and not [e for e in standin.ephemeral if e["user"] == "U2"]:
            time.sleep(0.05)
        told = [e for e in standin.ephemeral if e["channel"] == "C1" and e["user"] == "U2"]
        assert told and told[-1]["text"].startswith("I can only answer about a channel I know you are in"), told
        time.sleep(0.5)
        public = [p for p in standin.posts if p.get("channel") == "C1" and "forget" in str(p.get("text"))]
        assert not public, public
    finally:
        harness.stop()
        standin.stop()
