"""The ``/paperping`` listener: acknowledge at once, carry the command out (``bot.commands``) after, and always
answer the member who typed it, privately."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from bot.app_context import AppContext
from bot.commands import UsageError, is_slow, run_command, usage_text
from bot.delivery.like import BUSY
from bot.views.post_blocks import quote
from socialrag.errors import PaperPingError

log = logging.getLogger(__name__)
# a member's two slow requests are under way, or every place for slow requests is taken: one sentence says both
MEMBER_BUSY = "I'm busy with your other requests or many others' right now; send this one again in a minute."
TRY_AGAIN = "I couldn't do that just now (a service I depend on is not answering). Try again in a minute."


def register(app: App, ctx: AppContext) -> None:
    def ack_fast(ack: Ack) -> None:
        ack()

    def respond_later(client: WebClient, body: dict[str, Any], respond: Respond) -> None:
        if is_slow(str(body.get("text") or "")):  # off bolt's listener pool, so that quick commands never wait
            member = f"{body.get('team_id')}:{body.get('user_id')}"
            if not ctx.slow.submit(lambda: carry_out(client, body, respond), owner=member):
                busy = MEMBER_BUSY if ctx.slow.full_for(member) else BUSY
                respond(text=busy, response_type="ephemeral")
            return
        carry_out(client, body, respond)

    def carry_out(client: WebClient, body: dict[str, Any], respond: Respond) -> None:
        try:
            answer = run_command(ctx, client, body)
        except UsageError as exc:
            answer = f"{exc}\n\n{usage_text()}"
        except PaperPingError as exc:  # the database or a service away: the member hears of it
            log.warning("/paperping %s failed: %s", quote(str(body.get("text") or ""), 60), exc)
            answer = TRY_AGAIN
        except Exception:  # no command ends without an answer to the member who typed it
            log.exception("/paperping failed unexpectedly")
            answer = "Something went wrong on my side while doing that; it is logged for your admin. Try again later."
        respond(text=answer, response_type="ephemeral")

    app.command("/paperping")(ack=ack_fast, lazy=[respond_later])
