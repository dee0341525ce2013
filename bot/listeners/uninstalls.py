"""Uninstalling PaperPing, or revoking its token: its token goes and its channels stop being scheduled."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App

from bot.app_context import AppContext
from bot.slack.dedupe import mark_handled
from socialrag import storage

log = logging.getLogger(__name__)


def register(app: App, ctx: AppContext) -> None:
    """Uninstalling PaperPing, or revoking its token: its token goes and its channels stop being scheduled."""

    def uninstalled(body: dict[str, Any]) -> None:
        """The workspace removed PaperPing: its token goes and its channels stop being scheduled. Its data
        stays until an admin runs `paperping purge --team T` (or reinstalls)."""
        team = str(body.get("team_id") or "")
        with ctx.db.connection() as conn:
            storage.installs.delete_installation(conn, team)
            stopped = storage.workspaces.deactivate_channels(conn, team)
            mark_handled(conn, body)
        log.warning("workspace %s removed PaperPing: token deleted, %d channels stopped", team, stopped)

    def revoked(body: dict[str, Any], event: dict[str, Any]) -> None:
        if (event.get("tokens") or {}).get("bot"):
            uninstalled(body)
            return
        with ctx.db.connection() as conn:  # a member's token, which PaperPing never holds: nothing to do
            mark_handled(conn, body)

    app.event("app_uninstalled")(uninstalled)
    app.event("tokens_revoked")(revoked)
