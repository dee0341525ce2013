"""Event listeners: paper links, thread replies, reactions, edits, deletions, and joining a channel.

Each is indexed the way history is (``socialrag.index``); everything else a channel says is not stored,
except the time of the last message (for the quiet period before a scheduled post).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.context import AppContext
from bot.slack_io import message_from_slack, ts_to_datetime
from socialrag import post_store, store
from socialrag.index import index_messages

log = logging.getLogger(__name__)

INTRO = (
    "Hi, I'm PaperPing. Every few days I'll share one new paper that fits what this channel reads, with a "
    "short note on why: the earlier thread it relates to and who might like it. I learn from the links you "
    "share here and from your reactions and replies, to my posts too. `/paperping help` lists the settings "
    "(frequency, style, pause, mentions, forget-me)."
)


def _team(body: dict[str, Any], event: dict[str, Any]) -> str:
    return str(body.get("team_id") or event.get("team") or "")


def handle_message(ctx: AppContext, client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
    team, channel = _team(body, event), str(event.get("channel") or "")
    subtype = event.get("subtype")
    if subtype == "message_deleted":
        with ctx.db.connection() as conn:
            store.delete_thread(conn, team, channel, str(event.get("deleted_ts")))
        return
    if subtype == "message_changed":
        event = {**(event.get("message") or {}), "channel": channel}
    ctx.ensure_channel(client, team, channel)
    message = message_from_slack(event, team, channel, domain=ctx.domain(team))
    if message is None:
        return
    with ctx.db.connection() as conn:
        human = bool(event.get("user")) and not event.get("bot_id")
        if human and subtype != "message_changed":
            post_store.record_activity(conn, team, channel, message.posted_at)
        roots = {message.thread_ts} if message.is_reply else set()
        follows = bool(roots) and store.load_message_id(conn, team, channel, message.thread_ts or "") is not None
        if message.papers or follows:
            index_messages(conn, [message])
        elif subtype == "message_changed":
            # the edit removed the paper link: the message no longer belongs in the base
            store.delete_messages(conn, team, channel, [message.ts])


def handle_reaction(ctx: AppContext, body: dict[str, Any], event: dict[str, Any], added: bool) -> None:
    item = event.get("item") or {}
    if item.get("type") != "message":
        return
    team, channel = _team(body, event), str(item.get("channel"))
    with ctx.db.connection() as conn:
        message_id = store.load_message_id(conn, team, channel, str(item.get("ts")))
        if message_id is None:
            return
        if added:
            at = ts_to_datetime(str(event.get("event_ts") or item.get("ts")))
            store.add_reaction(conn, message_id, team, channel, str(event["user"]), str(event["reaction"]), at)
        else:
            store.remove_reaction(conn, message_id, str(event["user"]), str(event["reaction"]))


def handle_joined(ctx: AppContext, client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
    team, channel = _team(body, event), str(event.get("channel"))
    if event.get("user") != ctx.bot_user_id(client, team):
        ctx.ensure_channel(client, team, channel)
        return
    ctx.ensure_channel(client, team, channel)
    ctx.activate_channel(team, channel)
    ctx.pacer.post(client.chat_postMessage, channel=channel, text=INTRO)
    threading.Thread(target=ctx.backfill, args=(client, team, channel), daemon=True, name=f"backfill-{channel}").start()


def register(app: App, ctx: AppContext) -> None:
    def on(kind: str, fn: Callable[..., None]) -> None:
        app.event(kind)(fn)

    def message(client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
        handle_message(ctx, client, body, event)

    def reaction_added(body: dict[str, Any], event: dict[str, Any]) -> None:
        handle_reaction(ctx, body, event, True)

    def reaction_removed(body: dict[str, Any], event: dict[str, Any]) -> None:
        handle_reaction(ctx, body, event, False)

    def member_joined(client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
        handle_joined(ctx, client, body, event)

    on("message", message)
    on("reaction_added", reaction_added)
    on("reaction_removed", reaction_removed)
    on("member_joined_channel", member_joined)
