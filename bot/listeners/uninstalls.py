"""Uninstalling PaperPing, or revoking its token: its token goes and its channels stop being scheduled."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
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
        after = _second_after(body.get("event_time"))
        with ctx.db.connection() as conn:
            if after is not None and storage.installs.installed_since(conn, team, after):
                mark_handled(conn, body)  # a late copy (Slack's retry) of an uninstall the workspace has undone
                log.warning("workspace %s installed PaperPing again after removing it: its new token is kept", team)
                return
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


def _second_after(event_time: Any) -> datetime | None:
    """The second after Slack's ``event_time`` (whole seconds), or None when it is missing, no time, or not of
    the last day (Slack sends an event again within minutes; an odd time must not keep a removed token)."""
    if isinstance(event_time, bool) or not isinstance(event_time, int | float):
        return None
    now = datetime.now(UTC)
    try:
        at = datetime.fromtimestamp(event_time, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return at + timedelta(seconds=1) if now - timedelta(days=1) < at <= now + timedelta(minutes=5) else None
