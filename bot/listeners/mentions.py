"""A member mentions PaperPing (``app_mention``): in a paper's thread, a question answered there from the paper's
full text or abstract; elsewhere, a question about what the channel read and discussed, answered in a thread from
the channel's own history (``delivery.ask``). Both are bounded alike: one question every 20 s a member, an answer's
time, each LLM call counted against the member's and the channel's hourly caps, and at most ``PER_CHANNEL_HOUR``
answers posted in a channel an hour. The answer is worked out off
bolt's listener pool; a resent copy of the event is dropped, and so is the copy Slack sends again, under a new
event id, each time the message is edited: a message is answered once."""

from __future__ import annotations

import logging
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient

from bot.app_context import AppContext
from bot.delivery.ask_answers import (
    ANSWER_SECONDS,
    ASK_AGAIN,
    ASK_COOLDOWN,
    MAX_QUESTION,
    NOT_LISTED,
    answer_ask,
    llm_budget,
)
from bot.delivery.short_messages import post_text
from bot.listeners.events import event_team
from bot.slack.dedupe import mark_handled
from bot.views.post_blocks import works_again
from bot.views.replies import answer_blocks
from socialrag import storage
from socialrag.recommender import read_question, thread_paper, write_thread_answer

log = logging.getLogger(__name__)

MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
HINT = (
    "Mention me with a question: in a shared paper's thread, about that paper; anywhere else, about what this "
    'channel read and discussed ("what have we read about retrieval?", "who here knows about parsing?").'
)


def handle_mention(ctx: AppContext, client: WebClient, home: str, event: dict[str, Any]) -> None:
    """A member mentioned PaperPing: in a paper's thread, a question about that paper; elsewhere, a question
    about what the channel read and discussed; with no question, a hint. ``home``: the workspace bolt authorized
    the event for (``event_team``); a channel the base holds under one workspace is answered from that one."""
    team = ctx.slack.channel_team(home, str(event.get("channel")))
    channel, ts = str(event.get("channel") or ""), str(event.get("ts") or "")
    thread = str(event.get("thread_ts") or "")
    question = " ".join(MENTION.sub(" ", str(event.get("text") or "")).split())[:MAX_QUESTION]
    if event.get("bot_id") or not channel or not ts or answered_before(ctx, team, channel, ts, event):
        return
    if channel[:1] in ("C", "G"):  # a channel heard of first by a question is known from then on, as by a command
        ctx.slack.ensure_channel(client, team, channel)
    asker = str(event.get("user") or "")
    if not question:  # a bare mention: how to ask, to the asker alone (a row of them posts nothing in the channel)
        tell_asker(ctx, client, team, event, "hint", HINT)
        return
    with ctx.db.connection() as conn:  # a channel or a member that had its hour's answers: no work, the asker told
        full = storage.usage.hourly_cap_reached(conn, team, channel, asker, ANSWERS, datetime.now(UTC), **CAPS)
    if full:
        tell_asker(ctx, client, team, event, "channel full", FULL[full])
        return
    text = answer_in_papers_thread(ctx, team, channel, thread, asker, question) if thread else None
    if text is None:  # outside a paper's thread: a question about what the channel read and discussed
        text = answer_ask(ctx, client, team, asker, question, channel, llm_channel=channel)
    if text == NOT_LISTED:  # it says the asker is on the forget list: only to them, never in the channel's thread
        tell_asker(ctx, client, team, event, "not listed", text)
        return
    if text.startswith(ASK_AGAIN):  # asked within 20 s: told when to ask again, privately, at most once a minute
        tell_asker(ctx, client, team, event, "ask again", text)
        return
    with ctx.db.connection() as conn:  # the message's one answer (an edit of it while this one was written: none)
        if not storage.slack_events.record_event(conn, answered_key(team, channel, ts), team):
            return
        refused = storage.usage.take_llm_call(conn, team, channel, asker, datetime.now(UTC), kind=ANSWERS, **CAPS)
        if refused:  # answers written at once filled the hour meanwhile
            conn.rollback()  # the message not marked answered
    if refused:
        tell_asker(ctx, client, team, event, "channel full", FULL[refused])
        return
    post_text(ctx.pacer, client, channel, text, thread_ts=thread or ts)


# Mentions answered in one channel in an hour, whoever asked: a row of members (or a loop of them) never floods a
# channel with answers. Counted when an answer is posted; one past it is answered by a word to its asker alone.
PER_CHANNEL_HOUR = 20
ANSWERS = "mention answers"  # the key the channel's answers are counted under (``llm_usage.kind``)
CHANNEL_FULL = (
    f"I have answered {PER_CHANNEL_HOUR} questions in this channel this hour, as many as I answer here in one hour. "
    "Please ask again next hour, or ask me privately with `/paperping ask`."
)
# Mentions answered for one member in an hour, wherever they asked: half a channel's hour, so one member never
# takes all of it
PER_MEMBER_HOUR = PER_CHANNEL_HOUR // 2
MEMBER_FULL = (
    f"I have answered {PER_MEMBER_HOUR} of your questions in channels this hour, as many as I answer for one member "
    "in an hour. Please ask again next hour, or ask me privately with `/paperping ask`."
)
FULL = {"member": MEMBER_FULL, "channel": CHANNEL_FULL}  # by the cap reached
CAPS = {"per_member": PER_MEMBER_HOUR, "per_channel": PER_CHANNEL_HOUR}


# Slack sends ``app_mention`` again, under a new event id, each time a message that mentions PaperPing is edited
# (the event then carries ``edited``). Each answered message is noted under its own key, kept as long as event ids
# are (a day); an edit of a message older than that is dropped without looking.
ANSWERED_KEPT = timedelta(days=1)


def answered_key(team: str, channel: str, ts: str) -> str:
    return f"mention:{team}:{channel}:{ts}"[:200]


def answered_before(ctx: AppContext, team: str, channel: str, ts: str, event: dict[str, Any]) -> bool:
    """Whether the message of this mention needs no answer: it was answered already (this is an edit of it), or it
    is an edit of a message older than ``ANSWERED_KEPT``. A message first answered with a hint or a word to wait
    (nothing in the channel) is answered when an edit asks again."""
    if event.get("edited"):
        try:
            posted = datetime.fromtimestamp(float(ts), UTC)
        except (ValueError, OverflowError, OSError):
            return True
        if posted < datetime.now(UTC) - ANSWERED_KEPT:
            return True
    with ctx.db.connection() as conn:
        return storage.slack_events.event_seen(conn, answered_key(team, channel, ts))


def answer_in_papers_thread(
    ctx: AppContext, team: str, channel: str, thread: str, asker: str, question: str
) -> str | None:
    """The answer to a question in the thread at ``thread`` about its paper, as Slack text (or when the member may
    ask again); None when no paper is shared there. Bounded as every question is: one every ``ASK_COOLDOWN`` a
    member, wherever asked, and ``ANSWER_SECONDS`` in all, in which each LLM call is made once (no retry) and
    counted against the member's and the channel's hourly caps. What the answer needs is read first and the
    connection let go: no transaction stays open while the LLM writes."""
    until = time.monotonic() + ANSWER_SECONDS
    recommender = ctx.recommender
    model = recommender.embedder.model_name if recommender is not None else ctx.settings.embed_model
    encode = None
    if recommender is not None:  # a question's meaning, when the paper's passages have vectors
        embedder = recommender.embedder
        encode = lambda text: np.asarray(embedder.encode([text])[0], dtype=np.float32)  # noqa: E731
    with ctx.db.connection() as conn:  # the cooldown is taken before the question is read: a row of mentions
        paper = thread_paper(conn, team, channel, thread, question)  # reads no more than the thread's papers
        if paper is None:
            return None
        cooling = storage.usage.take_cooldown(conn, team, asker, "ask", datetime.now(UTC), ASK_COOLDOWN)
    if cooling is not None:
        return f"{ASK_AGAIN} {works_again(cooling)}."
    with ctx.db.connection() as conn:
        asked = read_question(conn, model, team, channel, thread, paper, question, datetime.now(UTC), encode=encode)
    llm = recommender.llm_for(team, channel) if recommender is not None else None
    if llm is not None:
        llm = llm.with_budget(lambda: llm_budget(ctx, team, channel, asker)).with_deadline(until)
    return answer_blocks(write_thread_answer(asked, llm))


FAILED = "I could not answer that just now (the failure is in PaperPing's log for your admin). Please ask again later."
BUSY = "I am answering too many questions at once to take yours now. Please ask again in a minute."


TOLD_EVERY = timedelta(minutes=1)  # a member is told each reason at most once a minute


def tell_asker(ctx: AppContext, client: WebClient, team: str, event: dict[str, Any], reason: str, text: str) -> None:
    """A word to the member who asked, only to them: their question was not answered, and why. Each ``reason`` at
    most once a minute a member, as the member's other cooldowns are kept (a flood of mentions makes no flood of
    Slack calls, in any process); best effort: a failure here is logged, never raised."""
    channel, user = str(event.get("channel") or ""), str(event.get("user") or "")
    if not channel or not user or event.get("bot_id"):
        return
    thread = {"thread_ts": str(event.get("thread_ts"))} if event.get("thread_ts") else {}
    try:
        with ctx.db.connection() as conn:
            if storage.usage.take_cooldown(conn, team, user, f"told {reason}", datetime.now(UTC), TOLD_EVERY):
                return
        ctx.pacer.call(client.chat_postEphemeral, channel=channel, user=user, text=text, **thread)
    except Exception:
        log.exception("telling a member in %s that their question was not answered failed", channel)


def register(app: App, ctx: AppContext) -> None:
    def ack_and_note(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        with ctx.db.connection() as conn:
            mark_handled(conn, body)  # a resent copy is dropped: one answer per question

    def answer(client: WebClient, context: BoltContext, body: dict[str, Any], event: dict[str, Any]) -> None:
        def work() -> None:
            try:
                handle_mention(ctx, client, team, event)
            except Exception:  # no half answer: the member is told, the failure is logged for the admin
                log.exception("answering a mention failed")
                tell_asker(ctx, client, team, event, "mention failed", FAILED)

        team = event_team(context, body)  # in a Slack Connect channel, not the partner's outer team_id
        member = f"{team}:{event.get('user')}"
        if not ctx.slow.submit(work, owner=member):  # an answer may take an LLM's seconds: off the listener pool
            log.warning("too many slow requests; a mention in %s is not answered", event.get("channel"))
            tell_asker(ctx, client, team, event, "mention busy", BUSY)

    app.event("app_mention")(ack=ack_and_note, lazy=[answer])
