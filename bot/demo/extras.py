"""More of what the demo's lab sees: the context reply on a paper a member shares (`/paperping context on`), the
weekly digest the lab would get with `/paperping frequency weekly-digest 5`, its reading list (`/paperping list`),
its top list (`/paperping top month`), a follow-up in the thread of a paper it discussed, the profile members
can check and steer (`/paperping profile`), and a member's question about what the lab read (`/paperping ask`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from bot.delivery.agent_answers import feedback_blocks, searched, sources
from bot.demo.outputs import BOT, TEAM
from bot.views.follow_up_text import render_follow_up
from bot.views.memory_text import render_answer
from bot.views.post_blocks import build_digest_blocks, build_fallback_text, clip, escape, mrkdwn
from bot.views.replies import context_blocks
from bot.views.top_list import render_top_list
from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import READING_LIST_EMOJI, check_follow_ups, index_messages, record_own_post
from socialrag.models import Digest, Draft, Message, PaperRef, draft_json
from socialrag.recommender import (
    ChannelProfile,
    Coverage,
    FollowUpNote,
    MemoryAnswer,
    Recommendation,
    Recommender,
    ask_memory,
    send_follow_ups,
    share_context,
)
from socialrag.report import load_top_list

SHARER = "U06FARID"
Say = Callable[[str], None]
Render = Callable[[str], str]


def share_at(at: datetime) -> str:
    return f"{at.timestamp():.6f}"


def forget_share(db: Database, team: str, channel: str, at: datetime) -> None:
    """The member's share of an earlier demo run, so that every run tells the same story."""
    with db.connection() as conn:
        storage.messages.delete_thread(conn, team, channel, share_at(at))


def show_context_reply(
    db: Database,
    recommender: Recommender,
    rec: Recommendation,
    team: str,
    channel: str,
    at: datetime,
    say: Say,
    render: Render,
) -> list[dict[str, Any]] | None:
    """A member shares a paper the ranking liked but PaperPing did not post; the reply it gets in its thread.
    Returns the reply's blocks (None: nothing grounded to say, and PaperPing stays silent, as the demo says)."""
    pick = next((c for c in rec.candidates[1:] if c.ids), None)
    if pick is None:
        return None
    scheme, value = storage.papers.best_identity(pick.ids) or ("", "")
    url = f"https://aclanthology.org/{value}/" if scheme == "acl" else ""
    message = Message(
        team, channel, share_at(at), SHARER, f"<{url}>", at, papers=(PaperRef(scheme, value, url, pick.title),)
    )
    with db.connection() as conn:
        index_messages(conn, [message])
        found = share_context(conn, recommender.embedder.model_name, team, channel, message.ts)
    say(f"\n── Context on a share (`/paperping context on`) · {at:%a %d %b} " + "─" * 10)
    say(f"  @farid shares {pick.title}; PaperPing replies in its thread:")
    if isinstance(found, str):
        say(f"  (nothing: {found})")
        return None
    text, blocks = context_blocks(found)
    for line in text.splitlines():
        say("  ↳ " + render(line))
    return blocks


def show_digest(
    recommender: Recommender, team: str, channel: str, at: datetime, say: Say, render: Render
) -> Digest | None:
    """The week's digest of five papers, as it would be posted (nothing is recorded)."""
    digest = recommender.recommend_digest(team, channel, 5, at=at)
    say(f"\n── A weekly digest (`/paperping frequency weekly-digest 5`) · {at:%a %d %b} " + "─" * 6)
    if not isinstance(digest, Digest):
        say(f"  (no digest: {digest})")
        return None
    for block in build_digest_blocks(digest):
        if block["type"] == "actions":
            say("    " + " ".join(f"[ {e['text']['text']} ]" for e in block["elements"]))
        elif block["type"] == "section":
            for i, line in enumerate(block["text"]["text"].splitlines()):
                say(("  " if i == 0 else "    ") + render(line))
        else:
            say("    ↳ " + render(block["elements"][0]["text"]))
    return digest


def show_lists(db: Database, team: str, channel: str, at: datetime, saver: str, say: Say, render: Render) -> None:
    """The lab's reading list (newest save first) and its top list of the past month, as of ``at``."""
    with db.connection() as conn:
        saved, _ = storage.reading_list.load_reading_list(conn, team, channel, READING_LIST_EMOJI, limit=5)
        top = load_top_list(conn, team, channel, "month", at, limit=5)
    who = render(f"<@{saver}>")
    say(f"\n· The lab's reading list (`/paperping list`, newest first; {who} clicked Save on the first post):")
    for p in saved:
        say(f"    {p.title} — saved by {', '.join(render(f'<@{u}>') for u in p.savers)}")
    say("\n· The lab's top list (`/paperping top month`; only the member who asks sees it):")
    for line in render_top_list(top, limit=5).split("\n")[1:]:
        say("    " + render(line))


def show_follow_up(db: Database, team: str, channel: str, at: datetime, say: Say, render: Render) -> str | None:
    """What became of the papers the lab discussed, as `paperping run` would notice it (offline: from the catalog's
    reference lists) and say it in the paper's own thread; the first follow-up's text, or None."""
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, team, channel, active=True, follow_ups=True)
    check_follow_ups(db, [], at, timedelta(days=1), limit=200)
    with db.connection() as conn:
        threads = {t.ts: t for t in storage.follow_ups.load_shared_threads(conn, team, channel).values()}
    said: list[tuple[str, str]] = []

    def send(team_id: str, channel_id: str, thread_ts: str, note: FollowUpNote) -> str:
        said.append((thread_ts, render_follow_up(note)))
        return f"{thread_ts}-follow-up"

    send_follow_ups(db, send, at)
    if not said:
        return None
    thread = threads[said[0][0]]
    say(
        f"\n· A follow-up (`/paperping follow-ups`, on by default), in the thread of {thread.title} "
        f"(shared {thread.posted_at:%d %b}):"
    )
    say("    ↳ " + render(said[0][1]))
    return said[0][1]


def show_profile(recommender: Recommender, team: str, channel: str, at: datetime, say: Say) -> ChannelProfile:
    """The channel's main topics as `/paperping profile` shows them, each with its example threads' titles; the
    profile, for the member's own answer to `/paperping profile` (``outputs.private_pieces``)."""
    profile = recommender.profile(team, channel, at)
    say("\n· What PaperPing believes the lab reads (`/paperping profile`; `profile mute 2` or `boost 1` steer it):")
    for i, topic in enumerate(profile.topics, 1):
        examples = "; ".join(clip(title, 60) for title, _ in topic.examples)
        say(f"    {i}. {topic.label} ({len(topic.paper_ids)} papers), e.g. {examples}")
    return profile


def show_coverage(
    recommender: Recommender, team: str, channel: str, at: datetime, drafts: list[Draft], say: Say
) -> Coverage:
    """How much of the group the week's picks served: its topics (as of the first post) that got one, and its
    active members named as possibly interested."""
    coverage = recommender.coverage(team, channel, at, drafts)
    say(f"\n· Coverage of the week: {coverage.sentence(len(drafts))}.")
    return coverage


QUESTION = "What have we read about gender bias?"
TIME_QUESTION = "What did we read last week?"  # a time and no topic: that week's papers


def show_question(
    db: Database, recommender: Recommender, team: str, channel: str, channel_name: str, at: datetime,
    say: Say, render: Render,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """A member's question about the lab's history, as a mention of PaperPing in the channel would answer it
    (no LLM in the demo: the list); the answer's blocks for the demo's page, and the same answer as the Messages
    tab shows it once streamed (``agent_blocks``)."""
    embedder = recommender.embedder

    def encode(text: str) -> Any:
        return embedder.encode([text])[0]

    with db.connection() as conn:
        answer = ask_memory(conn, embedder.model_name, encode, team, [channel], SHARER, QUESTION, None, at)
        week = ask_memory(conn, embedder.model_name, encode, team, [channel], SHARER, TIME_QUESTION, None, at)
    text = render_answer(answer, {channel: channel_name})
    say(f"\n── A member asks, mentioning @PaperPing: “{QUESTION}” (`/paperping ask` too) " + "─" * 6)
    for line in text.splitlines():
        say("  " + render(line))
    say(f"  And “{TIME_QUESTION}”:")
    for line in render_answer(week, {channel: channel_name}).splitlines():
        say("  " + render(line))
    return [{"type": "section", "text": mrkdwn(text)}], agent_blocks(answer, text, {channel: channel_name})


def agent_blocks(answer: MemoryAnswer, text: str, scope: dict[str, str]) -> list[dict[str, Any]]:
    """A streamed answer in the Messages tab, for the demo's page: the search with its sources (Slack shows them as
    a task card), the answer, and the feedback buttons under it."""
    found = len(sources(answer))
    buttons = feedback_blocks(answer.channels[0] if answer.channels else None)[0]["elements"][0]
    labels = [buttons["positive_button"]["text"]["text"], buttons["negative_button"]["text"]["text"]]
    return [
        {"type": "context", "elements": [mrkdwn(f"✓ {escape(searched(answer, scope))} · {found} sources")]},
        {"type": "section", "text": mrkdwn(text)},
        {
            "type": "actions",
            "elements": [{"type": "button", "text": {"type": "plain_text", "text": t}} for t in labels],
        },
    ]


def record_post(db: Database, channel: str, slot_key: str, draft: Draft, at: datetime) -> str:
    """Record a post as the app would: a recommendation row, and PaperPing's message in the base; its ts."""
    ts = f"{at.timestamp():.6f}"
    with db.connection() as conn:
        row = storage.posts.open_slot(conn, TEAM, channel, slot_key, draft.style, at=at)
        storage.posts.record_draft(conn, row.id, draft.paper.paper_id, draft.style, draft.score, draft_json(draft))
        storage.posts.record_posted(conn, row.id, ts, at)
        record_own_post(conn, Message(TEAM, channel, ts, BOT, build_fallback_text(draft), at), draft.paper)
    return ts


def reset_posts(db: Database, channel: str) -> None:
    """Forget the posts of an earlier demo run in the same home, so that every run tells the same story."""
    with db.connection() as conn:
        for ts in storage.messages.load_message_ts_by_user(conn, TEAM, channel, BOT):
            storage.messages.delete_thread(conn, TEAM, channel, ts)
        storage.posts.delete_posts(conn, TEAM, channel)
        storage.follow_ups.delete_follow_ups(conn, TEAM, channel)
