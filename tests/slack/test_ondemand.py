"""Papers on demand through the real bolt app and slack_sdk against the Slack stand-in: `/paperping like` by
link and by words, and the "Papers like this" message shortcut; answered privately, from the channel's own
candidates and history, and nothing of it stored as the channel's feedback."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from socialrag.db import Database
from socialrag.recommender import Recommender
from tests.support.harness import Harness, T, count
from tests.support.labbase import CachedEmbedder, build_lab


def stored(db: Database) -> tuple[int, int, int]:
    return (
        count(db, "SELECT count(*) FROM messages"),
        count(db, "SELECT count(*) FROM reactions"),
        count(db, "SELECT count(*) FROM recommendations"),
    )


def shortcut_payload(harness: Harness, channel: str, text: str) -> dict[str, Any]:
    """The message_action payload Slack sends when U3 uses *Papers like this* on U2's message in ``channel``."""
    return {
        "type": "message_action",
        "callback_id": "papers_like_this",
        "team": {"id": T, "domain": "lab"},
        "user": {"id": "U3", "team_id": T},
        "channel": {"id": channel, "name": channel},
        "message": {"type": "message", "user": "U2", "ts": "1700000001.000100", "text": text},
        "response_url": harness.standin.response_url,
        "trigger_id": "1.2",
        "token": "x",
        "message_ts": "1700000001.000100",
    }


def test_papers_like_a_link_words_or_a_message(harness: Harness, db: Database, tmp_path: Path) -> None:
    lab = build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")  # PaperPing was invited to the lab's channel
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    before = stored(db)
    with db.connection() as conn:
        shared = {r[0] for r in conn.execute("SELECT url FROM message_papers").fetchall()}
    answer = harness.command("like neural machine translation with attention")
    lines = [line for line in answer.splitlines() if line.startswith("• ")]
    assert "only you see this" in answer and len(lines) == 5
    linked = re.findall(r"<(https://aclanthology\.org/[^|>]+)\|", "\n".join(lines))
    assert linked and not {u.rstrip("/") for u in linked} & {u.rstrip("/") for u in shared}, "nothing already shared"
    assert "closest to <https://lab.slack.com/archives/C1/p" in answer, "each with the earlier thread it is near"
    assert harness.standin.responses[-1].get("response_type") == "ephemeral"
    # by link: a paper the channel shared; what comes back is close to it, not it
    first = lab["others"][0]
    by_link = harness.command(f"like https://aclanthology.org/{first}/", user="U4")  # U2 waits 30 s to ask again
    assert by_link.count("\n• ") == 5 and f"aclanthology.org/{first}|" not in by_link
    assert "Try `/paperping like" in harness.command("like")
    # the message shortcut on a message sharing a paper
    payload = shortcut_payload(harness, "C1", f"look <https://aclanthology.org/{first}/|this>")
    n = len(harness.standin.responses)
    response = harness.signed(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    assert response.status_code == 200
    for _ in range(200):
        if len(harness.standin.responses) > n:
            break
        time.sleep(0.05)
    shortcut = harness.standin.responses[-1]
    assert "Papers like that" in shortcut["text"] and shortcut.get("response_type") == "ephemeral"
    # a message with no paper link: said so
    payload["message"]["text"] = "lunch at noon?"
    harness.signed(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    for _ in range(100):
        if "shares no paper link" in harness.standin.responses[-1]["text"]:
            break
        time.sleep(0.05)
    assert "shares no paper link" in harness.standin.responses[-1]["text"]
    # nothing of the questions or the answers is the channel's feedback
    assert stored(db) == before
    assert not harness.standin.posts, "nothing was posted in the channel"


def test_nothing_of_a_channel_paperping_is_not_in_is_shown_by_the_shortcut_or_like(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """The shortcut answered from the stored history of a channel PaperPing had left, and searched online for
    DMs and channels it was never in; `/paperping like` checked, the shortcut did not. One rule now."""
    lab = build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    first = lab["others"][0]

    def shortcut(channel: str) -> str:
        payload = shortcut_payload(harness, channel, f"look <https://aclanthology.org/{first}/|this>")
        n = len(harness.standin.responses)
        harness.signed(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        for _ in range(200):
            if len(harness.standin.responses) > n:
                return str(harness.standin.responses[-1]["text"])
            time.sleep(0.05)
        raise AssertionError("no answer to the shortcut")

    assert "Papers like that" in shortcut("C1"), "in a channel PaperPing is in, it answers"
    # each answer ranks the channel's candidates: a member asks once every 30 seconds, the shortcut and `like` alike
    assert "You asked for papers like this a moment ago; ask again from" in shortcut("C1")
    assert "ask again from" in harness.command("like neural machine translation", user="U3")
    with db.connection() as conn:
        conn.execute("UPDATE member_cooldowns SET until = until - interval '1 minute'")
    # PaperPing is removed from the channel: its stored history is shown to nobody
    harness.event({"type": "channel_left", "channel": "C1", "event_ts": "5.0"})
    harness.standin.state.channels["C1"]["members"] = ["U1", "U2", "U3", "U4"]
    left = shortcut("C1")
    assert "I'm not in this channel" in left and "Papers like that" not in left and "aclanthology" not in left
    assert "I'm not in this channel" in harness.command("like neural machine translation")
    # a DM, and a channel it was never in: nothing searched
    harness.standin.state.channels["C9"] = {"id": "C9", "name": "elsewhere", "members": ["U3"]}
    assert "I'm not in this channel" in shortcut("D123")
    assert "I'm not in this channel" in shortcut("C9")


def test_start_over_waits_out_the_cooldown_now_has(harness: Harness, db: Database, tmp_path: Path) -> None:
    """`start-over` opens a post now, as `now` does, and so obeys the same bound: a second one while the first's
    post is under way opens nothing more, and one right after that post is refused until ten minutes have passed,
    as `now` is."""
    from datetime import UTC, datetime, timedelta

    from socialrag import storage

    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    assert harness.command("start-over").startswith("Done: five papers to rate")
    assert "already on its way" in harness.command("start-over", user="U3")
    with db.connection() as conn:  # the slot posts the five papers
        now = datetime.now(UTC)
        storage.posts.schedule_next(conn, T, "C1", now + timedelta(days=1), posted_at=now)
    again = harness.command("start-over", user="U3")
    assert "`/paperping start-over` works again from" in again, again
    assert "`/paperping now` works again from" in harness.command("now", user="U3")
    announced = [p for p in harness.standin.posts if "start over" in p.get("text", "")]
    assert len(announced) == 1, "only the start-over that opened a post was announced"


def test_papers_like_name_no_member_who_left_the_channel(harness: Harness, db: Database, tmp_path: Path) -> None:
    """ben (U2) shared the threads the answer points to, then left the channel: each line still links its thread,
    without saying he shared it."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    harness.event({"type": "member_left_channel", "user": "U2", "channel": "C1", "team": T, "event_ts": "2.0"})
    answer = harness.command("like weight poisoning attacks on pretrained language models", user="U3")
    assert "closest to <https://lab.slack.com/archives/C1/p" in answer, answer
    assert "<@U2>" not in answer, answer


def test_a_member_repeating_the_shortcut_costs_slack_one_check_a_cooldown(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """Each use of the shortcut asked Slack (conversations.info) whether PaperPing is in the channel before the
    member's cooldown was looked at: one member clicking it again and again spent the workspace's share of that
    method, which every channel's checks need. Slack is asked once a cooldown now; a DM or a channel PaperPing left
    is still answered that PaperPing is not there."""
    from slack_sdk import WebClient

    harness.ctx.slack.ensure_channel(WebClient(token="xoxb-test", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    payload = shortcut_payload(harness, "C1", "look <https://arxiv.org/abs/1706.03762|this>")

    def use(shortcut: dict[str, Any]) -> str:
        n = len(harness.standin.responses)
        harness.signed(urlencode({"payload": json.dumps(shortcut)}), "application/x-www-form-urlencoded")
        for _ in range(200):
            if len(harness.standin.responses) > n:
                break
            time.sleep(0.05)
        return str(harness.standin.responses[-1]["text"])

    before = len(harness.standin.calls_to("conversations.info"))
    answers = [use(payload) for _ in range(6)]
    assert all("ask again from" in a for a in answers[1:]), answers
    assert len(harness.standin.calls_to("conversations.info")) - before == 1
    # in a DM: not here, and the member's cooldown is not what says so
    dm = shortcut_payload(harness, "D123", "look <https://arxiv.org/abs/1706.03762|this>")
    assert "I'm not in this channel" in use(dm)
