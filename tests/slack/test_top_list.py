"""`/paperping top` through the real bolt app against the Slack stand-in: the papers the channel engaged with most
in the period, counted exactly as the stored shares, replies, reactions and saves say, with who engaged; App
Home shows the month's."""

from __future__ import annotations

import json
import time

from slack_sdk import WebClient

from socialrag.db import Database
from tests.support.harness import Harness, T, message_event

DAY = 86400.0


def ts(days_ago: float, n: int = 0) -> str:
    """A Slack ts ``days_ago`` days before now, never after now (whole seconds, rounded down)."""
    return f"{int(time.time() - days_ago * DAY) - 1}.{n:06d}"


def react(harness: Harness, user: str, emoji: str, item_ts: str) -> None:
    harness.event(
        {
            "type": "reaction_added",
            "user": user,
            "reaction": emoji,
            "event_ts": ts(0, 999),
            "item": {"type": "message", "channel": "C1", "ts": item_ts},
        }
    )


def titles(db: Database) -> None:
    with db.connection() as conn:
        for value, title in (("2401.00001", "Paper A"), ("2401.00002", "Paper B"), ("2401.00003", "Paper C")):
            conn.execute(
                "UPDATE papers p SET title = %s FROM paper_ids i WHERE i.paper_id = p.id AND i.value = %s",
                (title, value),
            )


def test_the_top_list_matches_the_stored_engagement(harness: Harness, db: Database) -> None:
    a, b, c = (f"https://arxiv.org/abs/2401.0000{i}" for i in (1, 2, 3))
    share_a, share_b, share_c = ts(2, 1), ts(3, 2), ts(20, 3)
    harness.event(message_event(share_a, f"<{a}>", user="U2"))
    harness.event(message_event(share_b, f"<{b}>", user="U3"))
    harness.event(message_event(share_c, f"<{c}>", user="U1"))
    harness.event(message_event(ts(1, 4), f"again: <{a}>", user="U4"))  # a re-share
    harness.event(message_event(ts(1.5, 5), "great read", user="U1", thread_ts=share_a))
    harness.event(message_event(ts(1.4, 6), "agreed", user="U4", thread_ts=share_a))
    harness.event(message_event(ts(1.3, 7), "the ablation is thin", user="U2", thread_ts=share_b))
    react(harness, "U3", "+1", share_a)
    react(harness, "U4", "-1", share_a)  # not counted: the list is of what the group found worth its time
    react(harness, "U1", "bookmark", share_b)
    react(harness, "U4", "fire", share_c)
    assert "Saved" in harness.command(f"save {c}", user="U4")
    titles(db)

    week = harness.command("top week")
    lines = week.split("\n")
    assert "past week*" in lines[0] and len(lines) == 4, week
    # the re-sharer also replied: the most engaged first; the -1 counts for nothing
    assert lines[1] == f"1. <{a}|Paper A> — 2 shares, 2 replies, 1 reaction · <@U4>, <@U1>, <@U2> and 1 more"
    assert lines[2] == f"2. <{b}|Paper B> — 1 share, 1 reply, 1 save · <@U1>, <@U2>, <@U3>"
    # shared 20 days ago: this week only its reaction and the save count
    assert lines[3] == f"3. <{c}|Paper C> — 1 reaction, 1 save · <@U4>"

    month = harness.command("top")  # the month by default
    assert month.index("Paper A") < month.index("Paper B") < month.index("Paper C"), month
    assert f"3. <{c}|Paper C> — 1 share, 1 reaction, 1 save · <@U4>, <@U1>" in month
    assert "Say which period" in harness.command("top decade")

    # App Home, opened as Slack opens it: the month's first three
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    harness.event({"type": "app_home_opened", "user": "U2", "channel": "D1", "tab": "home", "event_ts": "1.0"})
    harness.settle()  # the Home is built off the listener pool
    home = json.dumps(harness.standin.views["U2"])
    assert "Most engaged with, past month" in home and "1. <https://arxiv.org/abs/2401.00001|Paper A>" in home
    assert "3. <https://arxiv.org/abs/2401.00003|Paper C>" in home


def test_a_member_who_left_is_counted_but_not_named(harness: Harness, db: Database) -> None:
    """A member who left the channel is no longer named in its top list (`top`, App Home), as no other place
    names them; what they did still counts, as "more"."""
    a, b = (f"https://arxiv.org/abs/2401.0000{i}" for i in (1, 2))
    share_a, share_b = ts(2, 1), ts(3, 2)
    harness.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "event_ts": "1.0"})
    harness.settle()
    harness.event(message_event(share_a, f"<{a}>", user="U2"))
    harness.event(message_event(share_b, f"<{b}>", user="U3"))
    harness.event(message_event(ts(1.3, 7), "the ablation is thin", user="U2", thread_ts=share_b))
    titles(db)
    assert "1 share, 1 reply · <@U2>, <@U3>" in harness.command("top week")
    harness.standin.state.channels["C1"]["members"].remove("U3")
    harness.event({"type": "member_left_channel", "user": "U3", "channel": "C1", "team": T, "event_ts": "2.0"})
    week = harness.command("top week")
    assert "U3" not in week, week
    assert f"<{b}|Paper B> — 1 share, 1 reply · <@U2> and 1 more" in week, week
    harness.event({"type": "member_left_channel", "user": "U2", "channel": "C1", "team": T, "event_ts": "3.0"})
    week = harness.command("top week", user="U1")
    assert "U2" not in week and "U3" not in week, week
    assert f"<{a}|Paper A> — 1 share · 1 member" in week and "1 reply · 2 members" in week, week
    harness.ctx.channels.activate(T, "C1")
    harness.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "4.0"})
    harness.settle()
    home = json.dumps(harness.standin.views["U1"])
    assert "Most engaged with, past month" in home and "U2" not in home and "U3" not in home, home
