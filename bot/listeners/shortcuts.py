"""The "Papers like this" message shortcut: papers like the one the message shares, answered privately off bolt's
listener pool (``bot.delivery.like``)."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from bot.app_context import AppContext
from bot.delivery.like import BUSY, SHORTCUT, answer_like
from socialrag.knowledge import find_paper_refs

log = logging.getLogger(__name__)


def register(app: App, ctx: AppContext) -> None:
    def ack_fast(ack: Ack) -> None:
        ack()

    def shortcut(client: WebClient, body: dict[str, Any], respond: Respond) -> None:
        member = f"{(body.get('team') or {}).get('id')}:{(body.get('user') or {}).get('id')}"
        if not ctx.slow.submit(lambda: answer_shortcut(client, body, respond), owner=member):  # off the listener pool
            respond(text=BUSY, response_type="ephemeral", replace_original=False)

    def answer_shortcut(client: WebClient, body: dict[str, Any], respond: Respond) -> None:
        message = body.get("message") or {}
        channel = str((body.get("channel") or {}).get("id") or "")
        team = ctx.slack.channel_team(str((body.get("team") or {}).get("id") or ""), channel)
        text = str(message.get("text") or "")
        if not find_paper_refs(text):
            answer = "That message shares no paper link I can read; `/paperping like WORDS` takes words."
        else:
            try:
                user = str((body.get("user") or {}).get("id") or "")
                answer = answer_like(ctx, client, team, channel, user, text)
            except Exception:  # the member always hears back
                log.exception("papers like this failed")
                answer = "Something went wrong on my side while looking; it is logged for your admin."
        respond(text=answer, response_type="ephemeral", replace_original=False)

    app.shortcut(SHORTCUT)(ack=ack_fast, lazy=[shortcut])
