"""Personal picks in a direct message (`/paperping for-me on|off|now`): once a week, for each member who opted
in, the papers closest to what they shared, liked, clicked and saved in the channels they are in with
PaperPing, each with the channel it comes from and the thread there it is close to. A member's picks hold
nothing of a channel they are not in, and nothing of another member."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks import link, mrkdwn, titled_link
from bot.members import refresh_for_member
from bot.pacing import SlackPacer
from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError, PermanentError
from socialrag.recommender import Recommender

log = logging.getLogger(__name__)

EVERY = timedelta(days=7)
RETRY = timedelta(hours=1)  # a DM Slack refused for now is tried again after this
SECTION_LIMIT = 3000  # Slack's most characters in a section's text
TITLE_SHOWN = 200  # characters of a title in the DM


DM_REFUSALS = {
    "cannot_dm_bot": "Slack does not let PaperPing write to this account",
    "user_not_found": "Slack no longer knows this account",
    "user_disabled": "this account is deactivated",
    "account_inactive": "this account is deactivated",
    "msg_too_long": "Slack refused the message as too long",
    "invalid_blocks": "Slack refused the message's layout",
    "restricted_action": "this workspace does not let apps send direct messages",
}


def _slack_error(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error") or "")
    return str(exc).removeprefix("slack: ")


def refused_for_good(exc: Exception) -> bool:
    """Whether Slack's refusal of a DM will not change by trying again (``DM_REFUSALS``, or a permanent error)."""
    return isinstance(exc, PermanentError) or _slack_error(exc) in DM_REFUSALS


def refusal_reason(exc: Exception) -> str:
    """A refusal from Slack in words for the member (status and App Home)."""
    error = _slack_error(exc)
    return DM_REFUSALS.get(error, f"Slack refused the direct message ({error[:80]})")


def picks_text(recommender: Recommender, team: str, user: str) -> tuple[str | None, list[tuple[int, str]], str]:
    """The DM's text and the papers it holds (paper, channel), or None with why there is nothing to send."""
    found = recommender.personal_picks(team, user)
    if not found.channels:
        return None, [], "You are in no channel with PaperPing yet, so I have nothing to pick from."
    if not found.picks:
        return (
            None,
            [],
            (
                "I have nothing new to pick for you yet: share, react to, click or save papers in the channels "
                "you're in with PaperPing, and ask again."
            ),
        )
    lines = ["*Papers picked for you* from the channels you are in with PaperPing (only you get this message):"]
    for pick in found.picks:
        like = pick.like
        title = titled_link(like.url, like.title[:TITLE_SHOWN])
        near_title = (like.related_title or "")[:TITLE_SHOWN]
        near = f", close to {link(like.related_link or '', near_title)}" if like.related_title else ""
        lines.append(f"• {title} — from <#{pick.channel_id}>{near}")
    lines.append("`/paperping for-me off` stops these messages.")
    return "\n".join(lines), [(p.like.paper_id, p.channel_id) for p in found.picks], ""


def sections(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """The text in sections of whole lines, each within Slack's ``limit`` characters for a section (a line
    longer than that alone is cut)."""
    parts: list[str] = []
    for line in text.split("\n"):
        line = line[:limit]
        if parts and len(parts[-1]) + 1 + len(line) <= limit:
            parts[-1] += "\n" + line
        else:
            parts.append(line)
    return parts


def send_picks(
    db: Database, recommender: Recommender, pacer: SlackPacer, client: WebClient, team: str, user: str, now: datetime
) -> str:
    """Send the member their picks now; what happened, in a sentence for them. Their channels' member lists are
    read again first when older than a day: the DM names only channels they are in now."""
    refresh_for_member(db, pacer.call, client, team, user, now)
    text, papers, why = picks_text(recommender, team, user)
    if text is None:
        return why
    opened: Any = pacer.call(client.conversations_open, users=user)
    dm = str(opened["channel"]["id"])
    pacer.post(
        client.chat_postMessage,
        channel=dm,
        text=text,
        blocks=[{"type": "section", "text": mrkdwn(part)} for part in sections(text)],
        unfurl_links=False,
        unfurl_media=False,
    )
    with db.connection() as conn:
        storage.picks.record_picks_sent(conn, team, user, papers, now)
    return f"Sent you {len(papers)} papers in a direct message."


def send_due_picks(
    db: Database, recommender: Recommender, pacer: SlackPacer, client_for: Callable[[str], WebClient], now: datetime
) -> int:
    """The weekly picks that are due, each taken by one process; a refusal is retried within the hour.
    Returns how many went."""
    with db.connection() as conn:
        due = storage.picks.load_picks_due(conn, now)
    sent = 0
    for team, user in due:
        with db.connection() as conn:
            if not storage.picks.claim_picks(conn, team, user, now, now + EVERY):
                continue
        try:
            answer = send_picks(db, recommender, pacer, client_for(team), team, user, now)
            sent += answer.startswith("Sent")
        except (SlackApiError, PaperPingError) as exc:
            if refused_for_good(exc):  # stopped, with why, until the member turns them on again
                log.warning("personal picks for %s/%s stopped: %s", team, user, exc)
                with db.connection() as conn:
                    storage.settings.upsert_member_setting(
                        conn, team, user, picks_enabled=False, picks_stopped_reason=refusal_reason(exc)
                    )
                continue
            log.warning("personal picks for %s/%s failed, retrying within the hour: %s", team, user, exc)
            with db.connection() as conn:
                storage.settings.upsert_member_setting(conn, team, user, picks_next_at=now + RETRY)
    return sent
