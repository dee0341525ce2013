"""Every bolt registration of PaperPing, one module a kind, as bolt's own starter template lays them out: events
(messages, reactions, joins), the ``/paperping`` command, actions (buttons), the message shortcut, mentions,
the AI app panel (``assistant``), App Home and installs. ``register_all`` also adds the middleware that handles
each event once and the error handler, which lets go of a failed event's claim so that Slack's next copy runs."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App, BoltContext, BoltResponse

from bot.app_context import AppContext
from bot.listeners import actions, assistant, commands, events, home, mentions, shortcuts, uninstalls
from bot.listeners.commands import TRY_AGAIN
from bot.slack.dedupe import Deduplicate, release_claim
from bot.slack.own_events import OwnEventsIgnored
from socialrag.errors import PaperPingError

log = logging.getLogger(__name__)


def failed(error: Exception, body: dict[str, Any]) -> BoltResponse | None:
    """A listener, or the authorization of its request, failed: Slack gets an error answer and sends an event
    again. A slash command is never sent again, so the member who typed it is told to try again instead (the text
    of a 200 is what Slack shows them)."""
    command = isinstance(body, dict) and bool(body.get("command"))
    what = "a command could not be carried out" if command else "an event could not be handled"
    if isinstance(error, PaperPingError):
        log.warning("%s now (%s): %s", what, "its member is told" if command else "Slack will send it again", error)
    else:
        log.error("%s (%s)", what, "its member is told" if command else "Slack will send it again", exc_info=error)
    return BoltResponse(status=200, body=TRY_AGAIN) if command else None


def register_all(app: App, ctx: AppContext) -> None:
    """PaperPing's middleware, error handler and listeners on ``app``."""
    app.use(OwnEventsIgnored())  # PaperPing's own events, but for the deletion of one of its messages
    app.use(Deduplicate(ctx.db))
    assistant.register(app, ctx)  # middleware: the AI app panel's events, before the listeners below

    def on_error(error: Exception, body: dict[str, Any], context: BoltContext) -> BoltResponse | None:
        release_claim(ctx.db, context)  # Slack's next copy of a failed event is handled
        return failed(error, body)

    app.error(on_error)
    for kind in (events, commands, home, actions, shortcuts, mentions, uninstalls):
        kind.register(app, ctx)
