"""The App Home tab as Slack shows it: for each channel the member shares with PaperPing, its settings, last posts,
reading list and most engaged-with papers; and the member's own controls (mentions, linked author id, personal
picks, forget-me)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import psycopg

from bot.app_context import AppContext
from bot.views.post_blocks import describe_received, escape, quote, sections
from bot.views.top_list import top_line
from socialrag import storage
from socialrag.knowledge import READING_LIST_EMOJI, describe_empty, describe_index
from socialrag.recommender import describe_pace, describe_ranker, describe_style, load_fit
from socialrag.report import load_top_list
from socialrag.storage.settings import MemberSettings

HOME_SAVED = 5  # papers of each channel's reading list shown on the Home tab
HOME_TOP = 3  # papers of the channel's month top list shown there
HOME_CHANNELS = 25  # channels shown, by name: Slack takes at most 100 blocks a view, and each channel costs queries
# Slack refuses a view over 250 kB (``view_too_large``), counted as slack_sdk sends it: JSON with each character
# outside ASCII escaped (6 bytes, 12 for an emoji). The channels' sections stop at this many, leaving the rest for
# the header, the count of channels left out and the member's own part
HOME_CHANNEL_BYTES = 200_000


def build_home(ctx: AppContext, team: str, user: str) -> dict[str, Any]:
    """The Home view (a Block Kit ``home`` view) for one member."""
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": "PaperPing"}}]
    with ctx.db.connection() as conn:
        if storage.privacy.is_forgotten(conn, (team,), user):  # no channel, setting or button of theirs is kept
            return {"type": "home", "blocks": [*blocks, _section(FORGOTTEN_HOME)]}
        channels = storage.workspaces.load_member_channels(conn, team, user, current=True)
    if not channels:
        blocks.append(
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": (
                        "I'm not in any channel you're in yet. Invite me with `/invite @PaperPing` in a channel where "
                        "your group shares papers."
                    ),
                },
            }
        )
    now = datetime.now(UTC)
    with ctx.db.connection() as conn:
        shown, size = 0, 0
        for channel_id, name in channels[:HOME_CHANNELS]:
            text = "\n".join(channel_lines(ctx, conn, team, channel_id, name, now))
            block = _section(sections(text)[0])  # its lines that fit a section: a cut never splits an escape
            size += len(json.dumps(block))
            if size > HOME_CHANNEL_BYTES:  # long titles in another script: the view would be refused whole
                break
            blocks.append(block)
            shown += 1
        if len(channels) > shown:
            more = len(channels) - shown
            blocks.append(
                {
                    "type": "context",
                    "elements": [
                        {
                            "type": "mrkdwn",
                            "text": f"And {more} more channel{'s' if more > 1 else ''} you share with me: "
                            "`/paperping status` in one shows the same.",
                        }
                    ],
                }
            )
        member = storage.settings.load_member_setting(conn, team, user)
    blocks += member_controls(member)
    return {"type": "home", "blocks": blocks}


FORGOTTEN_HOME = (
    "You asked me to forget you in this workspace, so I keep nothing of yours here: no messages, reactions, "
    "settings or saves. You can still use my commands. `/paperping remember-me` lifts that."
)


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def member_controls(member: MemberSettings) -> list[dict[str, Any]]:
    """The member's own part of the Home tab: their settings and the buttons for mentions and forget-me."""
    mentions = member.mentions_enabled
    linked = member.s2_author_id or member.orcid
    picks = (
        f"a direct message each week, next {member.picks_next_at:%a %d %b}"
        if member.picks_enabled and member.picks_next_at
        else f"stopped: {member.picks_stopped_reason} (`/paperping for-me on` starts them again)"
        if member.picks_stopped_reason
        else "off (`/paperping for-me on`)"
    )
    return [
        {"type": "divider"},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": (
                    f"*Your settings*\nMentions: {'on' if mentions else 'off'}\n"
                    f"Linked author: {escape(linked) if linked else 'none (`/paperping link-author ID`)'}\n"
                    f"Personal picks: {picks}"
                ),
            },
        },
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "action_id": "home_mentions",
                    "value": "off" if mentions else "on",
                    "text": {"type": "plain_text", "text": "Turn mentions off" if mentions else "Turn mentions on"},
                },
                {
                    "type": "button",
                    "action_id": "home_forget",
                    "style": "danger",
                    "text": {"type": "plain_text", "text": "Forget me"},
                    "confirm": {
                        "title": {"type": "plain_text", "text": "Forget me?"},
                        "text": {
                            "type": "mrkdwn",
                            "text": "Delete every message, reply and reaction of yours "
                            "that PaperPing stored in this workspace, and your profile.",
                        },
                        "confirm": {"type": "plain_text", "text": "Delete"},
                        "deny": {"type": "plain_text", "text": "Keep"},
                    },
                },
            ],
        },
    ]


def channel_lines(
    ctx: AppContext, conn: psycopg.Connection, team: str, channel_id: str, name: str, now: datetime
) -> list[str]:
    """One channel's part of the Home tab: its pace and style, the month in figures, what drives its ranking, its
    index, its last posts, its reading list and the papers it engaged with most in the past month."""
    s = storage.settings.load_channel_settings(conn, team, channel_id)
    style = describe_style(s.style, ctx.settings.llm_configured)
    state = "paused" if s.paused else describe_pace(s.frequency, s.digest_size)
    month = storage.reports.load_headline(conn, team, channel_id, now)
    lines = [
        f"*<#{channel_id}|{escape(name)}>* — {state}, style {style}",
        f"This month: {month.shared} papers shared; {month.posts} posts by PaperPing, "
        f"{month.answered} drew a reaction or a reply.",
        describe_ranker(load_fit(conn, team, channel_id, ctx.settings.popularity_weight), evidence=False),
        describe_index(storage.queue.load_index_progress(conn, team, channel_id, ctx.settings.embed_model)),
    ]
    empty = describe_empty(s.empty_reason, s.empty_at, s.next_post_at)
    if empty:
        lines.append(quote(empty, 400))
    for p in storage.posts.load_post_engagement(conn, team, channel_id, limit=3):
        lines.append(
            f"• {p.posted_at:%d %b}: {quote(p.title or 'a paper', 200)} — {describe_received(p.emoji, p.replies)}"
        )
    saved, total = storage.reading_list.load_reading_list(conn, team, channel_id, READING_LIST_EMOJI, limit=HOME_SAVED)
    if total:
        lines.append(f"*Reading list* ({total}; `/paperping list` there shows it all):")
        lines += [f"• {quote(p.title or 'a paper', 200)} — saved {p.saved_at:%d %b}" for p in saved]
    steered = storage.topic_steering.load_steering(conn, team, channel_id)
    if steered:
        done = {"mute": "muted", "boost": "boosted"}
        lines.append("Topics steered: " + "; ".join(f"{done[t.action]} {quote(t.label, 60)}" for t in steered[:6]))
    top = load_top_list(conn, team, channel_id, "month", now, limit=HOME_TOP)
    if top.papers:
        lines.append("*Most engaged with, past month* (`/paperping top` there shows more):")
        lines += [top_line(i, p) for i, p in enumerate(top.papers, 1)]
    followed = storage.followed_authors.load_followed(conn, team, channel_id)
    follows = ", ".join(quote(f.name, 60) for f in followed[:3]) + (" and more" if len(followed) > 3 else "")
    lines += [
        f"Follow-ups in threads: {'on' if s.follow_ups else 'off'} (`/paperping follow-ups`) · Authors followed: "
        f"{follows or 'none'} (`/paperping follow AUTHOR`)",
        "*Ask there*: `/paperping ask QUESTION`, what the channel read and discussed (“what did we read last week?”)",
        "*More there*: `/paperping profile` (its topics, to mute or boost) · `/paperping top` · "
        "`/paperping conference VENUE YEAR` · `/paperping my-papers on`",
    ]
    return lines
