"""Event listeners: paper links, thread replies, reactions, edits, deletions, and joining a channel.

Each is indexed the way history is (``socialrag.knowledge.index``); everything else a channel says is not stored,
except the time of the last message (for the quiet period before a scheduled post).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import psycopg
from slack_bolt import App
from slack_sdk import WebClient

from bot.context import AppContext
from bot.slack_io import message_from_slack, ts_to_datetime
from socialrag import storage
from socialrag.errors import BadRecord
from socialrag.knowledge import index_messages
from socialrag.models import Message

log = logging.getLogger(__name__)

INTRO = (
    "Hi, I'm PaperPing. Every few days I'll share one new paper that fits what this channel reads, with a "
    "short note on why: the earlier thread it relates to and who might like it. I'm reading the paper links "
    "shared here now, and I learn from your reactions and replies, to my posts too. `/paperping help` lists "
    "the settings (frequency, sources, focus, pause, mentions, forget-me)."
)


def _team(body: dict[str, Any], event: dict[str, Any]) -> str:
    return str(body.get("team_id") or event.get("team") or "")


def handle_message(ctx: AppContext, client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
    team, channel = _team(body, event), str(event.get("channel") or "")
    subtype = event.get("subtype")
    if subtype == "message_deleted":
        with ctx.db.connection() as conn:
            storage.messages.delete_thread(conn, team, channel, str(event.get("deleted_ts") or ""))
        return
    if subtype == "message_changed":
        inner = event.get("message")
        if isinstance(inner, dict):
            handle_edit(ctx, client, team, channel, inner)
        return
    message = _parse(ctx, client, team, channel, event)
    if message is None:
        return
    with ctx.db.connection() as conn:
        if event.get("user") and not event.get("bot_id"):
            storage.posts.record_activity(conn, team, channel, message.posted_at)
        if message.papers or _follows(conn, message):
            index_messages(conn, [message])


def _parse(ctx: AppContext, client: WebClient, team: str, channel: str, raw: dict[str, Any]) -> Message | None:
    """The event's message, None for kinds never stored, and a malformed one logged and dropped."""
    ctx.ensure_channel(client, team, channel)
    try:
        return message_from_slack({**raw, "channel": channel}, team, channel, domain=ctx.domain(team))
    except BadRecord as exc:
        log.warning("a message event from %s was malformed: %s; ignored", channel, exc)
        return None


def _follows(conn: psycopg.Connection, message: Message) -> bool:
    """A reply in a thread PaperPing keeps (its root is stored)."""
    root = message.thread_ts or ""
    return (
        message.is_reply
        and storage.messages.load_message_id(conn, message.team_id, message.channel_id, root) is not None
    )


def handle_edit(ctx: AppContext, client: WebClient, team: str, channel: str, inner: dict[str, Any]) -> None:
    """``message_changed``: an edit, or the tombstone Slack leaves when a thread parent with replies is
    deleted. An edit carries no reactions, so the stored ones stay; losing its paper link takes a share and
    its thread out of the base, gaining one makes a message a share."""
    ts = str(inner.get("ts") or "")
    if inner.get("subtype") == "tombstone":
        with ctx.db.connection() as conn:
            storage.messages.delete_thread(conn, team, channel, ts)
        return
    message = _parse(ctx, client, team, channel, inner)
    if message is None:
        return
    message = replace(message, reactions_known=False)
    with ctx.db.connection() as conn:
        if message.papers or _follows(conn, message):
            index_messages(conn, [message])
        elif message.is_reply:
            storage.messages.delete_messages(conn, team, channel, [message.ts])
        else:
            storage.messages.delete_thread(conn, team, channel, message.ts)


def handle_reaction(ctx: AppContext, body: dict[str, Any], event: dict[str, Any], added: bool) -> None:
    item = event.get("item") or {}
    if item.get("type") != "message":
        return
    team, channel = _team(body, event), str(item.get("channel"))
    with ctx.db.connection() as conn:
        message_id = storage.messages.load_message_id(conn, team, channel, str(item.get("ts")))
        if message_id is None:
            return
        if added:
            at = ts_to_datetime(str(event.get("event_ts") or item.get("ts")))
            storage.messages.add_reaction(
                conn, message_id, team, channel, str(event["user"]), str(event["reaction"]), at
            )
        else:
            storage.messages.remove_reaction(conn, message_id, str(event["user"]), str(event["reaction"]))


def handle_joined(ctx: AppContext, client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
    team, channel = _team(body, event), str(event.get("channel"))
    if event.get("user") != ctx.bot_user_id(client, team):
        ctx.ensure_channel(client, team, channel)
        with ctx.db.connection() as conn:
            storage.workspaces.add_channel_member(conn, team, channel, str(event.get("user") or ""))
        return
    ctx.ensure_channel(client, team, channel)
    ctx.queue_backfill(team, channel)  # before the first slot opens, so that the slot waits for the history
    ctx.activate_channel(team, channel)
    ctx.pacer.post(client.chat_postMessage, channel=channel, text=INTRO)
    threading.Thread(target=ctx.backfill, args=(client, team, channel), daemon=True, name=f"backfill-{channel}").start()


def handle_left(ctx: AppContext, client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
    """PaperPing was removed from a channel (``channel_left``, ``group_left``, or ``member_left_channel``
    naming the bot): that channel stops being scheduled; what it learned there stays until purged."""
    team, channel = _team(body, event), str(event.get("channel") or "")
    if event.get("type") == "member_left_channel" and event.get("user") != ctx.bot_user_id(client, team):
        with ctx.db.connection() as conn:  # a member who left is named, no longer notified
            storage.workspaces.remove_channel_member(conn, team, channel, str(event.get("user") or ""))
        return
    with ctx.db.connection() as conn:
        storage.workspaces.deactivate_channels(conn, team, channel)
    log.info("removed from %s: its posts stop", channel)


def register(app: App, ctx: AppContext) -> None:
    Handler = Callable[[WebClient, dict[str, Any], dict[str, Any]], None]

    def on(kind: str, handle: Handler) -> None:
        def listener(client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
            handle(client, body, event)
            ctx.mark_handled(body)  # only now is a resend of this event a duplicate

        app.event(kind)(listener)

    on("message", lambda client, body, event: handle_message(ctx, client, body, event))
    on("reaction_added", lambda client, body, event: handle_reaction(ctx, body, event, True))
    on("reaction_removed", lambda client, body, event: handle_reaction(ctx, body, event, False))
    on("member_joined_channel", lambda client, body, event: handle_joined(ctx, client, body, event))
    for kind in ("channel_left", "group_left", "member_left_channel"):
        on(kind, lambda client, body, event: handle_left(ctx, client, body, event))
