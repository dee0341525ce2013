"""Answers in Slack's agent messaging experience: a member writes to PaperPing in its Messages tab (``agent_view``)
or in a thread of the older AI app panel (``assistant_view``), and the answer is streamed into the thread as it is
made (``chat.startStream`` / ``appendStream`` / ``stopStream``, through ``slack_sdk``'s ``ChatStream``):

1. the papers found, with their sources, as soon as the search is done;
2. the short written answer, once the LLM has written it and it has passed the check (nothing unchecked is ever
   shown: an answer that fails the check is replaced by a note saying why);
3. feedback buttons (Helpful / Not helpful), whose clicks are kept (``answer_feedback``) and counted in `status`.

The answer itself is the one `/paperping ask` gives (``delivery.ask_answers``): same scope, cooldown and caps.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk import WebClient
from slack_sdk.web.chat_stream import ChatStream

from bot.app_context import AppContext
from bot.delivery.ask_answers import memory_answer
from bot.views.memory_text import MARKDOWN, note_part, render_answer, written_part
from bot.views.post_blocks import clip, escape
from socialrag import storage
from socialrag.recommender import MemoryAnswer

log = logging.getLogger(__name__)

FEEDBACK_ACTION = "answer_feedback"
WORKING = "is looking through the channel's papers and threads…"
GREETING = (
    "Ask me what your channels read and discussed: papers on a topic, where the group talked about it, who "
    "here knows it, or what you missed. I answer from the channels you and I are both in, and name people "
    "without notifying them."
)
GREET_EVERY = timedelta(days=30)  # the greeting when a member opens the Messages tab, at most once a month
SOURCES = 5  # papers listed as the answer's sources
STREAM_BUFFER = 4000  # characters kept before a piece is sent; each step of the answer is sent whole


def feedback_blocks(about: str | None) -> list[dict[str, Any]]:
    """Slack's feedback buttons under an answer; each value says which channel the answer was about ("" for an
    answer over several), read back when a member clicks."""
    where = about or ""
    return [
        {
            "type": "context_actions",
            "elements": [
                {
                    "type": "feedback_buttons",
                    "action_id": FEEDBACK_ACTION,
                    "positive_button": {
                        "text": {"type": "plain_text", "text": "Helpful"},
                        "accessibility_label": "This answer was helpful",
                        "value": f"helpful:{where}",
                    },
                    "negative_button": {
                        "text": {"type": "plain_text", "text": "Not helpful"},
                        "accessibility_label": "This answer was not helpful",
                        "value": f"not:{where}",
                    },
                }
            ],
        }
    ]


def read_feedback(value: str) -> tuple[bool, str | None] | None:
    """(helpful, the channel the answer was about) from a clicked button's value; None for a value PaperPing never
    wrote."""
    mark, _, about = value.partition(":")
    if mark not in ("helpful", "not") or (about and about[:1] not in ("C", "G")) or len(about) > 30:
        return None
    return mark == "helpful", about or None


def sources(answer: MemoryAnswer) -> list[dict[str, str]]:
    """The papers an answer rests on, as Slack's URL sources (https links only; titles escaped as every view
    escapes others' words, so that markup the cleaning missed can neither notify nor link)."""
    found = [i for i in answer.items if i.url and i.url.startswith("https://")]
    return [
        {"type": "url", "url": i.url or "", "text": escape(clip(i.title, 100)) or "a paper"} for i in found[:SOURCES]
    ]


def searched(answer: MemoryAnswer, scope: dict[str, str]) -> str:
    """What the search went through, as its task says: "Searched #nlp-lab's papers and threads"."""
    where = (
        f"#{escape(clip(scope.get(answer.channels[0], ''), 80))}'s" if len(answer.channels) == 1 else "your channels'"
    )
    return f"Searched {where} papers and threads"


def search_task(answer: MemoryAnswer, scope: dict[str, str]) -> dict[str, Any]:
    """The search, done, with the papers it found as the answer's sources (Slack shows it as a task card)."""
    task: dict[str, Any] = {"type": "task_update", "id": "search", "title": searched(answer, scope)}
    task["status"] = "complete"
    if sources(answer):
        task["sources"] = sources(answer)
    return task


class _Paced:
    """The Web API client with each call through PaperPing's Slack pacer (a 429 waited out as Slack asks), for
    ``ChatStream``, which calls the client itself."""

    def __init__(self, client: WebClient, pace: Callable[..., Any]) -> None:
        self.client, self.pace = client, pace

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)
        return (lambda **kwargs: self.pace(method, **kwargs)) if callable(method) else method


SORRY = "Something went wrong while I looked; please ask again in a minute."


def stream_answer(
    ctx: AppContext,
    client: WebClient,
    team: str,
    user: str,
    dm: str,
    thread_ts: str,
    question: str,
    in_view: str | None,
    asked_at: float | None = None,
) -> None:
    """Answer ``question`` in the member's thread ``thread_ts`` of their DM ``dm``, streamed; from the channel in
    view when there is one, else from every channel the member shares with PaperPing. A stream that started and
    then failed is stopped with a sentence saying so, never left open."""
    stream = ChatStream(
        _Paced(client, ctx.pacer.call),  # type: ignore[arg-type]
        logger=log,
        channel=dm,
        thread_ts=thread_ts,
        recipient_team_id=team,
        recipient_user_id=user,
        buffer_size=STREAM_BUFFER,
    )
    shown: list[MemoryAnswer] = []

    def found(answer: MemoryAnswer, scope: dict[str, str]) -> None:
        # the papers while the written answer is being written
        stream.append(markdown_text=render_answer(answer, scope, MARKDOWN), chunks=[search_task(answer, scope)])
        shown.append(answer)

    try:
        got = memory_answer(
            ctx, client, team, user, question, in_view, llm_channel=in_view or dm, on_found=found, asked_at=asked_at
        )
        if isinstance(got, str):  # a refusal or a cooldown: said, with nothing to mark
            stream.stop(markdown_text=got)
            return
        answer, scope = got
        if shown:
            part = written_part(answer, MARKDOWN) or note_part(answer, MARKDOWN)
            text = f"\n\n**In short:** {part}" if answer.text else (f"\n\n{part}" if part else "")
        else:
            text = render_answer(answer, scope, MARKDOWN)
        # marks count for a channel only when the answer was that channel's alone, all of it searched
        about = answer.channels[0] if len(answer.channels) == 1 and not answer.unsearched else None
        chunks = [search_task(answer, scope)] if not shown else None
        stream.stop(markdown_text=text or None, blocks=feedback_blocks(about), chunks=chunks)
    except Exception:
        if stream.ts is None:
            raise  # nothing was shown yet: the caller says so in the thread
        log.exception("a streamed answer in %s failed midway; it is closed with a note", dm)
        with contextlib.suppress(Exception):
            stream.stop(markdown_text=f"\n\n_{SORRY}_")


def answer_in_thread(
    ctx: AppContext,
    client: WebClient,
    team: str,
    user: str,
    dm: str,
    thread_ts: str,
    question: str,
    in_view: str | None,
    busy: Callable[[], None],
) -> None:
    """Queue the streamed answer on the slow-work pool (``busy`` says so when the member already has one
    running), with the thread's status set meanwhile (once: a status is not worth waiting out a 429 for, the
    listener answers Slack first); a failure is said in the thread and logged. The answer's time counts from
    here."""
    asked_at = time.monotonic()

    def work() -> None:
        try:
            stream_answer(ctx, client, team, user, dm, thread_ts, question, in_view, asked_at)
        except Exception:  # the member gets a sentence, the admin the log
            log.exception("answering in the Messages tab failed")
            try:
                ctx.pacer.post(client.chat_postMessage, channel=dm, thread_ts=thread_ts, text=SORRY)
            except Exception:
                log.exception("telling the member in %s failed", dm)

    try:
        client.assistant_threads_setStatus(channel_id=dm, thread_ts=thread_ts, status=WORKING)
    except Exception:  # a courtesy: the answer still comes
        log.warning("setting the thread's status in %s failed", dm, exc_info=True)
    if not ctx.slow.submit(work, owner=f"{team}:{user}"):
        busy()


NO_MARK_KEPT = (
    "Your mark was not kept: you asked me to forget you, so I keep nothing of yours here. "
    "`/paperping remember-me` lifts that."
)


def record_feedback(ctx: AppContext, team: str, user: str, channel: str, ts: str, value: str) -> str | None:
    """Keep a member's click on an answer's feedback buttons: None when kept, else why not ("ignored": a value
    PaperPing never wrote; "forgotten": the member is on the workspace's forget list, and nothing is kept)."""
    read = read_feedback(value)
    if read is None or not channel.startswith("D") or not ts:
        return "ignored"
    helpful, about = read
    with ctx.db.connection() as conn:
        kept = storage.usage.record_answer_feedback(conn, team, channel, ts, user, about, helpful, datetime.now(UTC))
    return None if kept else "forgotten"
