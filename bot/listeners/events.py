"""Event listeners: paper links, thread replies, reactions, edits, deletions, and joining a channel.

Each listener turns Slack's payload into a call of the knowledge base's live entry points
(``socialrag.knowledge``: a message, an edit, a deletion, a reaction), which own the rule of what is kept, on
one connection with the event's de-duplication record: both commit together or neither does. What an event
brings is stored under the workspace bolt authorized it for (``event_team``), the one whose token answers it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import psycopg
from slack_bolt import App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.app_context import AppContext
from bot.listeners.assistant import answer_message
from bot.slack.dedupe import mark_handled, no_copy_left
from bot.slack.payloads import channel_from_slack, message_from_slack, parse_ts
from socialrag import knowledge, storage
from socialrag.errors import BadRecord, PaperPingError, PermanentError
from socialrag.models import Message
from socialrag.recommender import note_share

log = logging.getLogger(__name__)

CHANNEL_NAME_MAX = 80  # Slack's own limit on a channel's name; a longer one is not Slack's and is ignored

INTRO = (
    "Hi, I'm PaperPing. Every few days I'll share one new paper that fits what this channel reads, with a "
    "short note on why. I'm reading the links shared here, newest first: my first pick starts from the latest "
    "while I read the rest. I learn from your reactions and replies. `/paperping help` lists the settings."
)


def event_team(context: BoltContext, body: dict[str, Any]) -> str:
    """The workspace an event is stored under: the one bolt authorized it for (the installation of the event's
    ``authorizations``), whose token PaperPing answers with. In a Slack Connect channel the outer ``team_id`` may
    be the partner organisation's workspace, where PaperPing may not even be installed."""
    event = body.get("event")
    inner = event.get("team") if isinstance(event, dict) else None
    return str(context.team_id or body.get("team_id") or inner or "")


def handle_message(
    ctx: AppContext, conn: psycopg.Connection, client: WebClient, team: str, event: dict[str, Any]
) -> None:
    channel = str(event.get("channel") or "")
    subtype = event.get("subtype")
    if event.get("channel_type") == "im":  # nothing said in a DM is indexed, edited or not, whoever said it
        own = channel.startswith("D") and _members_own(event)
        if own and not subtype and not event.get("bot_id"):  # a question in the Messages tab
            answer_message(ctx, client, team, event)
        if own or subtype != "message_deleted":
            return  # only the deletion of another's message there goes on, and it only takes things out
    if subtype == "message_deleted":
        knowledge.record_deletion(conn, team, channel, str(event.get("deleted_ts") or ""))
        return
    if subtype == "message_changed":
        inner = event.get("message")
        if isinstance(inner, dict):
            handle_edit(ctx, conn, client, team, channel, inner, event.get("previous_message"))
        return
    if subtype in ("channel_name", "group_name"):  # the channel was renamed: answers and App Home say the new name
        handle_rename(ctx, conn, client, team, channel)
        return
    if subtype in ("channel_archive", "group_archive", "channel_unarchive", "group_unarchive"):
        handle_archive(ctx, conn, client, team, channel, archived=subtype.endswith("_archive"))
        return
    by_member = bool(event.get("user")) and not event.get("bot_id")
    message = _parse(ctx, client, team, channel, event)
    if message is None:
        return
    if not by_member and message.is_reply and event.get("user") == ctx.slack.bot_user_id(client, team):
        return  # PaperPing's own answers and context replies in a thread are not the group's replies
    if knowledge.record_message(conn, message, by_member=by_member) and note_share(conn, message, by_member=by_member):
        ctx.wake.index_soon()  # its paper is looked up at once, and the context reply follows


def channel_now(ctx: AppContext, client: WebClient, channel: str, what: str) -> dict[str, Any] | None:
    """The channel as Slack says it is now (``conversations.info``), for an event about it that may be late or
    resent; None, logged with ``what`` the event said, when Slack does not say."""
    try:
        info = ctx.pacer.call(client.conversations_info, channel=channel)["channel"]
    except (PaperPingError, KeyError, TypeError) as exc:
        log.warning("%s was %s, and Slack did not say so: %s", channel, what, exc)
        return None
    return info if isinstance(info, dict) else None


def handle_rename(ctx: AppContext, conn: psycopg.Connection, client: WebClient, team: str, channel: str) -> None:
    """A rename: the channel's name as Slack gives it now, not as the event says, so that a resent or late event
    never brings back an older name."""
    info = channel_now(ctx, client, channel, "renamed")
    found = channel_from_slack(info, team) if info is not None else None
    if found is not None and 0 < len(found.name) <= CHANNEL_NAME_MAX:
        storage.workspaces.rename_channel(conn, team, channel, found.name)


ARCHIVED = "slack: is_archived"  # the reason a channel stopped when it was archived, as a post refused there says


def handle_archive(
    ctx: AppContext, conn: psycopg.Connection, client: WebClient, team: str, channel: str, *, archived: bool
) -> None:
    """The channel was archived: its posts stop, with why. Unarchived, a channel that stopped for that alone starts
    again (its next slot scheduled, as on joining), if PaperPing is still in it; else an invitation starts it.
    Whether the channel is archived is Slack's word now (``conversations.info``), not the event's: a late copy of
    an archive message never stops a channel unarchived since, and an unarchive message starts nothing while
    Slack says the channel is still archived, or cannot say."""
    current = storage.settings.load_channel_settings(conn, team, channel)
    if current.activated_at is None:
        return  # a channel PaperPing never joined
    info = channel_now(ctx, client, channel, "archived" if archived else "unarchived")
    now_archived = bool(info.get("is_archived")) if info is not None else None
    if archived:
        if now_archived is False:
            log.info("an archive message of %s, which Slack says is not archived: ignored", channel)
        elif current.active:  # archived, or Slack could not say (a post would find out): stopped
            storage.settings.upsert_channel_setting(
                conn, team, channel, active=False, stopped_reason=ARCHIVED, slot_at=None
            )
            log.info("%s was archived: its posts stop", channel)
        return
    if info is None or now_archived is not False:
        return  # still archived, or Slack could not say: `/paperping resume` or an invitation starts it
    if not current.active and current.stopped_reason == ARCHIVED and info.get("is_member", True):
        ctx.channels.activate(team, channel)
        log.info("%s was unarchived: its posts start again", channel)


def _members_own(event: dict[str, Any]) -> bool:
    """Whether a DM event is a member's own message (new, edited or deleted), not PaperPing's."""
    found = [event] + [event[k] for k in ("message", "previous_message") if isinstance(event.get(k), dict)]
    if len(found) > 1:
        found = found[1:]  # an edit or a deletion: the message it is of
    return any(bool(m.get("user")) and not m.get("bot_id") for m in found)


def _parse(ctx: AppContext, client: WebClient, team: str, channel: str, raw: dict[str, Any]) -> Message | None:
    """The event's message, None for kinds never stored, and a malformed one logged and dropped."""
    ctx.slack.ensure_channel(client, team, channel)
    try:
        return message_from_slack({**raw, "channel": channel}, team, channel, domain=ctx.slack.domain(team))
    except BadRecord as exc:
        log.warning("a message event from %s was malformed: %s; ignored", channel, exc)
        return None


def handle_edit(
    ctx: AppContext,
    conn: psycopg.Connection,
    client: WebClient,
    team: str,
    channel: str,
    inner: dict[str, Any],
    previous: object = None,
) -> None:
    """``message_changed``: an edit, or the tombstone Slack leaves when a thread parent with replies is
    deleted. ``previous`` is the message before the edit, as the event gives it."""
    if inner.get("subtype") == "tombstone":
        knowledge.record_deletion(conn, team, channel, str(inner.get("ts") or ""))
        return
    message = _parse(ctx, client, team, channel, inner)
    if message is not None:
        knowledge.record_edit(conn, message, was_share=_was_share(ctx, team, channel, previous))


def _was_share(ctx: AppContext, team: str, channel: str, previous: object) -> bool | None:
    """Whether the message linked a paper before the edit; None when the event does not say (no text given)."""
    if not isinstance(previous, dict) or not isinstance(previous.get("text"), str):
        return None
    try:
        before = message_from_slack({**previous, "channel": channel}, team, channel, domain=ctx.slack.domain(team))
    except BadRecord:
        return None
    return before is not None and bool(before.papers)


def handle_reaction(conn: psycopg.Connection, team: str, event: dict[str, Any], added: bool) -> None:
    """A reaction on a message. One missing who, which emoji, which message or when (or not as text) is logged and
    dropped: raised, it would be answered as a failure and sent again three times, to fail alike."""
    item = event.get("item")
    if not isinstance(item, dict) or item.get("type") != "message":
        return
    fields = (item.get("channel"), item.get("ts"), event.get("user"), event.get("reaction"))
    try:
        when = parse_ts(event.get("event_ts") or item.get("ts"), "event_ts")[1]
    except BadRecord as exc:
        log.warning("a reaction event was malformed: %s; ignored", exc)
        return
    if not all(isinstance(f, str) and f for f in fields):
        log.warning("a reaction event did not say which message, member or emoji; ignored")
        return
    channel, ts, user, emoji = (str(f) for f in fields)
    knowledge.record_reaction(conn, team, channel, ts, user, emoji, added=added, at=when)


def handle_joined(
    ctx: AppContext,
    conn: psycopg.Connection,
    client: WebClient,
    team: str,
    event: dict[str, Any],
    *,
    last_copy: Callable[[], bool] = lambda: False,
) -> None:
    """A member joined a channel; PaperPing itself, invited: the hello, then the channel is joined and its history
    read. ``last_copy``, asked when the hello fails: whether Slack sends this event no more, so that the hello is
    given up and the channel joined without it (a channel never joined is worse than one not greeted)."""
    channel = str(event.get("channel"))
    ctx.slack.ensure_channel(client, team, channel)
    if event.get("user") != ctx.slack.bot_user_id(client, team):
        storage.workspaces.add_channel_member(conn, team, channel, str(event.get("user") or ""))
        return
    ctx.channels.queue_backfill(team, channel)  # before the first slot opens, so that the slot waits for the history
    # a second invitation while PaperPing is in the channel says nothing again; the hello goes before the channel
    # counts as joined, so that one Slack did not take is said when Slack sends the event again
    if not ctx.channels.is_in(team, channel):
        say_hello(ctx, client, channel, last_copy=last_copy)
    ctx.channels.activate(team, channel)
    inviter = event.get("inviter")
    if isinstance(inviter, str) and inviter:
        storage.settings.record_inviter(conn, team, channel, inviter)  # the first inviter stays the steward
    ctx.channels.start_backfill(client, team, channel)  # one reading of a channel's history at a time


# Slack's refusals of the hello that leave PaperPing in the channel, and that no copy of the event would change: it
# joins without the hello, and the channel's first post, refused alike, stops it with why (`/paperping status`)
HELLO_REFUSED_HERE = frozenset({"restricted_action"})  # only admins may post in the channel


def say_hello(
    ctx: AppContext, client: WebClient, channel: str, *, last_copy: Callable[[], bool] = lambda: False
) -> None:
    """The hello on joining. A failure is raised, so that Slack's next copy of the event says the hello; a refusal
    for good in a channel PaperPing is in (``HELLO_REFUSED_HERE``), or a failure of Slack's last copy, is logged,
    and the channel joined."""
    try:
        ctx.pacer.post(client.chat_postMessage, channel=channel, text=INTRO)
    except PermanentError as exc:
        if exc.detail not in HELLO_REFUSED_HERE:
            raise
        log.warning("joined %s without the hello, which Slack refused: %s", channel, exc.detail)
    except (PaperPingError, SlackApiError, OSError) as exc:
        if not last_copy():
            raise
        log.warning(
            "joined %s without the hello: Slack's last copy of the invitation could not say it (%s)", channel, exc
        )


def handle_left(ctx: AppContext, conn: psycopg.Connection, client: WebClient, team: str, event: dict[str, Any]) -> None:
    """PaperPing was removed from a channel (``channel_left``, ``group_left``, or ``member_left_channel``
    naming the bot): that channel stops being scheduled; what it learned there stays until purged."""
    channel = str(event.get("channel") or "")
    if event.get("type") == "member_left_channel" and event.get("user") != ctx.slack.bot_user_id(client, team):
        # a member who left is no longer named or notified in the channel's messages
        storage.workspaces.remove_channel_member(conn, team, channel, str(event.get("user") or ""))
        return
    storage.workspaces.deactivate_channels(conn, team, channel)
    log.info("removed from %s: its posts stop", channel)


Handler = Callable[[psycopg.Connection, WebClient, str, dict[str, Any], BoltContext], None]


def register(app: App, ctx: AppContext) -> None:
    def on(kind: str, handle: Handler) -> None:
        def listener(client: WebClient, context: BoltContext, body: dict[str, Any], event: dict[str, Any]) -> None:
            with ctx.db.connection() as conn:
                handle(conn, client, event_team(context, body), event, context)
                mark_handled(conn, body)  # only now, with what it stored, is a resend of this event a duplicate

        app.event(kind)(listener)

    on("message", lambda conn, client, team, event, _: handle_message(ctx, conn, client, team, event))
    on("reaction_added", lambda conn, client, team, event, _: handle_reaction(conn, team, event, True))
    on("reaction_removed", lambda conn, client, team, event, _: handle_reaction(conn, team, event, False))
    on(
        "member_joined_channel",
        lambda conn, client, team, event, context: handle_joined(
            ctx, conn, client, team, event, last_copy=lambda: no_copy_left(ctx.db, context)
        ),
    )
    for kind in ("channel_left", "group_left", "member_left_channel"):
        on(kind, lambda conn, client, team, event, _: handle_left(ctx, conn, client, team, event))
