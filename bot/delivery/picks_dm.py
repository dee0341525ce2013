"""Personal picks in a direct message (`/paperping for-me on|off|now`): the Slack side. When picks are due and
what is recorded is decided by ``socialrag.recommender.serve.picks``; here the member's channels are read again
and the message is written and sent. A refusal Slack will keep giving is told apart from one for now."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from slack_sdk import WebClient

from bot.delivery.slot_posts import find_own
from bot.delivery.uploads import maybe_done
from bot.slack.members import refresh_for_member
from bot.slack.pacer import SlackPacer
from bot.views.post_blocks import escape, link, mrkdwn, safe_url, sections
from socialrag.db import Database
from socialrag.errors import OutcomeUnknown, SourceError
from socialrag.recommender import PICKS_EVERY, Picks, PicksRefused, Recommender
from socialrag.recommender import send_due_picks as decide_due_picks
from socialrag.recommender import send_picks as decide_picks
from socialrag.text import ascii_digits

EVERY = PICKS_EVERY
EVENT_TYPE = "paperping_picks"  # the DM's metadata: its try and its (paper, channel) picks
SENT_LOOKED_AT = 15  # messages of the member's DM read for a try's message: one page, as Slack's slowest tier gives
CHANNEL_PAGES = 5  # pages of 200 channels of users.conversations read to confirm a member's channels
MOST_PICKS = 20  # picks read from a message's metadata at most
CHANNEL_ID = re.compile(r"[A-Z0-9]{1,40}")
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
    """The picks' outlet in Slack (``PicksOutlet``): member lists read again, the member's channels confirmed,
    then one direct message with its try in the metadata; or that try's message found in the member's DM."""

    def __init__(self, db: Database, pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> None:
        self.db, self.pacer, self.client_for = db, pacer, client_for

    def refresh(self, team_id: str, user_id: str, now: datetime) -> None:
        refresh_for_member(self.db, self.pacer.call, self.client_for(team_id), team_id, user_id, now)

    def confirm(self, team_id: str, user_id: str, channel_ids: Sequence[str]) -> tuple[set[str], set[str]]:
        """``users.conversations`` of the member, ``CHANNEL_PAGES`` pages at most: the channels Slack lists them
        in, and (once Slack listed them all) those it does not. An answer without a list of channels is not one."""
        client, wanted, inside = self.client_for(team_id), set(channel_ids), set[str]()
        cursor: str | None = None
        for _ in range(CHANNEL_PAGES):
            try:
                data = self.pacer.call(
                    client.users_conversations,
                    user=user_id,
                    types="public_channel,private_channel",
                    limit=200,
                    cursor=cursor,
                )
            except SourceError as exc:  # the member's account gone stops the picks; anything else: not known now
                check_refusal(exc)
                raise
            listed, meta = data.get("channels"), data.get("response_metadata") or {}
            if not isinstance(listed, list) or not isinstance(meta, dict):  # not an answer to rest a removal on
                raise SourceError("slack", "users.conversations answered without a list of channels")
            inside |= {str(c.get("id")) for c in listed if isinstance(c, dict)} & wanted
            cursor = str(meta.get("next_cursor") or "") or None
            if cursor is None:
                return inside, wanted - inside
            if inside == wanted:
                break
        return inside, set()

    def send(self, team_id: str, user_id: str, picks: Picks, attempt: datetime) -> None:
        client = self.client_for(team_id)
        channel = self.dm_channel(client, user_id)
        text = picks_text(picks)
        payload = {"attempt": attempt_key(attempt), "picks": [f"{p.like.paper_id}:{p.channel_id}" for p in picks.picks]}
        try:
            self.pacer.post(
                client.chat_postMessage,
                channel=channel,
                text=text,
                blocks=[{"type": "section", "text": mrkdwn(part)} for part in sections(text)],
                unfurl_links=False,
                unfurl_media=False,
                metadata={"event_type": EVENT_TYPE, "event_payload": payload},
            )
        except SourceError as exc:  # the pacer's form of a Slack error: "slack: <error code>"
            if maybe_done(exc):
                raise OutcomeUnknown("slack", exc.detail) from exc
            check_refusal(exc)
            raise
        except Exception as exc:  # the answer was lost (a timeout, a dropped connection): Slack may have posted it
            raise OutcomeUnknown("slack", f"no answer to chat.postMessage: {exc!r}") from exc

    def find_sent(self, team_id: str, user_id: str, attempt: datetime) -> list[tuple[int, str]] | None:
        """PaperPing's own message of this try in the member's DM (one page of ``SENT_LOOKED_AT``): its picks."""
        client, key = self.client_for(team_id), attempt_key(attempt)
        channel = self.dm_channel(client, user_id)
        found = find_own(
            client,
            channel,
            attempt,
            self.pacer,
            lambda m: sent_picks(m, key) is not None,
            pages=1,
            limit=SENT_LOOKED_AT,
        )
        return None if found is None else sent_picks(found, key)

    def dm_channel(self, client: WebClient, user_id: str) -> str:
        """The member's direct message with PaperPing (``conversations.open``)."""
        try:
            opened: Any = self.pacer.call(client.conversations_open, users=user_id)
        except SourceError as exc:
            check_refusal(exc)
            raise
        return str(opened["channel"]["id"])


def check_refusal(exc: SourceError) -> None:
    """A Slack error that is the member's or the message's refusal raised as ``PicksRefused``."""
    if exc.detail in DM_REFUSALS:
        raise PicksRefused(refusal_reason(exc.detail)) from exc


def attempt_key(attempt: datetime) -> str:
    """A try as its DM's metadata names it."""
    return f"{attempt.timestamp():.6f}"


def sent_picks(msg: dict[str, Any], key: str) -> list[tuple[int, str]] | None:
    """The (paper, channel) picks a message's metadata names, when it is the DM of the try ``key``."""
    meta = msg.get("metadata")
    payload = meta.get("event_payload") if isinstance(meta, dict) and meta.get("event_type") == EVENT_TYPE else None
    if not isinstance(payload, dict) or payload.get("attempt") != key or not isinstance(payload.get("picks"), list):
        return None
    found = []
    for item in payload["picks"][:MOST_PICKS]:
        paper, _, channel = str(item).partition(":")
        if ascii_digits(paper) and len(paper) < 19 and CHANNEL_ID.fullmatch(channel):
            found.append((int(paper), channel))
    return found


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
