"""Papers on demand, answered privately: `/paperping like LINK-OR-WORDS` and the "Papers like this" message
shortcut. Linked papers PaperPing does not know yet are queued to be looked up; words are used as they are.
Nothing of the question or the answer is stored as the channel's feedback."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from slack_sdk import WebClient

from bot.app_context import AppContext
from bot.views.post_blocks import titled_link, works_again
from socialrag import storage
from socialrag.knowledge import find_paper_refs
from socialrag.text import as_data

log = logging.getLogger(__name__)

BUSY = "I'm busy with other members' requests right now; try again in a minute."
SHORTCUT = "papers_like_this"  # the message shortcut's callback id (manifest.yml)
LIKE_COOLDOWN = timedelta(seconds=30)  # between two of a member's `like` or shortcut answers


NOT_HERE = (
    "I'm not in this channel, so I show nothing of it and search nothing for it. Invite me "
    "(`/invite @PaperPing`) to ask for papers like this here."
)


def not_stored_here(ctx: AppContext, team: str, channel: str) -> bool:
    """Whether PaperPing is not in the channel as stored: a DM, a channel it left or was never in. With
    ``ctx.slack.is_member`` (Slack's word now), one rule for `/paperping like` and the shortcut."""
    if not channel or channel.startswith("D"):
        return True
    with ctx.db.connection() as conn:
        return not storage.settings.load_channel_settings(conn, team, channel).active


def answer_like(ctx: AppContext, client: WebClient, team: str, channel: str, user: str, text: str) -> str:
    """The private answer to "papers like this": five papers with a line of why each, or what to do. Nothing of a
    channel PaperPing is not in is shown, and nothing is searched for it; a member asks once every
    ``LIKE_COOLDOWN`` (each answer ranks the channel's candidates and may search online)."""
    if ctx.recommender is None:
        return "Papers on demand work where PaperPing runs as a service (`paperping run`)."
    if not_stored_here(ctx, team, channel):
        return NOT_HERE
    now = datetime.now(UTC)
    with ctx.db.connection() as conn:
        until = storage.usage.take_cooldown(conn, team, user, "like", now, LIKE_COOLDOWN)
    if until is not None:
        return f"You asked for papers like this a moment ago; ask again from {works_again(until)}."
    if not ctx.slack.is_member(client, channel):  # asked of Slack once a cooldown: not once a click
        return NOT_HERE
    refs = find_paper_refs(text)[:3]
    paper_ids: list[int] = []
    behind = 0
    if refs:
        with ctx.db.connection() as conn:
            ids = storage.papers.ensure_papers(conn, [(r.scheme, r.value) for r in refs])
            paper_ids = list(dict.fromkeys(ids.values()))
            behind = storage.queue.enqueue_for_member(conn, team, user, paper_ids, now)
        ctx.wake.index_soon()
    words = as_data(text)[:300]
    found, papers = ctx.recommender.papers_like(team, channel, words=words, paper_ids=paper_ids)
    if papers is None:
        if refs and behind:
            return (
                "I don't know that paper yet; it waits its turn behind the papers channels shared (you had "
                f"{storage.queue.MEMBER_FIRST_PER_HOUR} looked up first this hour). Ask again later."
            )
        if refs:
            return "I don't know that paper yet; I'm looking it up now. Ask again in a minute."
        return "Tell me a paper link or a few words: `/paperping like retrieval for dialogue`."
    if not found:
        return "I found nothing like that among the papers this channel's sources offer right now."
    lines = ["*Papers like that* that this channel has not shared and I have not posted here (only you see this):"]
    for like in found:
        why = " — nothing shared here is close to it"
        if like.related_title:
            earlier = titled_link(like.related_link or "", like.related_title)
            who = f", shared by <@{like.shared_by}>" if like.shared_by else ""
            why = f" — closest to {earlier}{who}"
        lines.append(f"• {titled_link(like.url, like.title)}{why}")
    return "\n".join(lines)
