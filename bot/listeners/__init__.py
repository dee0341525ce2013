"""Every bolt registration of PaperPing, one module a kind, as bolt's own starter template lays them out: events
(messages, reactions, joins), the ``/paperping`` command, actions (buttons), the message shortcut, mentions,
the AI app panel (``assistant``), App Home and installs. ``register_all`` also adds the middleware that handles
each event once and the error handler."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App

from bot.app_context import AppContext
from bot.listeners import actions, assistant, commands, events, home, mentions, shortcuts, uninstalls
from bot.slack.dedupe import Deduplicate
from socialrag.errors import PaperPingError

log = logging.getLogger(__name__)


def failed(error: Exception, body: dict[str, Any]) -> None:
    """A listener failed: Slack gets an error answer and sends the event again."""
    if isinstance(error, PaperPingError):
        log.warning("an event could not be handled now (Slack will send it again): %s", error)
    else:
        log.error("an event could not be handled (Slack will send it again)", exc_info=error)


def register_all(app: App, ctx: AppContext) -> None:
    """PaperPing's middleware, error handler and listeners on ``app``."""
    app.use(Deduplicate(ctx.db))
    assistant.register(app, ctx)  # middleware: the AI app panel's events, before the listeners below
    app.error(failed)
    for kind in (events, commands, home, actions, shortcuts, mentions, uninstalls):
        kind.register(app, ctx)
