"""PaperPing as Slack's agent (Agents & AI Apps; a paid Slack plan): a member asks, beside a channel or in
PaperPing's Messages tab, what their channels read and discussed.

Slack's agent messaging experience (``agent_view`` in the manifest, the experience for new apps):

- ``app_home_opened`` on the Messages tab: a greeting (at most once a month) and suggested prompts built from the
  channel in view (``listeners.home`` calls ``messages_tab_opened``);
- ``app_context_changed``: the channel in view, kept in Postgres (any process may answer next) with the member it
  is of (``forget-me`` deletes it), and the prompts built again for it;
- a member's message in the Messages tab (``message.im``; each starts a thread, a reply continues it): the answer,
  streamed into the thread (``delivery.agent_answers``), from the channel the message says is in view (its
  ``app_context``) when the member is in it now, else from every channel they share with PaperPing.

The older AI app panel (``assistant_view``, still served for apps made from an older manifest) goes through bolt's
``Assistant``: ``assistant_thread_started`` (greeting and prompts), ``assistant_thread_context_changed``, and a
message in the thread, answered the same way.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from slack_bolt import App, Assistant, BoltContext, Say, SetSuggestedPrompts, SetTitle
from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.store import AssistantThreadContextStore
from slack_sdk import WebClient

from bot.app_context import AppContext
from bot.delivery.agent_answers import GREET_EVERY, GREETING, answer_in_thread
from bot.delivery.ask_answers import MAX_QUESTION
from bot.listeners.commands import MEMBER_BUSY
from bot.slack.dedupe import mark_handled
from bot.slack.members import refresh_for_member
from socialrag import storage
from socialrag.db import Database
from socialrag.recommender import topic_words

log = logging.getLogger(__name__)

CHANNEL_ENTITY = "slack#/types/channel_id"
MEMBERS_VIEW = ""  # the thread_ts under which a member's channel in view in the Messages tab is kept


class DatabaseThreadContexts(AssistantThreadContextStore):
    """The channel each assistant thread was opened beside, kept in Postgres (``assistant_threads``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str], user_id: str | None = None) -> None:
        """Keep the thread's channel in view, with whose thread it is; nothing for a member who asked to be
        forgotten in the workspace in view, nor of a context that does not say its workspace (Slack's always does:
        a row under no workspace would be one forget-me and a purge never reach)."""
        team = context.get("team_id") or ""
        if not team:
            return
        with self.db.connection() as conn:
            if user_id and storage.privacy.is_forgotten(conn, [team], user_id):
                return
            storage.history_search.upsert_assistant_thread(
                conn, channel_id, thread_ts, team, context.get("channel_id"), user_id
            )

    def save_thread(self, payload: dict[str, Any]) -> str | None:
        """The context of an ``assistant_thread_*`` event's thread, with the member whose thread it is; returns the
        channel in view (None when there is none, or the event is malformed: then nothing is kept)."""
        thread = payload.get("assistant_thread")
        seen = thread.get("context") if isinstance(thread, dict) else None
        if not isinstance(thread, dict) or not isinstance(seen, dict) or not seen.get("channel_id"):
            return None
        if thread.get("channel_id") and thread.get("thread_ts"):
            user = thread.get("user_id")
            self.save(
                channel_id=str(thread["channel_id"]),
                thread_ts=str(thread["thread_ts"]),
                context=seen,
                user_id=str(user) if user else None,
            )
        return str(seen["channel_id"])

    def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        with self.db.connection() as conn:
            found = storage.history_search.load_assistant_thread(conn, channel_id, thread_ts)
        if found is None:
            return None
        team, channel = found
        return AssistantThreadContext({"channel_id": channel or "", "team_id": team})


def suggested_prompts(
    ctx: AppContext, client: WebClient, team: str, channel: str | None, user: str | None
) -> list[dict[str, str]]:
    """Up to four questions to start from (Slack shows four at most): what the member missed, what was read last
    week, and two on the words the channel's latest papers are titled with most: only of a channel PaperPing is in
    and that ``user`` is in now (as Slack's member lists said within the day), never of one they only look at."""
    prompts = [
        {"title": "What did I miss?", "message": "What did I miss?"},
        {"title": "Last week's papers", "message": "What did we read last week?"},
    ]
    if channel and user:
        # the list of the channel in view only, read again if a day old
        refresh_for_member(ctx.db, ctx.pacer.call, client, team, user, datetime.now(UTC), channel_id=channel)
        with ctx.db.connection() as conn:
            theirs = dict(storage.workspaces.load_member_channels(conn, team, user, current=True))
            titles = storage.history_search.load_recent_titles(conn, team, channel, 30) if channel in theirs else []
        counts = Counter(w for t in titles for w in topic_words(t) if len(w) > 3 and not w.isdigit())
        if counts:
            word = counts.most_common(1)[0][0]
            prompts.append({"title": f"Read about {word}", "message": f"What have we read about {word}?"})
            prompts.append({"title": f"Who knows {word}", "message": f"Who here knows about {word}?"})
    return prompts


def in_view_of(payload: dict[str, Any], team: str) -> str | None:
    """The channel a member has in view, from the ``app_context`` Slack attaches to an ``agent_view`` event or
    message: its first channel of this workspace (entities come most relevant first); None when there is none."""
    seen = payload.get("app_context") or payload.get("context")
    entities = seen.get("entities") if isinstance(seen, dict) else None
    for entity in entities if isinstance(entities, list) else []:
        if not isinstance(entity, dict) or entity.get("type") != CHANNEL_ENTITY:
            continue
        value, where = entity.get("value"), entity.get("team_id")
        if isinstance(value, str) and value[:1] in ("C", "G") and where in (None, "", team):
            return value
    return None


def keep_view(ctx: AppContext, team: str, user: str, dm: str, in_view: str | None) -> None:
    """The channel a member has in view beside the Messages tab, for a message that comes without one."""
    with ctx.db.connection() as conn:
        if storage.privacy.is_forgotten(conn, [team], user):
            return
        storage.history_search.upsert_assistant_thread(conn, dm, MEMBERS_VIEW, team, in_view, user)


def kept_view(ctx: AppContext, team: str, dm: str, thread_ts: str | None, *, members: bool = True) -> str | None:
    """The channel in view kept for a thread of the older panel, else (``members``) for the member's Messages
    tab."""
    with ctx.db.connection() as conn:
        for key in (thread_ts, MEMBERS_VIEW if members else None):
            found = storage.history_search.load_assistant_thread(conn, dm, key) if key is not None else None
            if found is not None and found[0] in ("", team) and found[1]:
                return found[1]
    return None


def offer_prompts(ctx: AppContext, client: WebClient, team: str, user: str, dm: str) -> None:
    """The Messages tab's suggested prompts (``agent_view`` takes them for the conversation, with no thread), for
    the channel kept as in view when the work runs (the latest of a burst of changes), built off the listener (the
    channel's member list may be read first), two at most at a time a member. A courtesy: one try, no wait on a
    429, nothing when the pool is full."""

    def work() -> None:
        try:
            prompts = suggested_prompts(ctx, client, team, kept_view(ctx, team, dm, None), user)
            client.assistant_threads_setSuggestedPrompts(channel_id=dm, prompts=prompts)
        except Exception:
            log.warning("setting the suggested prompts in %s failed", dm, exc_info=True)

    ctx.slow.submit(work, owner=f"{team}:{user}")  # the member's own two places, shared with their questions


def messages_tab_opened(ctx: AppContext, client: WebClient, team: str, event: dict[str, Any]) -> None:
    """``app_home_opened`` on the Messages tab (``agent_view``): the greeting at most once a month a member, and
    the suggested prompts for the channel in view."""
    user, dm = str(event.get("user") or ""), str(event.get("channel") or "")
    if not user or not dm.startswith("D"):
        return
    named = in_view_of(event, team)
    with ctx.db.connection() as conn:
        if storage.privacy.is_forgotten(conn, [team], user):
            return
        quiet = storage.usage.take_cooldown(conn, team, user, "greeting", datetime.now(UTC), GREET_EVERY)
    if named is not None:
        keep_view(ctx, team, user, dm, named)
    if quiet is None:
        try:
            client.chat_postMessage(channel=dm, text=GREETING)
        except Exception:  # a greeting is a courtesy: no wait on a 429 in the listener
            log.warning("greeting %s in %s failed", user, dm, exc_info=True)
    offer_prompts(ctx, client, team, user, dm)


def members_view(ctx: AppContext, team: str, user: str, dm: str, thread_ts: str | None) -> str | None:
    """The channel in view for a message that names none: the one a panel thread was opened beside (as Slack said
    it, refused when not theirs), else the one kept for the Messages tab when the member is still in it (else
    None: all their channels are searched, rather than a channel they left refusing every question)."""
    if thread_ts is not None and (beside := kept_view(ctx, team, dm, thread_ts, members=False)) is not None:
        return beside
    kept = kept_view(ctx, team, dm, None)
    if kept is None:
        return None
    with ctx.db.connection() as conn:
        theirs = dict(storage.workspaces.load_member_channels(conn, team, user, current=True))
    return kept if kept in theirs else None


def answer_message(ctx: AppContext, client: WebClient, team: str, event: dict[str, Any]) -> None:
    """A member's message to PaperPing in its Messages tab or a panel thread: the answer, streamed in its thread,
    from the channel the message says is in view (refused when it is not theirs), else the one kept as in view."""
    user, dm = str(event.get("user") or ""), str(event.get("channel") or "")
    thread = str(event.get("thread_ts") or event.get("ts") or "")
    question = " ".join(str(event.get("text") or "").split())[:MAX_QUESTION]
    if not user or not dm.startswith("D") or not thread:
        return
    named = in_view_of(event, team)
    in_view = named or members_view(ctx, team, user, dm, str(event.get("thread_ts") or "") or None)

    def busy() -> None:
        ctx.pacer.post(client.chat_postMessage, channel=dm, thread_ts=thread, text=MEMBER_BUSY)

    answer_in_thread(ctx, client, team, user, dm, thread, question, in_view, busy)


def register(app: App, ctx: AppContext) -> None:
    contexts = DatabaseThreadContexts(ctx.db)
    assistant = Assistant(thread_context_store=contexts)

    @assistant.thread_started
    def started(
        say: Say,
        set_suggested_prompts: SetSuggestedPrompts,
        payload: dict[str, Any],
        body: dict[str, Any],
        context: BoltContext,
        client: WebClient,
    ) -> None:
        in_view = contexts.save_thread(payload)  # asked next, maybe by another process
        say(GREETING)
        user = str((payload.get("assistant_thread") or {}).get("user_id") or "") or None
        set_suggested_prompts(prompts=suggested_prompts(ctx, client, str(context.team_id or ""), in_view, user))
        with ctx.db.connection() as conn:
            mark_handled(conn, body)  # a resent copy is dropped: one greeting per thread

    @assistant.thread_context_changed
    def context_changed(payload: dict[str, Any], body: dict[str, Any]) -> None:
        contexts.save_thread(payload)  # bolt's own handler would keep the channel, not whose thread it is
        with ctx.db.connection() as conn:
            mark_handled(conn, body)

    @assistant.user_message
    def asked(
        payload: dict[str, Any],
        body: dict[str, Any],
        set_title: SetTitle,
        context: BoltContext,
        client: WebClient,
    ) -> None:
        if not payload.get("app_context"):  # the older panel's thread is titled by its question
            try:
                set_title(" ".join(str(payload.get("text") or "").split())[:80] or "A question")
            except Exception:  # a title is a courtesy: the answer still comes
                log.warning("titling a panel thread failed", exc_info=True)
        answer_message(ctx, client, str(context.team_id or ""), payload)
        with ctx.db.connection() as conn:
            mark_handled(conn, body)  # a resent copy is dropped: one answer per question

    def view_changed(client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
        team, user, dm = str(body.get("team_id") or ""), str(event.get("user") or ""), str(event.get("channel") or "")
        if not user or not dm.startswith("D"):
            return
        in_view = in_view_of(event, team)
        if in_view != kept_view(ctx, team, dm, None):
            keep_view(ctx, team, user, dm, in_view)
            offer_prompts(ctx, client, team, user, dm)
        with ctx.db.connection() as conn:
            mark_handled(conn, body)

    app.use(assistant)
    app.event("app_context_changed")(view_changed)
