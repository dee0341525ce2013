"""The buttons on PaperPing's posts, through the real bolt app (over HTTP and over Socket Mode) and slack_sdk
against the Slack stand-in: a click is stored like a reaction of that member on that post, a second click
undoes it, a resent click changes nothing, the counts on the post follow (chat.update), and the ranking and
the refit read the clicks."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import READING_LIST_EMOJI
from socialrag.models import Draft, PaperMeta
from socialrag.recommender.rank.engagement import ScoringConfig, channel_weights
from socialrag.recommender.retrieve.context import load_channel_context
from tests.support.harness import Harness, T, count
from tests.support.slots import slot_worker

NOW = datetime.now(UTC).replace(microsecond=0)


def post_one(harness: Harness, db: Database) -> dict[str, Any]:
    """PaperPing posts one paper in #nlp-lab the way the scheduler does; returns the message as Slack shows it."""
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1", NOW)
    with db.connection() as conn:
        pid = storage.papers.ensure_papers(conn, [("arxiv", "1706.03762")])[("arxiv", "1706.03762")]
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=NOW)
    paper = PaperMeta(
        pid,
        "Attention Is All You Need",
        "https://arxiv.org/abs/1706.03762",
        ("A. Vaswani",),
        "NeurIPS",
        2017,
        None,
        {"arxiv": "1706.03762"},
    )
    draft = Draft(T, "C1", paper, "template", "It proposes the Transformer.", ())
    worker = slot_worker(db, lambda team: client, lambda *a: draft, clock=lambda: NOW)
    assert worker.tick() == 1
    (post,) = harness.standin.posts
    return post


def click(
    harness: Harness, post: dict[str, Any], user: str, button: str, at: float, paper: int | None = None
) -> dict[str, Any]:
    """The block_actions payload Slack sends for a click on a message's button (one paper's, in a digest)."""
    payload = {
        "type": "block_actions",
        "team": {"id": T, "domain": "lab"},
        "user": {"id": user, "team_id": T},
        "api_app_id": "A1",
        "token": "x",
        "container": {"type": "message", "message_ts": post["ts"], "channel_id": "C1", "is_ephemeral": False},
        "trigger_id": "1.2.3",
        "channel": {"id": "C1", "name": "nlp-lab"},
        "message": {k: post[k] for k in ("type", "user", "ts", "text", "blocks")},
        "response_url": harness.standin.response_url,
        "actions": [
            {
                "action_id": f"feedback_{button}",
                "block_id": "paperping_feedback" if paper is None else f"paperping_feedback:{paper}",
                "value": button if paper is None else f"{button}:{paper}",
                "type": "button",
                "action_ts": f"{at:.6f}",
                "text": {"type": "plain_text", "text": button},
            }
        ],
    }
    return payload


def send(harness: Harness, payload: dict[str, Any], *, answered: bool = True) -> float:
    """Send a click; Slack has its answer at once, and the click is handled after it: wait (when ``answered``)
    until it shows, as a ``chat.update`` of the post or a private answer. Returns the seconds Slack waited."""
    updates, answers = len(harness.standin.calls_to("chat.update")), len(harness.standin.responses)
    saving = payload["actions"][0]["action_id"] == "feedback_save"  # its private answer comes after the update

    def shown() -> bool:
        answer = len(harness.standin.responses) > answers
        return answer if saving else answer or len(harness.standin.calls_to("chat.update")) > updates

    started = time.monotonic()
    response = harness.signed(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    waited = time.monotonic() - started
    assert response.status_code == 200
    for _ in range(200 if answered else 10):
        if shown():
            break
        time.sleep(0.05)
    else:
        assert not answered, "the click showed neither an update of the post nor an answer"
    return waited


def labels(harness: Harness) -> list[str]:
    shown = harness.standin.state.messages["C1"][-1]["blocks"][-1]
    return [e["text"]["text"] for e in shown["elements"]]


def test_each_button_click_is_stored_counted_on_the_post_and_undone_by_a_second_click(
    harness: Harness, db: Database
) -> None:
    post = post_one(harness, db)
    assert [e["action_id"] for e in post["blocks"][-1]["elements"]] == [
        "feedback_relevant",
        "feedback_not_for_us",
        "feedback_save",
    ]
    t0 = NOW.timestamp() + 60
    first = click(harness, post, "U2", "relevant", t0)
    send(harness, first)
    assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:relevant' AND user_id = 'U2'") == 1
    assert labels(harness) == ["Relevant · 1", "Not for us", "Save"]
    assert harness.standin.updates[-1]["ts"] == post["ts"]
    # Slack delivers the same click twice: nothing changes
    send(harness, first, answered=False)
    assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:relevant'") == 1
    assert len(harness.standin.updates) == 1
    # the ranking reads the click like a positive reaction
    with db.connection() as conn:
        ctx = load_channel_context(conn, T, "C1", NOW + timedelta(days=1), "all-MiniLM-L6-v2")
    pid = post["metadata"]["event_payload"]["paper_id"]
    assert channel_weights(ctx.papers, NOW + timedelta(days=1), ScoringConfig(), ctx.emoji_overrides)[pid] > 0
    # a second click of the same member undoes the first
    send(harness, click(harness, post, "U2", "relevant", t0 + 5))
    assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:relevant'") == 0
    assert labels(harness) == ["Relevant", "Not for us", "Save"]
    # the channel's ranking was refitted after that; two hours later two members find the post not for us:
    # the post shows it, the ranking reads it as received badly, and the channel is due for a refit again
    later = NOW + timedelta(hours=2)
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO channel_rankers (team_id, channel_id, fitted_at, model, shares, pairs)"
            " VALUES (%s, 'C1', %s, '{}', 1, 1)",
            (T, NOW + timedelta(minutes=10)),
        )
        assert (T, "C1") not in storage.rankers.channels_to_refit(conn, later - timedelta(minutes=1))
    send(harness, click(harness, post, "U3", "not_for_us", later.timestamp()))
    send(harness, click(harness, post, "U4", "not_for_us", later.timestamp() + 1))
    assert labels(harness) == ["Relevant", "Not for us · 2", "Save"]
    with db.connection() as conn:
        ctx = load_channel_context(conn, T, "C1", NOW + timedelta(days=1), "all-MiniLM-L6-v2")
        assert (T, "C1") in storage.rankers.channels_to_refit(conn, later + timedelta(minutes=1))
    assert channel_weights(ctx.papers, NOW + timedelta(days=1), ScoringConfig(), ctx.emoji_overrides)[pid] < 0
    # save: on the channel's reading list, confirmed privately to the member who clicked
    send(harness, click(harness, post, "U3", "save", later.timestamp() + 20))
    assert labels(harness) == ["Relevant", "Not for us · 2", "Save · 1"]
    assert "Saved to this channel's reading list" in harness.standin.responses[-1]["text"]
    assert harness.standin.responses[-1].get("response_type") == "ephemeral"
    with db.connection() as conn:
        saved, total = storage.reading_list.load_reading_list(conn, T, "C1", READING_LIST_EMOJI, limit=10)
    assert total == 1 and saved[0].paper_id == pid and saved[0].savers == ("U3",)
    # the post's own text is rendered again from its stored draft, not from what the click carried
    assert "Attention Is All You Need" in json.dumps(harness.standin.state.messages["C1"][-1]["blocks"])


def test_a_click_on_a_deleted_post_is_not_counted_and_the_member_is_told(harness: Harness, db: Database) -> None:
    post = post_one(harness, db)
    harness.event(
        {"type": "message", "subtype": "message_deleted", "channel": "C1", "deleted_ts": post["ts"], "ts": "1.0"}
    )
    send(harness, click(harness, post, "U2", "relevant", NOW.timestamp() + 60))
    assert count(db, "SELECT count(*) FROM reactions") == 0
    assert "no longer kept" in harness.standin.responses[-1]["text"]


def test_a_click_in_a_channel_paperping_left_is_not_counted_and_the_member_is_told(
    harness: Harness, db: Database
) -> None:
    """PaperPing was removed from the channel (or left it, or the channel was archived); a member clicks a
    button on one of its old posts there. The click used to be stored as that channel's feedback (and saves put
    on a reading list nobody is served any more). Now nothing is stored, the post is left as it is, and the
    member is told privately why."""
    post = post_one(harness, db)
    harness.event({"type": "channel_left", "channel": "C1", "event_ts": "5.0"})
    updates = len(harness.standin.calls_to("chat.update"))
    for button in ("relevant", "save"):
        send(harness, click(harness, post, "U2", button, NOW.timestamp() + 60))
        assert count(db, "SELECT count(*) FROM reactions") == 0, f"a {button} click was stored"
        assert "no longer in this channel" in harness.standin.responses[-1]["text"]
        assert harness.standin.responses[-1].get("response_type") == "ephemeral"
    assert len(harness.standin.calls_to("chat.update")) == updates


def test_a_click_over_socket_mode(db: Database, tmp_path: Path) -> None:
    from tests.support.harness import lab_state, socket_mode_app
    from tests.support.slack_standin import SlackStandIn

    standin = SlackStandIn(lab_state()).start()
    harness = Harness(db, standin, tmp_path)  # only to post the paper; the click goes over the socket
    try:
        post = post_one(harness, db)
        with socket_mode_app(db, standin, tmp_path) as sockets:
            click_payload = click(harness, post, "U2", "save", NOW.timestamp() + 60)
            envelope = sockets.send_event(click_payload, kind="interactive")
            for _ in range(400):  # the listener runs after the envelope is acknowledged
                if standin.updates and count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:save'") == 1:
                    break
                time.sleep(0.05)
            assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:save'") == 1
            assert labels(harness) == ["Relevant", "Not for us", "Save · 1"]
            assert any(a.get("envelope_id") == envelope for a in sockets.acks)
    finally:
        harness.stop()
        standin.stop()


def test_a_click_is_answered_at_once_while_slack_answers_429_to_the_update(harness: Harness, db: Database) -> None:
    """The click was acknowledged only after chat.update returned: with Slack answering 429, the member's click
    timed out. Slack now has its answer at once; the click is stored and the post updated after the waits."""
    post = post_one(harness, db)
    harness.standin.rate_limits["chat.update"] = 3
    harness.standin.retry_after = 2
    waited = send(harness, click(harness, post, "U2", "relevant", NOW.timestamp() + 60), answered=False)
    assert waited < 1.0, f"Slack waited {waited:.2f} s for its answer"
    for _ in range(200):
        if harness.standin.updates:
            break
        time.sleep(0.05)
    assert harness.standin.updates and labels(harness) == ["Relevant · 1", "Not for us", "Save"]
    assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:relevant'") == 1
    print(f"click acknowledged in {waited * 1000:.0f} ms while chat.update answered 429 three times")


def test_only_paperpings_posts_count_clicks_and_what_is_shown_comes_from_what_it_stored(
    harness: Harness, db: Database
) -> None:
    """A click was counted on any stored message (a member's own share included), and a post whose draft was not
    stored was rebuilt from the payload's blocks, which the sender of the request writes."""
    from tests.support.harness import message_event

    post = post_one(harness, db)
    share_ts = "1700000050.000100"
    harness.event(message_event(share_ts, "read <https://arxiv.org/abs/2005.14165|this>", user="U2"))
    own = {**post, "ts": share_ts, "user": "U2"}
    send(harness, click(harness, own, "U3", "relevant", NOW.timestamp() + 61))
    assert "Only PaperPing's own posts count these buttons" in harness.standin.responses[-1]["text"]
    assert count(db, "SELECT count(*) FROM reactions WHERE starts_with(emoji, 'button:')") == 0
    # a payload whose message says something else: the update shows what PaperPing stored, not the payload
    forged = {**post, "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "<!channel> free money"}}]}
    send(harness, click(harness, forged, "U3", "relevant", NOW.timestamp() + 62))
    shown = json.dumps(harness.standin.updates[-1])
    assert "free money" not in shown and "<!channel>" not in shown and "Attention Is All You Need" in shown


def test_a_forgotten_member_is_told_that_nothing_is_stored_and_remember_me_restores_their_channels(
    harness: Harness, db: Database
) -> None:
    """A forgotten member's Save click and `/paperping save` answered "Saved" though nothing was stored; the rows
    of context replies to their shares kept their messages' ts; `remember-me` left them out of every channel, so
    their picks and App Home showed nothing."""
    from tests.support.harness import message_event

    post = post_one(harness, db)
    share_ts = "1700000060.000100"
    harness.event(message_event(share_ts, "read <https://arxiv.org/abs/2005.14165|this>", user="U3"))
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO share_replies (team_id, channel_id, message_ts, status) VALUES (%s, 'C1', %s, 'silent')",
            (T, share_ts),
        )
    assert "Done: I deleted" in harness.command("forget-me confirm", user="U3")
    assert count(db, "SELECT count(*) FROM share_replies WHERE message_ts = %s", share_ts) == 0
    said = harness.command("save https://arxiv.org/abs/2005.14165", user="U3")
    assert said.startswith("Nothing was saved: you asked me to forget you"), said
    send(harness, click(harness, post, "U3", "save", NOW.timestamp() + 70))
    assert harness.standin.responses[-1]["text"].startswith("Nothing was stored: you asked me to forget you")
    assert count(db, "SELECT count(*) FROM saved_papers") == 0
    assert count(db, "SELECT count(*) FROM reactions WHERE user_id = 'U3'") == 0
    assert count(db, "SELECT count(*) FROM channel_members WHERE user_id = 'U3'") == 0
    assert "counts again" in harness.command("remember-me", user="U3")
    assert count(db, "SELECT count(*) FROM channel_members WHERE user_id = 'U3' AND channel_id = 'C1'") == 1
    # forgetting and coming back again within the hour lifts the forgetting, and reads the lists no more
    read = len(harness.standin.calls_to("conversations.members"))
    assert "Done: I deleted" in harness.command("forget-me confirm", user="U3")
    again = harness.command("remember-me", user="U3")
    assert "counts again" in again and "as I read their member lists" in again, again
    assert len(harness.standin.calls_to("conversations.members")) == read
    with db.connection() as conn:
        assert not storage.privacy.is_forgotten(conn, [T], "U3")


def test_slacks_edit_event_for_a_post_paperping_updated_leaves_the_post_in_the_base(
    harness: Harness, db: Database
) -> None:
    """PaperPing updates its post's counts (chat.update), and Slack tells the app of that edit like any other
    (message_changed). The post's paper has an address no link reader knows (a publisher's page), so the edited
    text shows no paper: the post must stay PaperPing's post of its paper, with its reactions, not be taken for a
    share a member edited out (which would mark it deleted and drop its feedback)."""
    from tests.slack.test_event_shapes import changed

    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1", NOW)
    with db.connection() as conn:
        pid = storage.papers.ensure_papers(conn, [("doi", "10.1016/j.cell.2024.01.001")])[
            ("doi", "10.1016/j.cell.2024.01.001")
        ]
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=NOW)
    paper = PaperMeta(
        pid,
        "A cell paper",
        "https://lab.example.org/papers/42",
        (),
        "Cell",
        2024,
        None,
        {"doi": "10.1016/j.cell.2024.01.001"},
    )
    draft = Draft(T, "C1", paper, "template", "It maps a pathway.", ())
    assert slot_worker(db, lambda team: client, lambda *a: draft, clock=lambda: NOW).tick() == 1
    (post,) = harness.standin.posts
    send(harness, click(harness, post, "U2", "relevant", NOW.timestamp() + 60))
    updated = harness.standin.updates[-1]
    inner = {k: updated[k] for k in ("type", "user", "bot_id", "ts", "text", "blocks", "edited") if k in updated}
    harness.event(changed(inner, f"{NOW.timestamp() + 61:.6f}", before=post["text"]))
    with db.connection() as conn:
        kept = conn.execute(
            "SELECT count(*) FROM message_papers mp JOIN messages m ON m.id = mp.message_id WHERE m.ts = %s",
            (post["ts"],),
        ).fetchone()
        deleted = conn.execute("SELECT deleted_at FROM recommendations WHERE message_ts = %s", (post["ts"],)).fetchone()
    assert kept == (1,), "the post is still stored as PaperPing's post of its paper"
    assert deleted == (None,), "and not taken for deleted"
    assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:relevant'") == 1
