"""The event shapes Slack really sends, through the real bolt app with signed requests: every message subtype
the Events API documents, edits and tombstones, uninstalling and being removed from a channel."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from socialrag import storage
from socialrag.db import Database
from tests.support.harness import Harness, count, message_event

ARXIV = "<https://arxiv.org/abs/1706.03762|Attention>"
ROOT, REPLY = "1700000002.000100", "1700000003.000100"


def share_with_reply(h: Harness) -> None:
    h.event(message_event(ROOT, f"read this {ARXIV}", reply_count=1))
    h.event(message_event(REPLY, "agreed, section 3 is neat", user="U3", thread_ts=ROOT))
    h.event(
        {
            "type": "reaction_added",
            "user": "U3",
            "reaction": "+1",
            "event_ts": "1700000004.000100",
            "item": {"type": "message", "channel": "C1", "ts": ROOT},
        }
    )


def changed(inner: dict[str, Any], ts: str = "1700000009.000100", before: str | None = None) -> dict[str, Any]:
    """A ``message_changed`` event as Slack sends it: the new message inside, no reactions in it, and the message
    before the edit (its text ``before``, when given)."""
    previous: dict[str, Any] = {"type": "message", "ts": inner.get("ts")}
    if before is not None:
        previous |= {"text": before, "user": inner.get("user")}
    return {
        "type": "message",
        "subtype": "message_changed",
        "hidden": True,
        "channel": "C1",
        "ts": ts,
        "event_ts": ts,
        "message": inner,
        "previous_message": previous,
    }


def test_deleting_a_thread_parent_leaves_a_tombstone_and_the_thread_goes(harness: Harness, db: Database) -> None:
    share_with_reply(harness)
    assert count(db, "SELECT count(*) FROM messages") == 2
    tombstone = {
        "type": "message",
        "subtype": "tombstone",
        "hidden": True,
        "user": "USLACKBOT",
        "text": "This message was deleted.",
        "ts": ROOT,
        "thread_ts": ROOT,
        "reply_count": 1,
    }
    harness.event(changed(tombstone))
    assert count(db, "SELECT count(*) FROM messages") == 0
    assert count(db, "SELECT count(*) FROM reactions") == 0


def test_an_edit_keeps_the_reactions(harness: Harness, db: Database) -> None:
    share_with_reply(harness)
    edit = {
        "type": "message",
        "user": "U2",
        "ts": ROOT,
        "text": f"read this one {ARXIV}",
        "edited": {"user": "U2", "ts": "1700000009.000100"},
        "thread_ts": ROOT,
        "reply_count": 1,
    }
    harness.event(changed(edit))
    assert count(db, "SELECT count(*) FROM reactions") == 1, "an edit carries no reactions; the stored ones stay"
    assert count(db, "SELECT count(*) FROM messages WHERE text LIKE 'read this one%%'") == 1


def test_an_edit_that_removes_the_link_drops_the_share_and_its_thread(harness: Harness, db: Database) -> None:
    share_with_reply(harness)
    edit = {
        "type": "message",
        "user": "U2",
        "ts": ROOT,
        "text": "never mind",
        "edited": {"user": "U2", "ts": "1700000009.000100"},
        "thread_ts": ROOT,
        "reply_count": 1,
    }
    harness.event(changed(edit))
    assert count(db, "SELECT count(*) FROM messages") == 0, "no orphaned replies"


def test_an_edit_that_adds_a_link_makes_a_share(harness: Harness, db: Database) -> None:
    harness.event(message_event(ROOT, "this paper is good"))
    assert count(db, "SELECT count(*) FROM messages") == 0
    edit = {
        "type": "message",
        "user": "U2",
        "ts": ROOT,
        "text": f"this paper is good {ARXIV}",
        "edited": {"user": "U2", "ts": "1700000009.000100"},
    }
    harness.event(changed(edit))
    assert count(db, "SELECT count(*) FROM message_papers") == 1


TS = "1700000100.000100"
# (subtype, the documented fields besides type/channel/ts, whether its paper link is stored)
SUBTYPES: list[tuple[str, dict[str, Any], bool]] = [
    ("bot_message", {"bot_id": "B0RSS", "username": "arxiv-feed", "text": ARXIV}, True),
    ("me_message", {"user": "U2", "text": f"is reading {ARXIV}"}, True),
    (
        "file_share",
        {
            "user": "U2",
            "text": f"notes on {ARXIV}",
            "upload": True,
            "files": [{"id": "F1", "name": "notes.pdf", "mimetype": "application/pdf"}],
        },
        True,
    ),
    (
        "thread_broadcast",
        {
            "user": "U2",
            "text": f"also {ARXIV}",
            "thread_ts": "1699999999.000100",
            "root": {"text": "root", "ts": "1699999999.000100", "user": "U3"},
        },
        True,
    ),
    ("channel_join", {"user": "U5", "text": "<@U5> has joined the channel", "inviter": "U1"}, False),
    ("channel_leave", {"user": "U5", "text": "<@U5> has left the channel"}, False),
    ("channel_topic", {"user": "U2", "topic": ARXIV, "text": f"<@U2> set the channel topic: {ARXIV}"}, False),
    ("channel_purpose", {"user": "U2", "purpose": ARXIV, "text": f"<@U2> set the channel purpose: {ARXIV}"}, False),
    (
        "channel_name",
        {
            "user": "U2",
            "old_name": "nlp",
            "name": "nlp-lab",
            "text": '<@U2> has renamed the channel from "nlp" to "nlp-lab"',
        },
        False,
    ),
    ("channel_archive", {"user": "U2", "text": "<@U2> archived the channel", "members": ["U2"]}, False),
    ("channel_unarchive", {"user": "U2", "text": "<@U2> un-archived the channel"}, False),
    ("channel_posting_permissions", {"user": "U2", "text": "<@U2> changed who can post"}, False),
    ("group_join", {"user": "U5", "text": "<@U5> has joined the group"}, False),
    ("group_leave", {"user": "U5", "text": "<@U5> has left the group"}, False),
    ("group_topic", {"user": "U2", "topic": ARXIV, "text": f"<@U2> set the group topic: {ARXIV}"}, False),
    ("group_purpose", {"user": "U2", "purpose": "papers", "text": "<@U2> set the group purpose: papers"}, False),
    ("group_name", {"user": "U2", "old_name": "a", "name": "b", "text": "<@U2> renamed the group"}, False),
    ("group_archive", {"user": "U2", "text": "<@U2> archived the group", "members": ["U2"]}, False),
    ("group_unarchive", {"user": "U2", "text": "<@U2> un-archived the group"}, False),
    (
        "ekm_access_denied",
        {"user": "U00", "text": "Your admins have suspended everyone's access to this content."},
        False,
    ),
    ("pinned_item", {"user": "U2", "text": f"<@U2> pinned a message: {ARXIV}", "item_type": "C", "item": {}}, False),
    ("unpinned_item", {"user": "U2", "text": "<@U2> unpinned a message", "item_type": "C", "item": {}}, False),
    ("reminder_add", {"user": "U2", "text": f"set up a reminder “read {ARXIV}”"}, False),
    ("bot_add", {"user": "U2", "bot_id": "B1", "text": "added an integration"}, False),
    ("bot_remove", {"user": "U2", "bot_id": "B1", "text": "removed an integration"}, False),
    (
        "message_replied",
        {
            "hidden": True,
            "message": {"type": "message", "user": "U2", "text": ARXIV, "thread_ts": TS, "reply_count": 1, "ts": TS},
        },
        False,
    ),
    ("message_deleted", {"hidden": True, "deleted_ts": "1690000000.000100"}, False),
    ("assistant_app_thread", {"user": "U2", "text": ARXIV, "assistant_app_thread": {"title": "x"}}, False),
]


@pytest.mark.parametrize(("subtype", "fields", "stored"), SUBTYPES, ids=[s[0] for s in SUBTYPES])
def test_every_documented_message_subtype(
    harness: Harness, db: Database, caplog: pytest.LogCaptureFixture, subtype: str, fields: dict[str, Any], stored: bool
) -> None:
    caplog.set_level(logging.ERROR)
    event = {"type": "message", "subtype": subtype, "channel": "C1", "ts": TS, "event_ts": TS, **fields}
    assert harness.event(event).status_code == 200
    assert count(db, "SELECT count(*) FROM message_papers") == (1 if stored else 0)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == [], "handled without an error"


def test_a_renamed_channel_is_called_by_its_new_name(harness: Harness, db: Database) -> None:
    # PaperPing read the name once, on first sight; Slack says in the channel when it is renamed
    harness.event({"type": "message", "channel": "C1", "user": "U2", "text": ARXIV, "ts": TS, "event_ts": TS})
    assert count(db, "SELECT count(*) FROM channels WHERE channel_id = 'C1' AND name = 'nlp-lab'") == 1
    harness.standin.state.channels["C1"]["name"] = "nlp-reading"
    renamed = {"type": "message", "subtype": "channel_name", "channel": "C1", "user": "U2", "old_name": "nlp-lab"}
    harness.event({**renamed, "name": "nlp-reading", "ts": "1700000001.000100", "event_ts": "1700000001.000100"})
    assert count(db, "SELECT count(*) FROM channels WHERE channel_id = 'C1' AND name = 'nlp-reading'") == 1
    # the name is Slack's as it is now: an older rename resent late, or a name the event makes up, changes nothing
    harness.event({**renamed, "old_name": "a", "name": "b", "ts": "1700000002.000100", "event_ts": "1700000002.1"})
    harness.event({**renamed, "name": "x" * 5000, "ts": "1700000003.000100", "event_ts": "1700000003.000100"})
    assert count(db, "SELECT count(*) FROM channels WHERE channel_id = 'C1' AND name = 'nlp-reading'") == 1
    # a channel Slack does not know, or PaperPing never stored, is not made
    harness.event({**renamed, "channel": "C9", "name": "other", "ts": "1700000004.000100"})
    assert count(db, "SELECT count(*) FROM channels WHERE channel_id = 'C9'") == 0


def test_uninstalling_stops_the_workspace_and_keeps_its_data_until_purged(
    harness: Harness, db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bot.cli import main

    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    share_with_reply(harness)
    harness.ctx.channels.activate("T0LAB", "C1")
    with db.connection() as conn:
        storage.installs.upsert_installation(
            conn,
            {
                "team_id": "T0LAB",
                "team_name": "lab",
                "bot_token": "xoxb-old",
                "bot_user_id": "UBOT",
                "bot_id": "B1",
                "installer_id": "U1",
                "scopes": "chat:write",
            },
        )
    harness.event({"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["UBOT"]}})
    with db.connection() as conn:
        settings = storage.settings.load_channel_settings(conn, "T0LAB", "C1")
        assert storage.installs.load_installation(conn, "T0LAB") is None, "the token is deleted"
    assert not settings.active and settings.next_post_at is None, "no longer scheduled"
    assert count(db, "SELECT count(*) FROM messages") == 2, "kept until purged"
    assert main(["purge", "--team", "T0LAB"]) == 2, "asks for --yes first"
    assert count(db, "SELECT count(*) FROM messages") == 2
    assert main(["purge", "--team", "T0LAB", "--yes"]) == 0
    assert count(db, "SELECT count(*) FROM messages") == 0 and count(db, "SELECT count(*) FROM channels") == 0
    assert count(db, "SELECT count(*) FROM members") == 0


def test_being_removed_from_a_channel_stops_it(harness: Harness, db: Database) -> None:
    harness.event(message_event(ROOT, "hello"))  # PaperPing sees the channel
    harness.ctx.channels.activate("T0LAB", "C1")
    harness.event({"type": "member_left_channel", "user": "U3", "channel": "C1", "channel_type": "C", "team": "T0LAB"})
    with db.connection() as conn:
        assert storage.settings.load_channel_settings(conn, "T0LAB", "C1").active, (
            "another member leaving does not stop it"
        )
    assert count(db, "SELECT count(*) FROM channel_members WHERE user_id = 'U3'") == 0, "U3 is no longer a member"
    assert count(db, "SELECT count(*) FROM channel_members WHERE user_id = 'U2'") == 1
    harness.event({"type": "channel_left", "channel": "C1", "actor_id": "U1", "event_ts": "1.0"})
    with db.connection() as conn:
        assert not storage.settings.load_channel_settings(conn, "T0LAB", "C1").active


def test_a_backfill_cut_short_by_a_restart_is_finished(harness: Harness, db: Database) -> None:
    """Joining notes the backfill before it starts; a process started later finishes what is left."""
    from slack_sdk import WebClient

    from bot.slack.backfill import SOURCE

    harness.standin.state.messages["C1"] = [{"type": "message", "user": "U1", "ts": "1700000100.000000", "text": ARXIV}]
    harness.event(message_event(ROOT, "hello"))  # PaperPing sees the channel
    harness.ctx.channels.activate("T0LAB", "C1")
    harness.ctx.channels.queue_backfill("T0LAB", "C1")  # what joining does before reading; then the process is killed
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    threads = harness.ctx.channels.resume_backfills(lambda team: client)  # the next process
    assert len(threads) == 1
    threads[0].join(timeout=30)
    assert count(db, "SELECT count(*) FROM message_papers") == 1
    with db.connection() as conn:
        assert storage.checkpoints.load_checkpoint(conn, "T0LAB", "C1", SOURCE).completed_at is not None  # type: ignore[union-attr]
    assert harness.ctx.channels.resume_backfills(lambda team: client) == [], "nothing left to finish"


def test_forget_me_is_durable_until_lifted(harness: Harness, db: Database, tmp_path: Path) -> None:
    """After forget-me, neither live events nor a re-import nor a backfill bring the member back; their id and
    name leave stored drafts, LLM logs and checkpoints; `remember-me` lifts it."""
    from slack_sdk import WebClient

    from bot.slack.backfill import SOURCE, backfill_channel
    from bot.slack.pacer import HistoryPacer
    from bot.slack.workspace_export import import_export
    from tests.support.exports import msg, user, write_export

    harness.event(message_event(ROOT, f"mine {ARXIV}", user="U2"))
    with db.connection() as conn:
        conn.execute(
            """INSERT INTO recommendations (team_id, channel_id, slot_key, status, style, draft)
               VALUES ('T0LAB', 'C1', 's1', 'posted', 'template',
                       '{"mentions": ["U2"], "named": {"U2": "ben"}, "explanation": "For {@U2}."}')"""
        )
        conn.execute(
            "INSERT INTO llm_calls (team_id, channel_id, prompt_name, prompt_version, prompt_hash, model,"
            " latency_ms, outcome, output) VALUES ('T0LAB', 'C1', 'member', 2, 'h', 'm', 1, 'ok', 'For {@U2}.')"
        )
        storage.checkpoints.record_checkpoint(
            conn, "T0LAB", "C1", SOURCE, None, {"phase": "threads", "threads": [], "users": ["U1", "U2"]}
        )
    assert "deleted 1 stored messages" in harness.command("forget-me confirm", user="U2")
    with db.connection() as conn:
        draft = conn.execute("SELECT draft::text FROM recommendations").fetchone()[0]
        output = conn.execute("SELECT output FROM llm_calls").fetchone()[0]
        state = storage.checkpoints.load_checkpoint(conn, "T0LAB", "C1", SOURCE).state  # type: ignore[union-attr]
    assert "U2" not in draft and "ben" not in draft and output is None and state["users"] == ["U1"]

    harness.event(message_event("1700000010.000100", f"again {ARXIV}", user="U2"))  # live
    harness.event(
        {
            "type": "reaction_added",
            "user": "U2",
            "reaction": "+1",
            "event_ts": "1700000011.000100",
            "item": {"type": "message", "channel": "C1", "ts": "1700000012.000100"},
        }
    )
    export = write_export(
        tmp_path / "again.zip",
        {
            "nlp-lab": (
                "C1",
                ["U1", "U2"],
                [
                    msg(1700000020, "U2", f"from the export {ARXIV}"),
                    msg(1700000021, "U1", f"ok {ARXIV}", reactions=[{"name": "+1", "users": ["U2", "U3"], "count": 2}]),
                ],
            )
        },
        [user("U1", "graham"), user("U2", "ben")],
    )
    import_export(db, export, progress=False)  # a re-import
    harness.standin.state.messages["C1"] = [
        {"type": "message", "user": "U2", "ts": "1700000030.000000", "text": f"from history {ARXIV}"}
    ]
    backfill_channel(
        db,
        WebClient(token="x", base_url=harness.standin.url),
        "C1",
        pacer=HistoryPacer(sleep=lambda s: None),
        restart=True,
    )  # a backfill
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'U2'") == 0
    assert count(db, "SELECT count(*) FROM reactions WHERE user_id = 'U2'") == 0
    assert count(db, "SELECT count(*) FROM reactions WHERE user_id = 'U3'") == 1, "others' reactions are kept"
    assert count(db, "SELECT count(*) FROM members WHERE user_id = 'U2'") == 0
    assert count(db, "SELECT count(*) FROM channel_members WHERE user_id = 'U2'") == 0

    assert "counts again" in harness.command("remember-me", user="U2")
    harness.event(message_event("1700000040.000100", f"back {ARXIV}", user="U2"))
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'U2'") == 1


def test_a_purge_takes_the_identifiers_of_papers_only_that_workspace_knew(
    harness: Harness, db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A paper no source knows has no record but the workspace's own: its identifier (here a DOI of the lab's own
    unpublished report, given as the channel's focus, never in a message) goes with a purge of that workspace.
    Before, only papers its messages linked went; this one stayed."""
    from bot.cli import main

    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    harness.event(message_event(ROOT, "our reading " + ARXIV))
    harness.ctx.channels.activate("T0LAB", "C1")
    answer = harness.command("focus https://doi.org/10.5555/lab-internal.2026.7", user="U1")
    assert answer.startswith("Done: the next recommendations lean toward that"), answer
    assert count(db, "SELECT count(*) FROM paper_ids WHERE value = '10.5555/lab-internal.2026.7'") == 1
    assert main(["purge", "--team", "T0LAB", "--yes"]) == 0
    assert count(db, "SELECT count(*) FROM paper_ids WHERE value = '10.5555/lab-internal.2026.7'") == 0
    assert count(db, "SELECT count(*) FROM papers") == 0, "nothing of the workspace's own is left"


def test_a_purge_after_forget_me_leaves_no_identity_the_forgotten_member_brought(
    harness: Harness, db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A member shared the only link to a paper, then asked `forget-me`: their message went, and the paper's
    identity was left behind, referred to by nothing, so that a purge of the workspace could no longer find it.
    The paper goes with the member now, and the purge leaves nothing."""
    from bot.cli import main

    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    mine = "https://doi.org/10.5555/ben-draft.2026.3"
    harness.event(message_event(ROOT, "our reading " + ARXIV, user="U1"))
    harness.event(message_event("1700000500.000100", f"my draft, comments welcome <{mine}>", user="U2"))
    assert count(db, "SELECT count(*) FROM paper_ids WHERE value = '10.5555/ben-draft.2026.3'") == 1
    assert "confirm" in harness.command("forget-me", user="U2")
    assert "deleted 1 stored messages" in harness.command("forget-me confirm", user="U2")
    assert count(db, "SELECT count(*) FROM paper_ids WHERE value = '10.5555/ben-draft.2026.3'") == 0
    assert count(db, "SELECT count(*) FROM paper_ids WHERE scheme = 'arxiv'") == 1, "U1's share keeps its paper"
    assert main(["purge", "--team", "T0LAB", "--yes"]) == 0
    assert count(db, "SELECT count(*) FROM papers") == 0, "nothing of the workspace's own is left"
