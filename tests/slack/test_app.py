"""End to end through the real bolt App (served over HTTP) and slack_sdk, against the local Slack stand-in,
with signed requests: events, the slash command, the App Home, and posting on schedule."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from psycopg.types.json import Jsonb
from slack_sdk import WebClient

from bot.app import build_app
from bot.app_context import AppContext
from bot.slack.http_front import HttpFront
from bot.slack.installation_store import token_for
from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge.intake import index_messages
from socialrag.models import Channel, Message
from socialrag.recommender.rank.engagement import ScoringConfig, channel_weights
from socialrag.recommender.retrieve.candidates import CandidateQuery, seed_papers
from socialrag.recommender.retrieve.context import load_channel_context
from socialrag.recommender.serve.service import Recommender
from tests.support.harness import SECRET, Harness, T, count, lab_state, message_event
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab
from tests.support.openai_standin import OpenAIStandIn, chain_answer
from tests.support.slack_standin import SlackStandIn
from tests.support.slots import slot_worker


def test_unsigned_or_wrongly_signed_requests_are_refused(harness: Harness) -> None:
    body = json.dumps({"type": "event_callback", "team_id": T, "event": message_event("1.0", "x")})
    assert httpx.post(harness.url, content=body, headers={"Content-Type": "application/json"}).status_code == 401
    assert harness.signed(body, "application/json", secret="wrong").status_code == 401
    assert httpx.get(harness.url.replace("/slack/events", "/healthz")).text == "ok"


def test_link_share_reaction_edit_and_delete(harness: Harness, db: Database) -> None:
    assert harness.event(message_event("1700000001.000100", "chatter without links")).status_code == 200
    harness.event(message_event("1700000002.000100", "<https://arxiv.org/abs/1706.03762|Attention>"))
    harness.event(message_event("1700000003.000100", "agreed", user="U3", thread_ts="1700000002.000100"))
    assert count(db, "SELECT count(*) FROM messages") == 2, "the share and its reply; chatter is not stored"
    assert count(db, "SELECT count(*) FROM message_papers") == 1
    reaction = {
        "type": "reaction_added",
        "user": "U3",
        "reaction": "+1",
        "event_ts": "1700000004.000100",
        "item": {"type": "message", "channel": "C1", "ts": "1700000002.000100"},
    }
    harness.event(reaction, event_id="EvR1")
    assert count(db, "SELECT count(*) FROM reactions") == 1
    harness.event({**reaction, "type": "reaction_removed"}, event_id="EvR2")
    assert count(db, "SELECT count(*) FROM reactions") == 0
    # Slack retries the first event: it must not take effect again
    assert harness.event(reaction, event_id="EvR1").status_code == 200
    assert count(db, "SELECT count(*) FROM reactions") == 0
    edited = {
        "type": "message",
        "subtype": "message_changed",
        "channel": "C1",
        "ts": "1700000005.000100",
        "message": {
            "type": "message",
            "user": "U2",
            "ts": "1700000002.000100",
            "text": "<https://aclanthology.org/N19-1423/|BERT> instead",
            "edited": {"user": "U2", "ts": "1700000005.000100"},
        },
    }
    harness.event(edited)
    with db.connection() as conn:
        ids = conn.execute(
            "SELECT i.scheme || ':' || i.value FROM message_papers JOIN paper_ids i USING (paper_id) ORDER BY 1"
        ).fetchall()
    assert ids == [("acl:N19-1423",)], "the edit replaced the link"
    harness.event(
        {
            "type": "message",
            "subtype": "message_deleted",
            "channel": "C1",
            "deleted_ts": "1700000002.000100",
            "ts": "1700000006.000100",
        }
    )
    assert count(db, "SELECT count(*) FROM messages") == 0, "the message and its thread are gone"


def test_slash_commands(harness: Harness, db: Database) -> None:
    assert "frequency daily|every-other-day|weekly" in harness.command("help")
    assert harness.command("frequency weekly") == "Done: I'll post weekly here."
    assert "Try `/paperping frequency daily`" in harness.command("frequency hourly")
    assert "I don't know `dance`" in harness.command("dance")
    assert harness.command("pause") == "Done: posts are paused."
    assert harness.command("resume") == "Done: posts are resumed."
    assert harness.command("style tldr") == "Done: style is now tldr."
    assert "Try `/paperping style" in harness.command("style fancy")
    assert "won't @-mention you" in harness.command("mentions off")
    assert "ORCID is 0000-0002-1825-0097" in harness.command("link-author https://orcid.org/0000-0002-1825-0097")
    assert "not an author id" in harness.command("link-author someone")
    assert "two weeks" not in harness.command("focus retrieval for group chats")
    assert ":eyes: counts as positive" in harness.command("emoji eyes positive")
    assert "positive, negative or neutral" in harness.command("emoji eyes great")
    status = harness.command("status")
    assert "posts weekly" in status and "style `tldr`" in status and "Focus: retrieval for group chats" in status
    assert "Ranking: the default blend" in status  # nothing learnt yet
    assert "haven't posted here yet" in harness.command("why")
    assert harness.command("hours 10-16 America/New_York") == (
        "Done: I'll post between 10:00 and 16:00 (America/New_York) on weekdays."
    )
    assert "not a timezone I know" in harness.command("hours 10-16 Mars/Olympus")
    assert "Try `/paperping hours 9-17`" in harness.command("hours 18-9")
    with db.connection() as conn:
        settings = storage.settings.load_channel_settings(conn, T, "C1")
        member = conn.execute("SELECT mentions_enabled, orcid FROM member_settings WHERE user_id = 'U2'").fetchone()
        override = storage.settings.load_emoji_overrides(conn, T, "C1")
    assert settings.frequency == "weekly" and settings.style == "tldr" and not settings.paused
    assert (settings.post_start_hour, settings.post_end_hour, settings.timezone) == (
        10,
        16,
        "America/New_York",
    )
    assert member == (False, "0000-0002-1825-0097") and override == {"eyes": "positive"}
    # the member's changes in a row are one announcement in the channel, a short line each
    (said,) = [m["text"] for m in harness.standin.state.messages["C1"] if m.get("user") == "UBOT"]
    assert said.startswith("<@U2> changed PaperPing's settings here:\n• set PaperPing to post weekly.")
    assert "\n• paused PaperPing's posts in this channel." in said
    assert all(len(line) < 160 for line in said.splitlines()), "a short line a change"


def test_forget_me_asks_then_deletes(harness: Harness, db: Database) -> None:
    harness.event(message_event("1700000002.000100", "<https://arxiv.org/abs/1706.03762>", user="U2"))
    assert "confirm" in harness.command("forget-me")
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'U2'") == 1
    assert "deleted 1 stored messages" in harness.command("forget-me confirm")
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'U2'") == 0
    assert count(db, "SELECT count(*) FROM members WHERE user_id = 'U2'") == 0


def test_a_partner_organisations_member_forgets_in_a_shared_channel(harness: Harness, db: Database) -> None:
    """Slack Connect: the member's own workspace is another organisation's, and their command says so
    (`team_id`). Commands act on the workspace the channel belongs to: what they shared there goes, and nothing
    of theirs is stored there again."""
    harness.event(message_event("1700000002.000100", "<https://arxiv.org/abs/1706.03762>", user="UP1"))
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'UP1'") == 1
    assert "deleted 1 stored messages" in harness.command("forget-me confirm", user="UP1", team="T0PARTNER")
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'UP1'") == 0
    harness.event(message_event("1700000003.000100", "<https://arxiv.org/abs/2005.14165>", user="UP1"))
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'UP1'") == 0, "forgotten in the channel's workspace"


def test_guests_and_other_organisations_do_not_steer_the_channel(harness: Harness, db: Database) -> None:
    """A guest or a Slack Connect partner's member gets a sentence, and the channel keeps its settings; their
    own settings stay theirs, and what they may read they still can."""
    for text in ("frequency daily", "pause", "emoji +1 negative", "focus retrieval", "sources arxiv", "now"):
        assert "Guests can't" in harness.command(text, user="UG1"), text
        assert "other organisations" in harness.command(text, user="UP1", team="T0PARTNER"), text
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
        overrides = storage.settings.load_emoji_overrides(conn, T, "C1")
    assert s.frequency == "every-other-day" and not s.paused and s.focus_text is None and overrides == {}
    assert "won't @-mention you" in harness.command("mentions off", user="UG1")
    assert "Candidates here come from" in harness.command("sources", user="UG1")
    assert "PaperPing here" in harness.command("status", user="UP1", team="T0PARTNER")
    assert not [p for p in harness.standin.posts if "UG1" in p["text"] or "UP1" in p["text"]], "nothing announced"


def test_the_guest_check_fails_closed_when_slack_cannot_say_who_is_asking(harness: Harness, db: Database) -> None:
    """When users.info answered 429 or an error, a guest counted as a full member and could change the channel's
    settings. Now a wait that fits in the command's budget is waited out; past it nothing is changed, and the
    member is told to try again (within Slack's 3 s: ``Harness.command`` checks that)."""
    harness.standin.rate_limits["users.info"] = 3
    harness.standin.retry_after = 5  # longer than a command may wait
    refused = harness.command("frequency daily", user="UG1")
    assert "try again in a minute" in refused and "Done" not in refused
    harness.standin.rate_limits["users.info"] = 1
    harness.standin.retry_after = 1  # a short wait fits: the guest is recognised
    assert "Guests can't" in harness.command("pause", user="UG1")
    # a member of another organisation is known from users.info, whatever team the request names
    harness.standin.state.users["UX1"] = {"id": "UX1", "team_id": "T0OTHER", "name": "xavier", "is_stranger": True}
    assert "other organisations" in harness.command("frequency daily", user="UX1")
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert s.frequency == "every-other-day" and not s.paused


def test_a_locked_channel_is_steered_by_its_inviter_and_the_admins(harness: Harness, db: Database) -> None:
    harness.event(
        {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "inviter": "U1", "event_ts": "1"}
    )
    assert "Only <@U1> and the workspace's admins" in harness.command("lock", user="U3")
    assert "Done: only the member who invited me" in harness.command("lock", user="U1")
    assert "settings here are locked" in harness.command("frequency daily", user="U3")
    assert "won't @-mention you" in harness.command("mentions off", user="U3"), "a member's own settings stay theirs"
    assert harness.command("frequency weekly", user="U4") == "Done: I'll post weekly here.", "an admin may"
    assert harness.command("style tldr", user="U1") == "Done: style is now tldr.", "the inviter may"
    assert "Only <@U1>" in harness.command("unlock", user="U2")
    assert "members of this workspace can change" in harness.command("unlock", user="U4")
    assert harness.command("frequency daily", user="U3") == "Done: I'll post daily here."


def test_removing_and_inviting_paperping_again_does_not_make_a_new_steward(harness: Harness, db: Database) -> None:
    joined = {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T}
    harness.event({**joined, "inviter": "U1", "event_ts": "1.0"})
    assert "Done: only the member who invited me" in harness.command("lock", user="U1")
    # any member may remove PaperPing from a channel and invite it back
    harness.event({"type": "member_left_channel", "user": "UBOT", "channel": "C1", "team": T, "event_ts": "2.0"})
    harness.event({**joined, "inviter": "U3", "event_ts": "3.0"})
    assert "Only <@U1> and the workspace's admins" in harness.command("unlock", user="U3")
    assert "settings here are locked" in harness.command("frequency daily", user="U3")
    assert harness.command("style tldr", user="U1") == "Done: style is now tldr.", "the first inviter still may"
    with db.connection() as conn:
        assert storage.settings.load_channel_settings(conn, T, "C1").invited_by == "U1"


def test_a_second_invitation_says_hello_once_and_reads_once(harness: Harness, db: Database) -> None:
    joined = {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "inviter": "U1"}
    harness.event({**joined, "event_ts": "1.0"})
    harness.event({**joined, "event_ts": "2.0"})
    intros = [p for p in harness.standin.posts if p["text"].startswith("Hi, I'm PaperPing")]
    assert len(intros) == 1


def test_a_hello_slack_did_not_take_is_said_when_the_event_comes_again(harness: Harness, db: Database) -> None:
    """Slack failed the hello: the event's answer says so, and Slack's next copy of it says hello, once."""
    joined = {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "inviter": "U1"}
    harness.standin.fail_next["chat.postMessage"] = 1
    assert harness.event({**joined, "event_ts": "1.0"}, event_id="EvJoin").status_code != 200
    assert harness.event({**joined, "event_ts": "1.0"}, event_id="EvJoin").status_code == 200  # Slack's retry
    intros = [p for p in harness.standin.posts if p["text"].startswith("Hi, I'm PaperPing")]
    assert len(intros) == 1
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert s.active and s.activated_at is not None and s.invited_by == "U1"


def test_a_members_changes_in_a_row_are_one_announcement(harness: Harness, db: Database) -> None:
    """One member changing settings over and over costs the channel one message, edited to list each change; ten
    minutes on, or another member, or an announcement deleted in Slack, starts a new one."""

    def announcements() -> list[dict[str, object]]:
        return [p for p in harness.standin.posts if "PaperPing" in str(p["text"]) and str(p["text"]).startswith("<@")]

    assert harness.command("frequency daily", user="U2") == "Done: I'll post daily here."
    assert harness.command("style tldr", user="U2") == "Done: style is now tldr."
    assert harness.command("length short", user="U2").startswith("Done")
    (first,) = announcements()
    shown = next(m for m in harness.standin.state.messages["C1"] if m["ts"] == first["ts"])["text"]
    assert shown.startswith("<@U2> changed PaperPing's settings here:\n• set PaperPing to post daily.")
    assert shown.count("\n• ") == 3 and "`tldr` style" in shown and "short length" in shown
    assert harness.command("frequency weekly", user="U3") == "Done: I'll post weekly here."
    assert [p["text"][:6] for p in announcements()] == ["<@U2> ", "<@U3> "], "another member's change is theirs"
    with db.connection() as conn:  # ten minutes on
        conn.execute("UPDATE announcements SET posted_at = posted_at - interval '11 minutes'")
    assert harness.command("style template", user="U2").startswith("Done")
    assert len(announcements()) == 3 and announcements()[-1]["text"].startswith("<@U2> set PaperPing's")
    harness.standin.state.messages["C1"] = [m for m in harness.standin.state.messages["C1"]
                                            if m["ts"] != announcements()[-1]["ts"]]  # fmt: skip
    assert harness.command("length normal", user="U2").startswith("Done")
    assert len(announcements()) == 4, "an announcement deleted in Slack is not edited: a new one says the change"


def test_an_archived_channel_stops_and_starts_again_when_unarchived(harness: Harness, db: Database) -> None:
    """Archived, the channel's posts stop with why (no post is tried there); unarchived with PaperPing still in
    it, they start again, the next slot scheduled as on joining. A channel stopped for another reason stays."""
    joined = {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "inviter": "U1"}
    harness.event({**joined, "event_ts": "1.0"})

    def settings() -> storage.settings.ChannelSettings:
        with db.connection() as conn:
            return storage.settings.load_channel_settings(conn, T, "C1")

    archived = {"type": "message", "subtype": "channel_archive", "channel": "C1", "user": "U1", "ts": "2.0"}
    harness.standin.state.channels["C1"]["is_archived"] = True  # as Slack says it from then on
    harness.event(archived)
    assert not settings().active and settings().stopped_reason == "slack: is_archived"
    assert "stopped" in harness.command("status").lower()
    harness.standin.state.channels["C1"]["is_archived"] = False
    harness.event({**archived, "subtype": "channel_unarchive", "ts": "3.0"})
    s = settings()
    assert s.active and s.stopped_reason is None and s.next_post_at is not None
    with db.connection() as conn:  # a channel stopped for another reason is not started by an unarchive
        storage.settings.upsert_channel_setting(conn, T, "C1", active=False, stopped_reason="slack: not_in_channel")
    harness.event({**archived, "subtype": "channel_unarchive", "ts": "4.0"})
    assert not settings().active and settings().stopped_reason == "slack: not_in_channel"


def test_app_home(harness: Harness, db: Database) -> None:
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    harness.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "1.0"})
    harness.settle()  # the Home is built off the listener pool
    view = harness.standin.views["U1"]
    text = json.dumps(view)
    assert view["type"] == "home" and "nlp-lab" in text and "Turn mentions off" in text and "Forget me" in text
    assert "Ranking: the default blend" in text, "App Home says what drives the channel's ranking"
    assert "This month: 0 papers shared; 0 posts by PaperPing, 0 drew a reaction or a reply." in text
    assert "*Ask there*: `/paperping ask QUESTION`" in text, "App Home tells a member they can ask the group's memory"


def test_app_home_answers_slack_at_once_while_member_lists_are_read(harness: Harness, db: Database) -> None:
    # the member's channel list is a day old: opening the Home reads it again, and Slack takes 5 s to answer;
    # the opening is acknowledged without waiting for that, and a resend of it is dropped
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    with db.connection() as conn:
        storage.workspaces.add_channel_member(conn, T, "C1", "U1")
        conn.execute("UPDATE channels SET members_read_at = now() - interval '2 days'")
    harness.standin.hold_seconds = 5.0
    harness.standin.hold = lambda call: call.method == "conversations.members"
    opened = {"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "1.0"}
    started = time.monotonic()
    assert harness.event(opened, event_id="EvHOME1").status_code == 200
    assert time.monotonic() - started < 4.0, "Slack got its answer before the member list was read"
    harness.event(opened, event_id="EvHOME1")  # Slack's resend of the same event
    harness.settle()
    assert len(harness.standin.calls_to("conversations.members")) == 1, "the resend read nothing again"
    assert "nlp-lab" in json.dumps(harness.standin.views["U1"])


def test_app_home_of_a_member_in_many_channels_stays_within_slacks_limit(harness: Harness, db: Database) -> None:
    from bot.views.home_tab import HOME_CHANNELS, build_home

    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T, domain="lab")
        for k in range(120):
            cid = f"C{k:04d}"
            storage.workspaces.upsert_channel(conn, Channel(T, cid, f"reading-{k:03d}"))
            storage.settings.upsert_channel_setting(conn, T, cid, active=True)
            storage.workspaces.add_channel_member(conn, T, cid, "U1")
        conn.execute("UPDATE channels SET members_read_at = now()")
    view = build_home(harness.ctx, T, "U1")
    assert len(view["blocks"]) <= 100, "Slack refuses a view of more than 100 blocks"
    text = json.dumps(view)
    assert (
        "reading-000" in text
        and f"reading-{HOME_CHANNELS - 1:03d}" in text
        and f"reading-{HOME_CHANNELS:03d}" not in text
    )
    assert f"And {120 - HOME_CHANNELS} more channels you share with me" in text and "Forget me" in text


@pytest.mark.slow
def test_scheduled_post_mentions_thread_and_the_loop(harness: Harness, db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.channels.activate(T, "C1", AS_OF)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=AS_OF, style="template")

    worker = slot_worker(db, lambda team: client, Recommender(harness.settings, db), clock=lambda: AS_OF)
    assert worker.tick() == 1
    assert worker.tick() == 0, "the slot is served; the next one is in the future"
    (post,) = [p for p in harness.standin.posts if p.get("blocks")]
    text = json.dumps(post["blocks"])
    assert "<@U" in text, "members are @-mentioned"
    assert "Earlier thread" in text and "https://lab.slack.com/archives/C1/p" in text
    assert post["metadata"]["event_type"] == "paperping_recommendation"
    with db.connection() as conn:
        rec = conn.execute("SELECT status, message_ts, paper_id FROM recommendations").fetchone()
    assert rec[0] == "posted" and rec[1] == post["ts"]
    # the loop: a thumbs-up on PaperPing's post makes its paper a positive seed of the next recommendation
    harness.event(
        {
            "type": "reaction_added",
            "user": "U3",
            "reaction": "+1",
            "event_ts": str(AS_OF.timestamp() + 60),
            "item": {"type": "message", "channel": "C1", "ts": post["ts"]},
        }
    )
    with db.connection() as conn:
        later = datetime.now(UTC) + timedelta(days=1)  # the stand-in stamps posts with the real time
        ctx = load_channel_context(conn, T, "C1", later, "all-MiniLM-L6-v2")
        weights = channel_weights(ctx.papers, later, ScoringConfig(), ctx.emoji_overrides)
        positive, _ = seed_papers(CandidateQuery(ctx, weights, "all-MiniLM-L6-v2"))
    assert rec[2] in positive
    why = harness.command("why")
    assert "Why I posted" in why and "Ranking:" in why


@pytest.mark.slow
def test_crash_after_posting_does_not_post_twice(harness: Harness, db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.channels.activate(T, "C1", AS_OF)
    slot = AS_OF.astimezone(UTC)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=slot)
        # a process claimed the slot, posted, and died before recording the post
        storage.posts.open_slot(conn, T, "C1", slot.isoformat(), "template+tldr")
        conn.execute("UPDATE recommendations SET created_at = %s", (slot - timedelta(minutes=1),))
    client.chat_postMessage(
        channel="C1",
        text="an earlier post",
        metadata={"event_type": "paperping_recommendation", "event_payload": {"slot_key": slot.isoformat()}},
    )

    worker = slot_worker(
        db,
        lambda team: client,
        Recommender(harness.settings, db),
        clock=lambda: slot + timedelta(minutes=11),
    )
    assert worker.tick() == 1
    assert len(harness.standin.posts) == 1, "the restarted worker found the post instead of posting again"
    assert count(db, "SELECT count(*) FROM recommendations WHERE status = 'posted'") == 1


def test_quiet_period_and_step_down(harness: Harness, db: Database) -> None:
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    now = datetime(2024, 3, 5, 10, 0, tzinfo=UTC)
    harness.ctx.channels.activate(T, "C1", now)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=now, frequency="daily")
        storage.posts.record_activity(conn, T, "C1", now - timedelta(minutes=5))
    calls: list[str] = []

    def recommend(team: str, channel: str, at: datetime, style: str) -> None:
        calls.append(channel)
        return None

    worker = slot_worker(db, lambda team: client, recommend, clock=lambda: now)
    worker.tick()
    with db.connection() as conn:
        waiting = storage.settings.load_channel_settings(conn, T, "C1").next_post_at
    assert calls == [] and waiting == now + timedelta(minutes=10), "waits for the conversation to pause"
    # six posts, none answered: a lab may read without reacting, so the pace stays (silence alone counts only
    # over a long stretch), and status says so
    from socialrag.knowledge import index_messages
    from socialrag.models import Message, PaperRef

    due = storage.posts.DueChannel(T, "C1", now, "daily", "tldr", None, 9, 17, True, None, None)
    with db.connection() as conn:
        for i in range(6):
            at, ts = now - timedelta(days=6 - i), f"17000000{i}.000000"
            ref = PaperRef("arxiv", f"2401.0000{i}", f"https://arxiv.org/abs/2401.0000{i}", f"Paper {i}")
            index_messages(conn, [Message(T, "C1", ts, "UBOT", f"<{ref.url}>", at, papers=(ref,))])
            conn.execute(
                """INSERT INTO recommendations (team_id, channel_id, slot_key, style, status, posted_at, message_ts)
                            VALUES (%s, 'C1', %s, 'tldr', 'posted', %s, %s)""",
                (T, f"s{i}", at, ts),
            )
    worker._finish(due, now, posted=True)
    with db.connection() as conn:
        assert storage.settings.load_channel_settings(conn, T, "C1").frequency == "daily"
    assert "The last 6 of my posts drew no reaction, click or reply" in harness.command("status")
    # three of the five posts before the newest marked not for us: the channel steps down, and status says why
    with db.connection() as conn:
        for i in (1, 3, 4):
            mid = storage.messages.load_message_id(conn, T, "C1", f"17000000{i}.000000")
            assert mid is not None
            storage.messages.add_reaction(conn, mid, T, "C1", "U3", "button:not-for-us", now)
    worker._finish(due, now, posted=True)
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert s.frequency == "every-other-day" and "marked not for us" in (s.step_down_reason or "")
    status = harness.command("status")
    assert "Posting less often because 3 of the last five posts were marked not for us" in status
    assert harness.command("frequency daily") == "Done: I'll post daily here."
    with db.connection() as conn:
        assert storage.settings.load_channel_settings(conn, T, "C1").step_down_reason is None


def test_joining_a_channel_introduces_itself_and_backfills(harness: Harness, db: Database) -> None:
    harness.standin.state.messages["C1"] = [
        {
            "type": "message",
            "user": "U1",
            "ts": "1700000100.000000",
            "text": "<https://arxiv.org/abs/2005.14165|GPT-3>",
            "reactions": [{"name": "fire", "users": ["U2"], "count": 1}],
        },
        {"type": "message", "user": "U2", "ts": "1700000200.000000", "text": "lunch?"},
    ]
    harness.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "event_ts": "1.0"})
    intro = harness.standin.posts[0]["text"]
    assert intro.startswith("Hi, I'm PaperPing") and "/paperping help" in intro and len(intro) < 400
    for _ in range(50):
        if count(db, "SELECT count(*) FROM reactions") == 1:
            break
        time.sleep(0.1)
    assert count(db, "SELECT count(*) FROM messages") == 1 and count(db, "SELECT count(*) FROM reactions") == 1
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert s.active and s.next_post_at is not None


@pytest.mark.slow
@pytest.mark.parametrize("with_llm", [True, False])
def test_a_joined_channel_explains_with_the_llm_when_one_is_configured(
    db: Database, tmp_path: Path, with_llm: bool
) -> None:
    """No member chose a style: the post uses `llm` when an LLM is configured, the template otherwise."""
    build_lab(db, tmp_path, CachedEmbedder())
    model = OpenAIStandIn(chain_answer)
    standin = SlackStandIn(lab_state()).start()
    nowhere = "http://127.0.0.1:9/"  # the online candidate sources are allowed but never reached here
    llm = {"offline": False, "openai_base_url": model.base_url, "s2_api_url": nowhere, "arxiv_api_url": nowhere}
    harness = Harness(db, standin, tmp_path, **(llm if with_llm else {}))
    try:
        harness.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "event_ts": "1.0"})
        with db.connection() as conn:
            assert storage.settings.load_channel_settings(conn, T, "C1").style is None, "nobody chose a style"
            storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=AS_OF)
        client = WebClient(token="xoxb-test", base_url=standin.url)

        with Recommender(harness.settings, db, embedder=CachedEmbedder()) as recommender:
            worker = slot_worker(db, lambda team: client, recommender, clock=lambda: AS_OF)
            assert worker.tick() == 1
        with db.connection() as conn:
            row = conn.execute("SELECT style, draft->>'fallback_reason' FROM recommendations").fetchone()
        assert row == (("llm", None) if with_llm else ("template+tldr", None))
        assert bool(model.prompts) == with_llm
        status = harness.command("status")
        assert ("`llm` (the default)" if with_llm else "`template+tldr` (the default)") in status
    finally:
        harness.stop()
        standin.stop()
        model.stop()


@pytest.mark.slow
def test_run_serves_http_and_stops_cleanly_on_sigterm(db: Database, tmp_path: Path) -> None:
    import signal

    from tests.slack.test_run_stop import start_http_run

    standin = SlackStandIn(lab_state()).start()
    proc, port = start_http_run(db, tmp_path, standin)
    try:
        for _ in range(100):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).text == "ok":
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        unsigned = httpx.post(
            f"http://127.0.0.1:{port}/slack/events", content="{}", headers={"Content-Type": "application/json"}
        )
        assert unsigned.status_code == 401
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        standin.stop()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "PaperPing stopped" in out


def test_now_makes_the_channel_due_and_an_outage_keeps_the_slot(harness: Harness, db: Database) -> None:
    from socialrag.errors import SourceError

    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    nothing = harness.command("now")
    assert nothing.startswith("No candidate yet") and "/paperping focus" in nothing, "no post is promised"
    with db.connection() as conn:
        assert storage.settings.load_channel_settings(conn, T, "C1").next_post_at is None
    # a focus in a channel PaperPing never posted in opens its first slot a minute later; `now` finds it open
    assert "The first post here comes at about" in harness.command("focus retrieval-augmented generation")
    assert "A recommendation is already on its way here." in harness.command("now")
    with db.connection() as conn:
        due = storage.settings.load_channel_settings(conn, T, "C1").next_post_at
    now = datetime.now(UTC) + timedelta(minutes=1, seconds=1)
    assert due is not None and due <= now
    attempts: list[datetime] = []

    def flaky(team: str, channel: str, at: datetime, style: str) -> None:
        attempts.append(at)
        raise SourceError("llm", "the model server is down")

    worker = slot_worker(db, lambda team: client, flaky, clock=lambda: now)
    assert worker.tick() == 1
    with db.connection() as conn:
        rec = conn.execute("SELECT slot_key, status FROM recommendations").fetchone()
        again = storage.settings.load_channel_settings(conn, T, "C1").next_post_at
    assert rec[1] == "failed" and again == now + timedelta(minutes=5), "the post is delayed, not lost"
    worker.clock = lambda: now + timedelta(minutes=6)
    worker.tick()
    with db.connection() as conn:
        slots = conn.execute("SELECT DISTINCT slot_key FROM recommendations").fetchall()
    assert len(attempts) == 2 and slots == [(rec[0],)], "the same slot is retried"


def test_installations_are_kept_and_removed_on_uninstall(harness: Harness, db: Database) -> None:
    from slack_sdk.oauth.installation_store import Installation

    from bot.slack.installation_store import PostgresInstallationStore, SignedStateStore, token_for
    from socialrag.errors import ConfigError, KeyMismatch
    from socialrag.token_cipher import TokenCipher, generate_key

    key = generate_key()
    installs = PostgresInstallationStore(db, TokenCipher(key))
    installs.save(
        Installation(
            team_id="T0OTHER",
            team_name="Other lab",
            bot_token="xoxb-other",
            bot_user_id="UB2",
            bot_id="B2",
            user_id="U9",
            bot_scopes=["chat:write"],
        )
    )
    bot = installs.find_bot(enterprise_id=None, team_id="T0OTHER")
    assert bot is not None and bot.bot_token == "xoxb-other"
    assert count(db, "SELECT count(*) FROM installations WHERE bot_token LIKE '%%xoxb%%'") == 0, "encrypted at rest"
    oauth_only = Settings(home=Path("/nonexistent"), slack_client_id="1.2", slack_client_secret="s")
    with pytest.raises(ConfigError, match="PAPERPING_TOKEN_KEY is not set"):
        token_for(oauth_only, db, "T0OTHER")
    with pytest.raises(KeyMismatch, match="does not open this workspace's stored bot token"):
        token_for(oauth_only.with_changes(token_key=generate_key()), db, "T0OTHER")
    assert token_for(oauth_only.with_changes(token_key=key), db, "T0OTHER") == "xoxb-other"
    states = SignedStateStore(db, "client-secret")
    issued = [states.issue() for _ in range(50)]
    assert count(db, "SELECT count(*) FROM oauth_states") == 0, "issuing a state writes nothing"
    state = issued[0]
    assert states.consume(state) and not states.consume(state), "a state is usable once"
    expiry, nonce, mac = state.split("-")
    for forged in (
        f"{int(expiry) + 3600}-{nonce}-{mac}",  # a later expiry under the old signature
        f"{expiry}-{nonce}-{'0' * len(mac)}",
        SignedStateStore(db, "another-app").issue(),
        "",
        "é-ü-ß",
        "1" * 5000,
    ):
        assert not states.consume(forged), forged[:40]
    states.LIFETIME = timedelta(seconds=-1)
    assert not states.consume(states.issue()), "an expired state is refused"
    assert count(db, "SELECT count(*) FROM oauth_states") == 1, "only the state used once is written down"
    body = {
        "type": "event_callback",
        "team_id": "T0OTHER",
        "api_app_id": "A1",
        "event_id": "EvU1",
        "event": {"type": "app_uninstalled", "event_ts": "1.0"},
        "event_time": 1,
    }
    assert harness.signed(json.dumps(body), "application/json").status_code == 200
    time.sleep(0.3)
    assert installs.find_bot(enterprise_id=None, team_id="T0OTHER") is None


def test_oauth_installation_flow(db: Database, tmp_path: Path) -> None:
    import re as _re

    standin = SlackStandIn(lab_state()).start()
    settings = Settings(
        home=tmp_path,
        offline=True,
        slack_signing_secret=SECRET,
        slack_api_url=standin.url,
        slack_client_id="111.222",
        slack_client_secret="client-secret",
        token_key="sPzJ8m0TtTYUCLUWcaE6JhS2CYk1dNBhUYQHdGa_VXE=",
    )
    app = build_app(settings, db, AppContext(settings, db))
    server = HttpFront(app, "127.0.0.1", 0, signing_secret=SECRET, db=db).start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        with httpx.Client(base_url=base, timeout=10) as browser:
            page = browser.get("/slack/install")
            assert page.status_code == 200
            for _ in range(20):
                assert browser.get("/slack/install").status_code == 200
            assert count(db, "SELECT count(*) FROM oauth_states") == 0, "anonymous visits write nothing"
            state = _re.search(r"state=([\w\-]+)", page.text)
            assert state is not None and "client_id=111.222" in page.text
            # the state cookie is Secure; a browser on https would send it back, so the test does
            cookie = page.headers["set-cookie"].split(";")[0]
            done = browser.get(
                f"/slack/oauth_redirect?code=good-code&state={state.group(1)}", headers={"Cookie": cookie}
            )
            assert done.status_code == 200, done.text[:300]
            refused = browser.get(
                f"/slack/oauth_redirect?code=good-code&state={state.group(1)}", headers={"Cookie": cookie}
            )
            assert refused.status_code != 200 or "invalid" in refused.text.lower(), "a state is usable once"
    finally:
        server.stop()
        standin.stop()
    with db.connection() as conn:
        row = conn.execute("SELECT team_name, bot_token FROM installations WHERE team_id = 'T0NEW'").fetchone()
    assert row[0] == "New lab" and row[1].startswith("enc1:") and "xoxb" not in row[1], "the token is encrypted"
    assert token_for(settings, db, "T0NEW") == "xoxb-installed"


def test_socket_mode(db: Database, tmp_path: Path) -> None:
    from tests.support.harness import socket_mode_app

    standin = SlackStandIn(lab_state()).start()
    try:
        with socket_mode_app(db, standin, tmp_path) as sockets:
            envelope = sockets.send_event(
                {
                    "type": "event_callback",
                    "team_id": T,
                    "event_id": "EvS1",
                    "event": message_event("1700000009.000100", "<https://arxiv.org/abs/1706.03762>"),
                }
            )

            def acknowledged() -> bool:  # after the listener has run (process_before_response)
                return any(a.get("envelope_id") == envelope for a in sockets.acks)

            for _ in range(200):
                if count(db, "SELECT count(*) FROM messages") == 1 and acknowledged():
                    break
                time.sleep(0.05)
            assert count(db, "SELECT count(*) FROM messages") == 1
            assert acknowledged(), "the envelope was acknowledged"
    finally:
        standin.stop()


def test_report_uploads_the_month_through_files_upload_v2(harness: Harness, db: Database, tmp_path: Path) -> None:
    """`/paperping report` uploads a PNG the way Slack documents (getUploadURLExternal, the bytes to the upload
    URL, completeUploadExternal) with two lines about the channel as a whole; `report monthly` makes the
    scheduler post it once a month."""
    build_lab(db, tmp_path, CachedEmbedder())
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    assert "Posted this month's report" in harness.command("report")
    (upload,) = harness.standin.files
    assert upload["channels"] == ["C1"] and upload["data"][:8] == b"\x89PNG\r\n\x1a\n"
    assert len(upload["data"]) == upload["length"] > 10_000
    comment = upload["initial_comment"]
    assert "papers shared" in comment and "PaperPing posted" in comment and comment.count("\n") == 1
    with db.connection() as conn:
        names = storage.workspaces.load_member_names(conn, T)
    assert not any(name in comment for name in names.values() if len(name) > 2), "no member is named"
    methods = [c.method for c in harness.standin.calls]
    assert methods.index("files.getUploadURLExternal") < methods.index("files.completeUploadExternal")
    assert "Try `/paperping report`" in harness.command("report weekly")
    assert "works again from" in harness.command("report"), "one on-demand report every ten minutes"
    assert len(harness.standin.files) == 1
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(
            conn, T, "C1", report_asked_at=datetime.now(UTC) - timedelta(minutes=11)
        )
    harness.standin.missing_scopes.add("files.getUploadURLExternal")  # installed before files:write was asked for
    assert "reinstall PaperPing so it gets `files:write`" in harness.command("report")
    harness.standin.missing_scopes.clear()

    assert "monthly report here on the 1st" in harness.command("report monthly")
    from bot.delivery.report_upload import post_due_reports

    first = datetime(2031, 3, 1, 8, tzinfo=UTC)
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first) == 1
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first + timedelta(days=3)) == 0
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, datetime(2031, 4, 1, 8, tzinfo=UTC)) == 1
    assert len(harness.standin.files) == 3
    assert "stop the monthly report" in harness.command("report off")
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, datetime(2031, 5, 1, 8, tzinfo=UTC)) == 0


def test_a_monthly_report_that_cannot_be_uploaded_stops_and_says_why(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """`missing_scope` cannot heal by retrying: the monthly report is tried once, not at every tick, and status
    says why; a passing failure is retried an hour later; two workers never both post it."""
    from bot.delivery.report_upload import post_due_reports

    build_lab(db, tmp_path, CachedEmbedder())
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    assert "monthly report here on the 1st" in harness.command("report monthly")
    first = datetime(2031, 3, 1, 8, tzinfo=UTC)
    with db.connection() as conn:
        claimed = storage.reports.claim_monthly_reports_due(conn, first, first, timedelta(minutes=10))
        again = storage.reports.claim_monthly_reports_due(conn, first, first, timedelta(minutes=10))
    assert claimed == [(T, "C1")] and again == [], "a claimed report is one worker's"
    with db.connection() as conn:  # that worker stopped; its claim runs out
        storage.settings.upsert_channel_setting(conn, T, "C1", report_claimed_until=None)

    harness.standin.fail_next["files.getUploadURLExternal"] = 1  # a passing failure (an HTTP 500)
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first) == 0
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first + timedelta(minutes=1)) == 0
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first + timedelta(hours=1, minutes=1)) == 1

    harness.standin.missing_scopes.add("files.getUploadURLExternal")
    april = datetime(2031, 4, 1, 8, tzinfo=UTC)
    tries = [c.method for c in harness.standin.calls].count("files.getUploadURLExternal")
    for minutes in range(0, 300, 60):  # five ticks an hour apart
        assert post_due_reports(db, harness.ctx.pacer, lambda team: client, april + timedelta(minutes=minutes)) == 0
    assert [c.method for c in harness.standin.calls].count("files.getUploadURLExternal") == tries + 1
    assert "Monthly report stopped because of" in harness.command("status")
    harness.standin.missing_scopes.clear()
    harness.command("report monthly")
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, april + timedelta(hours=6)) == 1


LINK = "https://lab.slack.com/archives/C1/p1700000010000000"


def test_why_quotes_what_others_wrote(harness: Harness, db: Database) -> None:
    """`/paperping why` shows titles, names and citing sentences as text: no link, no mention, and only Slack's
    own permalinks as sources."""
    hostile = {
        "kind": "h5",
        "strength": 0.9,
        "fact": {
            "paper_title": "Attention <https://evil.example/login|click here> <!channel>",
            "relation": "cites",
            "similarity": 0.8,
            "context": "as shown by <@U0BOSS> in <!here>",
            "shared_authors": ["Ann <https://evil.example|Lee>"],
        },
        "permalinks": [LINK, "https://evil.example/phish"],
    }
    draft = {"paper": {"title": "A <!everyone> paper"}, "style": "template", "score": 0.5, "signals": [hostile]}
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "lab"))
        shared = "<https://arxiv.org/abs/1706.03762>"  # the earlier share the reason rests on, still in the channel
        when = datetime(2023, 11, 14, tzinfo=UTC)
        index_messages(conn, [Message(T, "C1", "1700000010.000000", "U1", shared, when, permalink=LINK)])
        conn.execute(
            "INSERT INTO recommendations (team_id, channel_id, slot_key, status, style, draft, posted_at)"
            " VALUES (%s, 'C1', 'why-test', 'posted', 'template', %s, now())",
            (T, Jsonb(draft)),
        )
    why = harness.command("why")
    assert "Why I posted" in why and "click here" in why
    assert "<!" not in why and "<@" not in why and "<https://evil" not in why and "evil.example" not in why
    assert LINK in why


def test_a_partner_organisations_member_forgets_from_app_home(harness: Harness, db: Database) -> None:
    """The Home view belongs to the workspace PaperPing is installed in; its buttons act there, whichever
    organisation the member who clicks is from."""
    from urllib.parse import urlencode

    harness.event(message_event("1700000002.000100", "<https://arxiv.org/abs/1706.03762>", user="UP1"))
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'UP1'") == 1
    payload = {
        "type": "block_actions",
        "team": {"id": "T0PARTNER"},
        "user": {"id": "UP1", "team_id": "T0PARTNER"},
        "view": {"type": "home", "team_id": T, "id": "V1"},
        "actions": [{"action_id": "home_forget", "type": "button", "value": "x", "action_ts": "1.0"}],
        "trigger_id": "1",
        "token": "x",
    }
    response = harness.signed(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    assert response.status_code == 200
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'UP1'") == 0
    assert count(db, "SELECT count(*) FROM forgotten_members WHERE team_id = %s AND user_id = 'UP1'", T) == 1


def test_an_emoji_read_the_way_the_channel_uses_it(harness: Harness, db: Database) -> None:
    """A lab that puts :+1: on what it has seen: papers with it are followed up no more often than papers nobody
    reacted to, while :fire: papers are. PaperPing reads :+1: as neutral there, says so in `status`, ranks with
    it, and a member's own setting wins until `auto` hands it back."""
    from socialrag.knowledge import index_messages
    from socialrag.models import Message, PaperRef, Reaction

    start = datetime(2024, 1, 1, tzinfo=UTC)
    messages = []
    plan = [("+1", 20, 4), (None, 20, 4), ("fire", 10, 8)]
    n = 0
    for emoji, papers, followed in plan:
        for k in range(papers):
            n += 1
            at = start + timedelta(days=n)
            ts = f"{at.timestamp():.6f}"
            ref = PaperRef("arxiv", f"2401.{n:05d}", f"https://arxiv.org/abs/2401.{n:05d}", f"Paper {n}")
            reactions = (Reaction("U3", emoji, at + timedelta(hours=1)),) if emoji else ()
            messages.append(Message(T, "C1", ts, "U2", f"<{ref.url}>", at, papers=(ref,), reactions=reactions))
            if k < followed:
                reply_at = at + timedelta(hours=2)
                messages.append(Message(T, "C1", f"{reply_at.timestamp():.6f}", "U4", "Let's read it", reply_at, ts))
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "nlp-lab"))
        index_messages(conn, messages)
    status = harness.command("status")
    assert ":+1: reads as neutral here, not positive: 4 of 20 papers with it were followed up" in status
    later = start + timedelta(days=60)
    with db.connection() as conn:
        ctx = load_channel_context(conn, T, "C1", later, "all-MiniLM-L6-v2")
    assert ctx.emoji_overrides == {"+1": "neutral"}
    thumbs = [pid for pid, p in ctx.papers.items() if any(r.emoji == "+1" for r in p.reactions)]
    fire = [pid for pid, p in ctx.papers.items() if any(r.emoji == "fire" for r in p.reactions)]
    weights = channel_weights(ctx.papers, later, ScoringConfig(), ctx.emoji_overrides)
    assert max(weights.get(p, 0.0) for p in thumbs) < min(weights[p] for p in fire)
    # a member sets it by hand: that wins, and status no longer says it was learnt
    assert ":+1: counts as positive" in harness.command("emoji +1 positive")
    assert "reads as neutral here" not in harness.command("status")
    with db.connection() as conn:
        assert load_channel_context(conn, T, "C1", later, "all-MiniLM-L6-v2").emoji_overrides == {"+1": "positive"}
    # `auto` hands the reading back to what the channel's history says
    assert "learns it from this channel" in harness.command("emoji +1 auto")
    assert ":+1: reads as neutral here" in harness.command("status")


def test_help_answers_at_once_while_slow_commands_run(harness: Harness, db: Database) -> None:
    """Slow commands ran on bolt's five listener threads: five of them (each waiting on Slack here) made `help`
    wait. They now run in a bounded pool of their own."""
    from urllib.parse import urlencode

    from bot.app_context import SlowWork
    from socialrag.recommender import Recommender
    from tests.support.labbase import CachedEmbedder

    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    # one member sends all five here; the bound of two per member is lifted so that they fill the pool
    harness.ctx.slow = SlowWork(per_owner=5)
    for k in range(2, 7):  # five other channels, whose requests Slack is slow to answer
        harness.standin.state.channels[f"C{k}"] = {"id": f"C{k}", "name": f"lab-{k}", "members": ["U1", "UBOT"]}
    harness.standin.hold = lambda call: call.method == "conversations.info" and call.params.get("channel") != "C1"
    harness.standin.hold_seconds = 2.5  # each slow command asks twice: four run at once, the fifth waits its turn
    answered = len(harness.standin.responses)
    for k in range(2, 7):
        body = urlencode(
            {
                "token": "x",
                "team_id": T,
                "channel_id": f"C{k}",
                "user_id": "U1",
                "command": "/paperping",
                "text": "like retrieval for dialogue",
                "response_url": harness.standin.response_url,
                "trigger_id": "1",
            }
        )
        assert harness.signed(body, "application/x-www-form-urlencoded").status_code == 200
    started = time.monotonic()
    answer = harness.command("help")
    took = time.monotonic() - started
    assert "/paperping" in answer and "like LINK-OR-WORDS" in answer and took < 3.0, f"help took {took:.1f} s"
    print(f"help answered in {took * 1000:.0f} ms while five slow commands waited on Slack")
    for _ in range(500):  # the slow ones are answered too, once Slack answers them
        if len(harness.standin.responses) >= answered + 6:
            break
        time.sleep(0.05)
    assert len(harness.standin.responses) >= answered + 6
    harness.standin.hold = None


def _monthly_report_lab(harness: Harness, db: Database, tmp_path: Path, timeout: int = 30) -> WebClient:
    build_lab(db, tmp_path, CachedEmbedder())
    client = WebClient(token="xoxb-test", base_url=harness.standin.url, timeout=timeout)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    assert "monthly report here on the 1st" in harness.command("report monthly")
    return client


def test_a_monthly_report_slack_may_have_taken_is_not_uploaded_again(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """The file is in the channel but the process died before recording it, or Slack's answer to the last step
    was lost: the report is not uploaded a second time that month (status says so), and next month's comes."""
    from bot.delivery.report_upload import post_due_reports, uploader
    from socialrag.report import post_due_reports as decide_due_reports

    client = _monthly_report_lab(harness, db, tmp_path, timeout=1)
    upload = uploader(harness.ctx.pacer, lambda team: client)

    def upload_then_die(team: str, channel: str, png: Path, text: str, title: str) -> None:
        upload(team, channel, png, text, title)
        raise SystemExit("the process is killed before it records the report")

    first = datetime(2031, 3, 1, 8, tzinfo=UTC)
    with pytest.raises(SystemExit):
        decide_due_reports(db, upload_then_die, first)
    assert len(harness.standin.files) == 1
    for later in (timedelta(minutes=11), timedelta(hours=2), timedelta(days=3)):
        assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first + later) == 0
    assert len(harness.standin.files) == 1, "the report is in the channel once"
    assert "Slack never confirmed" in harness.command("status")

    april = datetime(2031, 4, 1, 8, tzinfo=UTC)  # Slack takes the file, but its answer never arrives
    harness.standin.hold = lambda call: call.method == "files.completeUploadExternal"
    harness.standin.hold_seconds = 2
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, april) == 0
    wait_for_files = time.monotonic() + 10
    while len(harness.standin.files) < 2 and time.monotonic() < wait_for_files:
        time.sleep(0.05)
    harness.standin.hold = None
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, april + timedelta(hours=1, minutes=1)) == 0
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, april + timedelta(days=1, minutes=1)) == 0
    assert len(harness.standin.files) == 2
    may = datetime(2031, 5, 1, 8, tzinfo=UTC)
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, may) == 1
    assert len(harness.standin.files) == 3
    assert "Slack never confirmed" not in harness.command("status")


def test_a_report_that_fails_before_slack_has_the_file_is_not_called_unconfirmed(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """The workspace has no token left (PaperPing was uninstalled): nothing went to Slack, so the report is
    stopped with that reason, as before, and status does not say Slack may have it."""
    from bot.delivery.report_upload import post_due_reports

    _monthly_report_lab(harness, db, tmp_path)
    settings = Settings(home=tmp_path, offline=True)  # no single-workspace token, no key, no installation

    def client_for(team: str) -> WebClient:
        return WebClient(token=token_for(settings, db, team), base_url=harness.standin.url)

    due = (datetime.now(UTC).replace(day=1) + timedelta(days=32)).replace(day=1)  # the first 1st after `on`
    assert post_due_reports(db, harness.ctx.pacer, client_for, due) == 0
    assert harness.standin.files == []
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert s.report_uploading_at is None and s.report_stopped_reason, "stopped with why, not marked begun"
    assert "Slack never confirmed" not in harness.command("status")


def test_an_unconfirmed_report_is_said_in_its_month_only() -> None:
    from bot.commands.about import describe_unconfirmed_report
    from socialrag.storage.settings import ChannelSettings

    began = datetime(2031, 3, 31, 23, 30, tzinfo=timezone(timedelta(hours=-5)))  # 1 April, 04:30 UTC
    s = ChannelSettings(report_monthly=True, report_uploading_at=began)
    said = describe_unconfirmed_report(s, datetime(2031, 4, 20, tzinfo=UTC))
    assert said is not None and "at 04:30 UTC on 1 April" in said, said
    assert describe_unconfirmed_report(s, datetime(2031, 5, 1, 0, 1, tzinfo=UTC)) is None, "a month on"
    recorded = ChannelSettings(report_monthly=True, report_uploading_at=began, report_last_at=began)
    assert describe_unconfirmed_report(recorded, datetime(2031, 4, 20, tzinfo=UTC)) is None


def test_a_second_worker_never_uploads_a_report_the_first_still_holds(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """The first worker waits out a 429 while a second one ticks: the first's claim holds, one upload reaches the
    channel. A Retry-After past half the claim is not waited out at all (a second worker could take the report
    over meanwhile): nothing is sent, and the report goes an hour later, once."""
    from bot.delivery.report_upload import post_due_reports
    from bot.slack.pacer import MAX_WAIT_SECONDS, SlackPacer

    client = _monthly_report_lab(harness, db, tmp_path)
    first = datetime(2031, 3, 1, 8, tzinfo=UTC)
    other: list[int] = []

    def wait_while_another_ticks(seconds: float) -> None:  # the first worker's wait out of Slack's Retry-After
        other.append(post_due_reports(db, SlackPacer(), lambda team: client, first + timedelta(seconds=seconds)))

    harness.standin.rate_limits["files.getUploadURLExternal"] = 1
    harness.standin.retry_after = int(MAX_WAIT_SECONDS)
    assert post_due_reports(db, SlackPacer(sleep=wait_while_another_ticks), lambda team: client, first) == 1
    assert other == [0] and len(harness.standin.files) == 1

    april = datetime(2031, 4, 1, 8, tzinfo=UTC)
    slept: list[float] = []
    harness.standin.rate_limits["files.getUploadURLExternal"] = 1
    harness.standin.retry_after = 15 * 60  # longer than the claim itself
    assert post_due_reports(db, SlackPacer(sleep=slept.append), lambda team: client, april) == 0
    assert slept == [] and len(harness.standin.files) == 1, "not waited out, and nothing sent"
    assert post_due_reports(db, SlackPacer(), lambda team: client, april + timedelta(hours=1, minutes=1)) == 1
    assert len(harness.standin.files) == 2


def test_a_report_slack_refused_is_retried_and_uploaded_once(harness: Harness, db: Database, tmp_path: Path) -> None:
    """An error answer before the file was completed left nothing in the channel: an hour later the report is
    uploaded, once."""
    from bot.delivery.report_upload import post_due_reports

    client = _monthly_report_lab(harness, db, tmp_path)
    first = datetime(2031, 3, 1, 8, tzinfo=UTC)
    harness.standin.fail_next["files.getUploadURLExternal"] = 1
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first) == 0
    assert "Slack never confirmed" not in harness.command("status")
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first + timedelta(minutes=30)) == 0
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first + timedelta(hours=1, minutes=1)) == 1
    for later in (timedelta(hours=3), timedelta(days=2)):
        assert post_due_reports(db, harness.ctx.pacer, lambda team: client, first + later) == 0
    assert len(harness.standin.files) == 1
