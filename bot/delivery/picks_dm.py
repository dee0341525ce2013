"""Personal picks in a direct message (`/paperping for-me on|off|now`): the Slack side. When picks are due and
what is recorded is decided by ``socialrag.recommender.serve.picks``; here the member's channels are read again
and the message is written and sent. A refusal Slack will keep giving is told apart from one for now."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from slack_sdk import WebClient

from bot.slack.members import refresh_for_member
from bot.slack.pacer import SlackPacer
from bot.views.post_blocks import escape, link, mrkdwn, safe_url, sections
from socialrag.db import Database
from socialrag.errors import SourceError
from socialrag.recommender import PICKS_EVERY, Picks, PicksRefused, Recommender
from socialrag.recommender import send_due_picks as decide_due_picks
from socialrag.recommender import send_picks as decide_picks

EVERY = PICKS_EVERY
TITLE_SHOWN = 200  # characters of a title in the DM, once escaped
URL_SHOWN = 600  # a longer address is not linked (the title alone): five picks' lines stay within what Slack takes


# refusals that are the member's (their account) or the message's: the member's picks stop, with why. Slack's
# other refusals for good are the workspace's (``account_inactive`` is PaperPing's own token of a deleted
# workspace or user, ``missing_scope`` an install without ``im:write``): the picks stay on, tried again later
DM_REFUSALS = {
    "cannot_dm_bot": "Slack does not let PaperPing write to this account",
    "user_not_found": "Slack no longer knows this account",
    "user_disabled": "this account is deactivated",
    "msg_too_long": "Slack refused the message as too long",
    "invalid_blocks": "Slack refused the message's layout",
    "restricted_action": "this workspace does not let apps send direct messages",
}


def refusal_reason(error: str) -> str:
    """A refusal from Slack in words for the member (status and App Home)."""
    return DM_REFUSALS.get(error, f"Slack refused the direct message ({error[:80]})")


def short_link(url: str, label: str) -> str:
    """``link`` with a label of ``TITLE_SHOWN`` characters at most once escaped (a title of ``&`` grows fivefold)
    and no link for an address longer than ``URL_SHOWN``: a pick's line stays within a section and its five lines
    within a message, whatever a source or a page gave."""
    label = " ".join(label.split())[:TITLE_SHOWN]
    while len(escape(label)) > TITLE_SHOWN:
        label = label[:-1]
    return link(url if len(safe_url(url)) <= URL_SHOWN else "", label)


def picks_text(found: Picks) -> str:
    """The direct message: each pick with the channel it comes from and the thread there it is close to."""
    lines = ["*Papers picked for you* from the channels you are in with PaperPing (only you get this message):"]
    for pick in found.picks:
        like = pick.like
        title = short_link(like.url, like.title)
        near = f", close to {short_link(like.related_link or '', like.related_title)}" if like.related_title else ""
        lines.append(f"• {title} — from <#{pick.channel_id}>{near}")
    lines.append("`/paperping for-me off` stops these messages.")
    return "\n".join(lines)


class DirectMessages:
    """The picks' outlet in Slack (``PicksOutlet``): member lists read again, then one direct message."""

    def __init__(self, db: Database, pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> None:
        self.db, self.pacer, self.client_for = db, pacer, client_for

    def refresh(self, team_id: str, user_id: str, now: datetime) -> None:
        refresh_for_member(self.db, self.pacer.call, self.client_for(team_id), team_id, user_id, now)

    def send(self, team_id: str, user_id: str, picks: Picks) -> None:
        client = self.client_for(team_id)
        text = picks_text(picks)
        try:
            opened: Any = self.pacer.call(client.conversations_open, users=user_id)
            self.pacer.post(
                client.chat_postMessage,
                channel=str(opened["channel"]["id"]),
                text=text,
                blocks=[{"type": "section", "text": mrkdwn(part)} for part in sections(text)],
                unfurl_links=False,
                unfurl_media=False,
            )
        except SourceError as exc:  # the pacer's form of a Slack error: "slack: <error code>"
            error = str(exc).removeprefix("slack: ")
            if error in DM_REFUSALS:
                raise PicksRefused(refusal_reason(error)) from exc
            raise


def send_picks(
    db: Database, recommender: Recommender, pacer: SlackPacer, client: WebClient, team: str, user: str, now: datetime
) -> str:
    """`/paperping for-me now`: the member's picks now, through this workspace's client; a sentence for them."""
    return decide_picks(db, recommender.personal_picks, DirectMessages(db, pacer, lambda _: client), team, user, now)


def send_due_picks(
    db: Database, recommender: Recommender, pacer: SlackPacer, client_for: Callable[[str], WebClient], now: datetime
) -> int:
    """The weekly picks that are due, sent through Slack; how many went."""
    return decide_due_picks(db, recommender.personal_picks, DirectMessages(db, pacer, client_for), now)
