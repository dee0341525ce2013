"""The Slack side of a scheduled post (the slot's life itself is ``socialrag.recommender.serve.slots``): send a
draft or a digest as Block Kit with a plain-text fallback and the slot in the message metadata, and find a
slot's post already in the channel when a process died before recording it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from slack_sdk import WebClient

from bot.slack.pacer import SlackPacer
from bot.slack.payloads import message_from_slack
from bot.views.post_blocks import build_blocks, build_digest_blocks, build_digest_text, build_fallback_text
from socialrag.errors import BadRecord
from socialrag.models import Digest, Draft
from socialrag.recommender import Posted

log = logging.getLogger(__name__)

EVENT_TYPE = "paperping_recommendation"
MAX_HISTORY_PAGES = 20  # a busy channel's messages since the slot opened, 200 a page
ClientFor = Callable[[str], WebClient]


def post_draft(client: WebClient, draft: Draft | Digest, slot_key: str, pacer: SlackPacer) -> dict[str, Any]:
    """chat.postMessage with Block Kit, a plain-text fallback and the slot in the message metadata."""
    if isinstance(draft, Digest):
        first, text, blocks = draft.drafts[0], build_digest_text(draft), build_digest_blocks(draft)
    else:
        first, text, blocks = draft, build_fallback_text(draft), build_blocks(draft)
    response = pacer.post(
        client.chat_postMessage,
        channel=draft.channel_id,
        text=text,
        blocks=blocks,
        unfurl_links=False,
        unfurl_media=False,
        metadata={"event_type": EVENT_TYPE, "event_payload": {"slot_key": slot_key, "paper_id": first.paper.paper_id}},
    )
    return dict(response.data) if hasattr(response, "data") else dict(response)


def find_posted(
    client: WebClient, channel_id: str, slot_key: str, since: datetime, pacer: SlackPacer
) -> dict[str, Any] | None:
    """A post of this slot already in the channel, as ``conversations.history`` gives it (a process died before
    recording it)."""
    return find_own(client, channel_id, since, pacer, lambda msg: _marked(msg, slot_key))


def find_own(
    client: WebClient,
    channel_id: str,
    since: datetime,
    pacer: SlackPacer,
    marked: Callable[[dict[str, Any]], bool],
    *,
    pages: int = MAX_HISTORY_PAGES,
    limit: int = 200,
) -> dict[str, Any] | None:
    """PaperPing's own message in the channel since ``since`` that ``marked`` takes (by its metadata), reading
    ``pages`` pages of ``limit`` messages at most. Only PaperPing's own: any app in the workspace may post a message
    carrying the same metadata, and such a message is not PaperPing's."""
    own: tuple[str, str] | None = None  # PaperPing's user and bot ids, asked once a message is marked
    cursor: str | None = None
    for _ in range(pages):
        data = pacer.call(
            client.conversations_history,
            channel=channel_id,
            oldest=f"{since.timestamp() - 60:.6f}",
            include_all_metadata=True,
            limit=limit,
            cursor=cursor,
        )
        for msg in data.get("messages") or ():
            if not isinstance(msg, dict) or not marked(msg):
                continue
            own = own or _own_ids(client, pacer)
            if (own[0] and msg.get("user") == own[0]) or (own[1] and msg.get("bot_id") == own[1]):
                return dict(msg)
            log.warning(
                "%s: a message not PaperPing's carries PaperPing's metadata; it is not taken for its own", channel_id
            )
        cursor = (data.get("response_metadata") or {}).get("next_cursor") or None
        if not data.get("has_more") or cursor is None:
            return None
    return None


def _marked(msg: dict[str, Any], slot_key: str) -> bool:
    """Whether the message carries this slot in its metadata."""
    meta = msg.get("metadata")
    payload = meta.get("event_payload") if isinstance(meta, dict) and meta.get("event_type") == EVENT_TYPE else None
    return isinstance(payload, dict) and payload.get("slot_key") == slot_key


def _own_ids(client: WebClient, pacer: SlackPacer) -> tuple[str, str]:
    """PaperPing's user id and bot id in the workspace, as ``auth.test`` says for its token."""
    auth = pacer.call(client.auth_test)
    return str(auth.get("user_id") or ""), str(auth.get("bot_id") or "")


class SlackOutlet:
    """A slot's outlet in Slack: each workspace's client (``client_for``), every call at Slack's pace."""

    def __init__(self, client_for: ClientFor, pacer: SlackPacer) -> None:
        self.client_for, self.pacer = client_for, pacer

    def ready(self, team_id: str) -> None:
        self.client_for(team_id)  # the workspace's token: missing, or not opened by the key, raises here

    def post(self, draft: Draft | Digest, slot_key: str) -> Posted:
        response = post_draft(self.client_for(draft.team_id), draft, slot_key, self.pacer)
        return _posted(dict(response.get("message") or {}), str(response["ts"]), draft.team_id, draft.channel_id)

    def find_posted(self, team_id: str, channel_id: str, slot_key: str, since: datetime) -> Posted | None:
        found = find_posted(self.client_for(team_id), channel_id, slot_key, since, self.pacer)
        if found is None:
            return None
        try:
            return _posted(found, str(found["ts"]), team_id, channel_id)
        except BadRecord as exc:  # recorded all the same: a slot left unrecorded would fail at every retry
            log.warning("#%s: slot %s's post is recorded, not stored: %s", channel_id, slot_key, exc)
            return Posted(str(found["ts"]), None)


def _posted(raw: dict[str, Any], ts: str, team_id: str, channel_id: str) -> Posted:
    """A post as Slack gave it back, as the knowledge base keeps it."""
    raw.setdefault("ts", ts)
    raw.setdefault("type", "message")
    return Posted(ts, message_from_slack(raw, team_id, channel_id))
