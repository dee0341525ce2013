"""The App Home tab as Slack shows it: for each channel the member shares with PaperPing, its settings, last posts
and reading list; and the member's own controls (mentions, linked author id, personal picks, forget-me)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bot.app_context import AppContext
from bot.views.post_blocks import describe_received, escape, quote
from socialrag import storage
from socialrag.knowledge import READING_LIST_EMOJI, describe_empty, describe_index
from socialrag.recommender import describe_pace, describe_ranker, describe_style, load_fit
from socialrag.storage.settings import MemberSettings

HOME_SAVED = 5  # papers of each channel's reading list shown on the Home tab


def build_home(ctx: AppContext, team: str, user: str) -> dict[str, Any]:
    """The Home view (a Block Kit ``home`` view) for one member."""
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": "PaperPing"}}]
    with ctx.db.connection() as conn:
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
    with ctx.db.connection() as conn:
        for channel_id, name in channels:
            s = storage.settings.load_channel_settings(conn, team, channel_id)
            posts = storage.posts.load_post_engagement(conn, team, channel_id, limit=3)
            style = describe_style(s.style, ctx.settings.llm_configured)
            state = "paused" if s.paused else describe_pace(s.frequency, s.digest_size)
            ranker = load_fit(conn, team, channel_id, ctx.settings.popularity_weight)
            month = storage.reports.load_headline(conn, team, channel_id, datetime.now(UTC))
            lines = [
                f"*<#{channel_id}|{escape(name)}>* — {state}, style {style}",
                f"This month: {month.shared} papers shared; {month.posts} posts by PaperPing, "
                f"{month.answered} drew a reaction or a reply.",
                describe_ranker(ranker),
                describe_index(storage.queue.load_index_progress(conn, team, channel_id, ctx.settings.embed_model)),
            ]
            empty = describe_empty(s.empty_reason, s.empty_at, s.next_post_at)
            if empty:
                lines.append(quote(empty, 400))
            for p in posts:
                received = describe_received(p.emoji, p.replies)
                lines.append(f"• {p.posted_at:%d %b}: {quote(p.title or 'a paper', 200)} — {received}")
            saved, total = storage.reading_list.load_reading_list(
                conn, team, channel_id, READING_LIST_EMOJI, limit=HOME_SAVED
            )
            if total:
                lines.append(f"*Reading list* ({total}; `/paperping list` there shows it all):")
                lines += [f"• {quote(p.title or 'a paper', 200)} — saved {p.saved_at:%d %b}" for p in saved]
            blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}})
        member = storage.settings.load_member_setting(conn, team, user)
    blocks += member_controls(member)
    return {"type": "home", "blocks": blocks}


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
