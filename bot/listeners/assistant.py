"""PaperPing in Slack's AI app panel (Agents & AI Apps; the panel needs a paid Slack plan), through bolt's
``Assistant``: a member opens it beside a channel and asks what that channel read and discussed.

- ``assistant_thread_started``: a greeting, and suggested prompts built from the channel in view;
- ``assistant_thread_context_changed``: the channel in view, kept in Postgres (any process may answer next)
  with the member whose thread it is (``forget-me`` deletes it);
- a message in the thread (``message.im``): a title for the thread, a status while PaperPing works, then the
  answer, from the channel in view when the member is in it now, else from every channel they share with
  PaperPing (``delivery.ask`` decides, as for `/paperping ask` and mentions).
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from slack_bolt import App, Assistant, BoltContext, Say, SetStatus, SetSuggestedPrompts, SetTitle
from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.store import AssistantThreadContextStore
from slack_sdk import WebClient

from bot.app_context import AppContext
from bot.delivery.ask_answers import MAX_QUESTION, answer_ask
from bot.listeners.commands import MEMBER_BUSY
from bot.slack.dedupe import mark_handled
from bot.slack.members import refresh_for_member
from socialrag import storage
from socialrag.db import Database
from socialrag.recommender import topic_words

log = logging.getLogger(__name__)

GREETING = (
    "Ask me what your channels read and discussed: papers on a topic, where the group talked about it, who "
    "here knows it, or what you missed. I answer from the channels you and I are both in, and name people "
    "without notifying them."
)
WORKING = "is looking through the channel's papers and threads…"


class DatabaseThreadContexts(AssistantThreadContextStore):
    """The channel each assistant thread was opened beside, kept in Postgres (``assistant_threads``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str], user_id: str | None = None) -> None:
        """Keep the thread's channel in view, with whose thread it is; nothing for a member who asked to be
        forgotten in the workspace in view."""
        with self.db.connection() as conn:
            team = context.get("team_id") or ""
            if user_id and storage.privacy.is_forgotten(conn, [team] if team else [], user_id):
                return
            storage.history_search.upsert_assistant_thread(
                conn, channel_id, thread_ts, context.get("team_id") or "", context.get("channel_id"), user_id
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


def register(app: App, ctx: AppContext) -> None:
    contexts = DatabaseThreadContexts(ctx.db)
    assistant = Assistant(thread_context_store=contexts)

    @assistant.thread_started
    def started(
        say: Say,
        set_suggested_prompts: SetSuggestedPrompts,
        payload: dict[str, Any],
        context: BoltContext,
        client: WebClient,
    ) -> None:
        in_view = contexts.save_thread(payload)  # asked next, maybe by another process
        say(GREETING)
        user = str((payload.get("assistant_thread") or {}).get("user_id") or "") or None
        set_suggested_prompts(prompts=suggested_prompts(ctx, client, str(context.team_id or ""), in_view, user))

    @assistant.thread_context_changed
    def context_changed(payload: dict[str, Any]) -> None:
        contexts.save_thread(payload)  # bolt's own handler would keep the channel, not whose thread it is

    @assistant.user_message
    def asked(
        payload: dict[str, Any],
        body: dict[str, Any],
        say: Say,
        set_status: SetStatus,
        set_title: SetTitle,
        context: BoltContext,
        client: WebClient,
    ) -> None:
        team, user = str(context.team_id or ""), str(payload.get("user") or "")
        question = " ".join(str(payload.get("text") or "").split())[:MAX_QUESTION]
        found = contexts.find(channel_id=str(payload.get("channel")), thread_ts=str(payload.get("thread_ts")))
        in_view = found.channel_id if found is not None and found.team_id in ("", team) else None
        set_title(question[:80] or "A question")
        set_status(WORKING)
        dm = str(payload.get("channel") or "")

        def work() -> None:
            try:
                say(answer_ask(ctx, client, team, user, question, in_view or None, llm_channel=in_view or dm))
            except Exception:  # the member gets a sentence, the admin the log
                log.exception("answering in the assistant panel failed")
                say("Something went wrong while I looked; please ask again in a minute.")

        if not ctx.slow.submit(work, owner=f"{team}:{user}"):
            say(MEMBER_BUSY)
        with ctx.db.connection() as conn:
            mark_handled(conn, body)  # a resent copy is dropped: one answer per question

    app.use(assistant)
