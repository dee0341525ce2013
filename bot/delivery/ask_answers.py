"""Answers about what the channel read and discussed, for the three places a member asks: `/paperping ask`, a
mention of PaperPing outside a paper's thread, and Slack's AI app panel. One rule for all three:

- scope is the asker's: only channels they are a member of now (their stored member lists refreshed, as for
  App Home) where PaperPing still is, in the workspace asked from; never a DM;
- one answer every ``ASK_COOLDOWN`` a member, run off the listener pool (the slow-work pool bounds it);
- a written answer counts against the member's and the channel's hourly LLM caps; without one, the list.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
from slack_sdk import WebClient

from bot.app_context import AppContext
from bot.slack.members import refresh_for_member
from bot.views.memory_text import render_answer
from bot.views.post_blocks import works_again
from socialrag import storage
from socialrag.recommender import MemoryAnswer, ask_memory

log = logging.getLogger(__name__)

ASK_COOLDOWN = timedelta(seconds=20)  # between two of a member's questions, wherever asked
ANSWER_SECONDS = 25.0  # an answer's time: reading the channels, then writing (the rest is Slack's)
MAX_CHANNELS = 20  # channels one question searches at most (the panel without a channel in view)
MAX_QUESTION = 500  # characters of a question that are read
ASK_AGAIN = "You asked me a moment ago; ask again from"  # how a member asking within ASK_COOLDOWN is told
NOT_SHARED = (
    "I can only answer about a channel that you and I are both in now. Ask in one of them, or open me from one."
)
NOT_LISTED = (
    "I can only answer about a channel I know you are in, and you asked me to forget you in this workspace, so I "
    "keep no list of your channels. `/paperping remember-me` lifts that."
)


def llm_budget(ctx: AppContext, team: str, channel: str | None, user: str) -> str | None:
    """Count one LLM call for a member's question; a sentence when their hour's or the channel's cap is reached
    (``channel`` None: a question over all their channels, from their DM, counts against their own cap only)."""
    settings = ctx.settings
    with ctx.db.connection() as conn:
        reached = storage.usage.take_llm_call(
            conn,
            team,
            channel,
            user,
            datetime.now(UTC),
            per_member=settings.llm_per_member_hour,
            per_channel=settings.llm_per_channel_hour,
        )
    if reached == "member":
        return f"I make at most {settings.llm_per_member_hour} language-model calls an hour for one member's questions"
    if reached == "channel":
        return (
            f"I make at most {settings.llm_per_channel_hour} language-model calls an hour for this channel's questions"
        )
    return None


def asker_channels(
    ctx: AppContext, client: WebClient, team: str, user: str, channel: str | None
) -> dict[str, str] | str:
    """Channel id -> name of the channels this member may ask about: ``channel`` alone when given (and theirs),
    else every channel they share with PaperPing now; or the sentence saying why none."""
    now = datetime.now(UTC)
    if channel is not None and (not channel or channel.startswith("D")):
        channel = None
    # a question about one channel reads that channel's list only: the member's other lists are not its business
    refresh_for_member(ctx.db, ctx.pacer.call, client, team, user, now, channel_id=channel)
    with ctx.db.connection() as conn:
        mine = dict(storage.workspaces.load_member_channels(conn, team, user, current=True))
        if not mine and storage.privacy.is_forgotten(conn, (team,), user):
            return NOT_LISTED
    if channel is not None:
        return {channel: mine[channel]} if channel in mine else NOT_SHARED
    if not mine:
        return NOT_SHARED
    return dict(list(mine.items())[:MAX_CHANNELS])


def answer_ask(
    ctx: AppContext, client: WebClient, team: str, user: str, question: str, channel: str | None, *, llm_channel: str
) -> str:
    """The answer to a member's question, as Slack text, or a sentence saying why there is none now."""
    found = memory_answer(ctx, client, team, user, question, channel, llm_channel=llm_channel)
    return found if isinstance(found, str) else render_answer(*found)


def memory_answer(
    ctx: AppContext,
    client: WebClient,
    team: str,
    user: str,
    question: str,
    channel: str | None,
    *,
    llm_channel: str,
    on_found: Callable[[MemoryAnswer, dict[str, str]], None] | None = None,
    asked_at: float | None = None,
) -> tuple[MemoryAnswer, dict[str, str]] | str:
    """The answer to a member's question with the channels it may name (id -> name), or a sentence saying why
    there is none now; ``on_found`` is given the papers found while the written answer is still being written.
    The answer has ``ANSWER_SECONDS`` from ``asked_at`` (a ``time.monotonic()``; else from here): channels not
    read in time are said, and the LLM gets what is left."""
    until = (asked_at if asked_at is not None else time.monotonic()) + ANSWER_SECONDS
    recommender = ctx.recommender
    if recommender is None:
        return "Questions about the channel's history are answered where PaperPing runs as a service (`paperping run`)."
    question = " ".join(question.split())[:MAX_QUESTION]
    if not question:
        return "Ask me what the channel read or discussed: `/paperping ask what have we read about retrieval?`"
    scope = asker_channels(ctx, client, team, user, channel)
    if isinstance(scope, str):
        return scope
    now = datetime.now(UTC)
    with ctx.db.connection() as conn:
        cooling = storage.usage.take_cooldown(conn, team, user, "ask", now, ASK_COOLDOWN)
    if cooling is not None:
        return f"{ASK_AGAIN} {works_again(cooling)}."
    llm = recommender.llm_for(team, llm_channel)
    capped = llm_channel if llm_channel[:1] in ("C", "G") else None  # a DM's question: the member's cap alone
    if llm is not None:
        llm = llm.with_budget(lambda: llm_budget(ctx, team, capped, user)).with_deadline(until)
    embedder = recommender.embedder

    def encode(text: str) -> np.ndarray:
        return np.asarray(embedder.encode([text])[0], dtype=np.float32)

    def found(answer: MemoryAnswer) -> None:
        conn.commit()  # no transaction stays open while Slack is called and the LLM writes
        if on_found is not None and isinstance(scope, dict):
            on_found(answer, scope)

    with ctx.db.connection() as conn:
        answer = ask_memory(
            conn, embedder.model_name, encode, team, list(scope), user, question, llm, now, found, until
        )
    return answer, scope
