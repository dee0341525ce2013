"""The App Home's listeners: publish the member's Home (``bot.views.home_tab``) when they open it, after reading
their channels' member lists again, and the buttons for mentions and forget-me; the Messages tab's opening is the
agent's (``listeners.assistant``)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.app_context import AppContext
from bot.listeners.assistant import messages_tab_opened
from bot.slack.dedupe import mark_handled
from bot.slack.members import refresh_for_member
from bot.slack.one_at_a_time import OneAtATime
from bot.views.home_tab import HOME_CHANNELS, build_home
from socialrag import storage
from socialrag.errors import PaperPingError, SourceError

log = logging.getLogger(__name__)


def home_team(body: dict[str, Any]) -> str:
    """The workspace a Home action acts on: the one the Home view belongs to (where PaperPing is installed), as
    for events and commands; a member of a Slack Connect partner organisation carries their own team in
    ``team.id``."""
    view = body.get("view") or {}
    return str(view.get("team_id") or (body.get("team") or {}).get("id") or "")


def register(app: App, ctx: AppContext) -> None:
    builds = OneAtATime()  # one build of a member's Home at a time in this process
    hashes: dict[tuple[str, str], str] = {}  # each member's Home as this process last saw it (Slack's ``hash``)

    def publish(client: WebClient, team: str, user: str, seen: Any = None) -> None:
        """Build and publish the member's Home off the listener pool (``ctx.slow``), so that Slack gets its answer
        at once: reading stale member lists again may take several Slack calls. Asked while a build of theirs is
        under way (the tab opened twice, a button clicked as it opens), that build runs once more when it ends,
        reading what is stored then. Across processes, Slack's ``hash`` of the Home last seen (``seen``, from the
        opening or the click) guards it: a Home published meanwhile refuses this one, built again and published
        then. Either way the Home shown last is never older than the last change."""
        key = (team, user)
        if isinstance(seen, dict) and seen.get("hash"):
            hashes[key] = str(seen["hash"])

        def send(known: str) -> None:
            view = build_home(ctx, team, user)
            guard = {"hash": known} if known else {}
            answer = ctx.pacer.call(client.views_publish, user_id=user, view=view, **guard)  # 429s waited out
            hashes[key] = str((answer.get("view") or {}).get("hash") or "")

        def build() -> None:
            try:
                refresh_for_member(ctx.db, ctx.pacer.call, client, team, user, datetime.now(UTC), limit=HOME_CHANNELS)
                try:
                    send(hashes.get(key, ""))
                except SourceError as exc:
                    if exc.detail != "hash_conflict":
                        raise
                    send("")  # another process published since: this build may be older than that one's
            except PaperPingError as exc:  # a later request builds it again
                log.warning("App Home of %s not published: %s", user, exc)

        if builds.again_if_running(key):
            return
        if not ctx.slow.submit(lambda: builds.run(key, build), owner=f"{team}:{user}"):
            log.info("App Home of %s not refreshed now: busy; the next opening shows it", user)

    def opened(client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
        if event.get("tab") == "home":
            publish(client, str(body.get("team_id")), str(event["user"]), event.get("view"))
        elif event.get("tab") == "messages":  # the agent's conversation (``agent_view``), off the listener
            team = str(body.get("team_id") or "")
            ctx.slow.submit(lambda: messages_tab_opened(ctx, client, team, event), owner=f"{team}:{event['user']}")
        with ctx.db.connection() as conn:
            mark_handled(conn, body)  # a resend of this opening is dropped: the work is under way

    def mentions(ack: Ack, client: WebClient, body: dict[str, Any]) -> None:
        ack()
        team, user = home_team(body), str(body["user"]["id"])
        with ctx.db.connection() as conn:
            storage.settings.upsert_member_setting(
                conn, team, user, mentions_enabled=body["actions"][0]["value"] == "on"
            )
        publish(client, team, user, body.get("view"))

    def forget(ack: Ack, client: WebClient, body: dict[str, Any]) -> None:
        ack()
        team, user = home_team(body), str(body["user"]["id"])
        own = str((body.get("team") or {}).get("id") or team)
        with ctx.db.connection() as conn:  # and in the member's own workspace, a Slack Connect partner's
            storage.privacy.forget_member_in(conn, (team, own), user)
        publish(client, team, user, body.get("view"))

    app.event("app_home_opened")(opened)
    app.action("home_mentions")(mentions)
    app.action("home_forget")(forget)
