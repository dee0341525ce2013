"""PaperPing in threads: a short reply with context on a paper a member shares (channels with `context on`),
and answers to questions members ask it in a paper's thread (``app_mention``).

A share is noted when its event is stored (``share_replies``, one row per message, so a resent event or an
unfurl's edit never makes a second reply); the reply waits until the paper is looked up and embedded, is sent
at most one a minute per channel, and nothing is sent when nothing grounded links the paper to the channel.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks import escape, link, mrkdwn, quote
from bot.context import AppContext
from bot.dedupe import mark_handled
from bot.pacing import SlackPacer
from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.models import Message
from socialrag.recommender import (
    LIMIT_REACHED,
    Answer,
    ScoringConfig,
    ShareContext,
    answer_question,
    share_context,
)

log = logging.getLogger(__name__)

GIVE_UP_AFTER = timedelta(minutes=10)  # a share whose paper is not looked up by then gets no reply
ABSTRACT_SHOWN = 700


def note_share(conn: Any, message: Message, *, by_member: bool) -> bool:
    """A member's top-level share in a channel with context on: noted for a reply. True when noted now."""
    if not by_member or not message.papers or (message.thread_ts and message.thread_ts != message.ts):
        return False
    if not storage.settings.load_channel_settings(conn, message.team_id, message.channel_id).share_context:
        return False
    return storage.share_replies.want_share_reply(conn, message.team_id, message.channel_id, message.ts)


def context_blocks(found: ShareContext) -> tuple[str, list[dict[str, Any]]]:
    """The reply: the gist and the links to the channel, in short lines; the earlier thread as a link."""
    lines = [escape(x) for x in found.lines]
    if found.thread_link:
        label = f"Earlier thread: {found.thread_title}" if found.thread_title else "Earlier thread"
        lines.append(link(found.thread_link, label))
    text = "\n".join(lines)
    return text, [{"type": "context", "elements": [mrkdwn(text)]}]


def reply_to_shares(
    db: Database,
    model: str,
    pacer: SlackPacer,
    client_for: Callable[[str], WebClient],
    now: datetime | None = None,
    *,
    window_days: int = 90,
    scoring: ScoringConfig | None = None,
) -> int:
    """Reply to the noted shares whose papers are ready (one a minute per channel); how many replies went.
    ``window_days`` and ``scoring``: the process's signal window and half-life."""
    now = now or datetime.now(UTC)
    with db.connection() as conn:
        storage.share_replies.give_up_stale_replies(conn, now - GIVE_UP_AFTER)
        waiting = storage.share_replies.load_waiting_replies(conn)
    sent = 0
    for w in waiting:
        with db.connection() as conn:
            papers = storage.messages.load_message_paper_ids(conn, w.team_id, w.channel_id, w.message_ts)
            if papers and storage.queue.papers_waiting(conn, papers):
                continue
            if not storage.share_replies.claim_share_reply(conn, w.team_id, w.channel_id, w.message_ts, now):
                continue
        try:
            with db.connection() as conn:
                found = share_context(
                    conn, model, w.team_id, w.channel_id, w.message_ts, window_days=window_days, scoring=scoring
                )
            if isinstance(found, str):
                with db.connection() as conn:
                    storage.share_replies.finish_share_reply(
                        conn, w.team_id, w.channel_id, w.message_ts, status="silent", now=now, reason=found
                    )
                continue
            text, blocks = context_blocks(found)
            response = pacer.post(
                client_for(w.team_id).chat_postMessage,
                channel=w.channel_id,
                thread_ts=w.message_ts,
                text=text,
                blocks=blocks,
                unfurl_links=False,
                unfurl_media=False,
            )
            with db.connection() as conn:
                storage.share_replies.finish_share_reply(
                    conn, w.team_id, w.channel_id, w.message_ts, status="replied", now=now, reply_ts=str(response["ts"])
                )
            sent += 1
        except (SlackApiError, PaperPingError) as exc:  # kept as `sending`: given up later, never sent twice
            log.warning("context reply in %s failed: %s", w.channel_id, exc)
        except Exception:  # one share's failure nobody foresaw (logged in full) leaves the others to be answered
            log.exception("context reply in %s failed unexpectedly", w.channel_id)
    return sent


def answer_blocks(answer: Answer) -> str:
    """The answer in the thread: the LLM's checked answer, or plainly why there is none, then the abstract and
    the channel's related threads."""
    paper = link(answer.paper_url, answer.paper_title)
    if answer.text is not None:
        return f"{escape(answer.text)}\n_From the abstract of {paper}; check the paper for details._"
    if answer.why_not == "no LLM is configured here":
        head = (
            f"I can't answer questions here: no language model is configured for PaperPing. I can show the "
            f"abstract of {paper} and the related threads here."
        )
    elif answer.why_not and answer.why_not.startswith(LIMIT_REACHED):
        head = (
            f"I can't answer more questions with the language model right now: "
            f"{answer.why_not.removeprefix(LIMIT_REACHED)}. Try again next hour; here is the abstract of {paper}."
        )
    elif answer.why_not == "the paper's abstract does not say":
        head = f"The abstract of {paper} does not answer that. Here it is, with the related threads here."
    else:
        head = f"I couldn't give an answer I could check against {paper}. Here is its abstract and related threads."
    parts = [head]
    parts.append(f">{quote(answer.abstract, ABSTRACT_SHOWN)}" if answer.abstract else "No abstract is known for it.")
    if answer.related and answer.why_not == "no LLM is configured here":  # otherwise the paper's own link only
        parts.append("Related here: " + ", ".join(link(r.link, r.title) for r in answer.related))
    return "\n".join(parts)


MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")


def llm_budget(ctx: AppContext, team: str, channel: str, user: str) -> str | None:
    """Count one LLM call for a member's question; a sentence when their hour's or the channel's cap is reached."""
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


def handle_mention(ctx: AppContext, client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
    """A member mentioned PaperPing: in a paper's thread, a question to answer there; elsewhere, a hint."""
    team = ctx.slack.channel_team(str(body.get("team_id") or event.get("team") or ""), str(event.get("channel")))
    channel, ts = str(event.get("channel") or ""), str(event.get("ts") or "")
    thread = str(event.get("thread_ts") or "")
    question = MENTION.sub(" ", str(event.get("text") or "")).strip()
    if event.get("bot_id") or not channel or not ts:
        return
    answer: Answer | str = "no paper"
    if thread:
        recommender = ctx.recommender
        llm = recommender.llm_for(team, channel) if recommender is not None else None
        asker = str(event.get("user") or "")
        llm = llm.with_budget(lambda: llm_budget(ctx, team, channel, asker)) if llm is not None else None
        model = recommender.embedder.model_name if recommender is not None else ctx.settings.embed_model
        with ctx.db.connection() as conn:
            answer = answer_question(conn, model, team, channel, thread, question, llm, datetime.now(UTC))
    if isinstance(answer, str):
        text = "Mention me with a question in the thread of a shared paper or of my posts, and I'll answer there."
    else:
        text = answer_blocks(answer)
    ctx.pacer.post(
        client.chat_postMessage,
        channel=channel,
        thread_ts=thread or ts,
        text=text,
        blocks=[{"type": "section", "text": mrkdwn(text)}],
        unfurl_links=False,
        unfurl_media=False,
    )


def register(app: App, ctx: AppContext) -> None:
    def ack_and_note(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        with ctx.db.connection() as conn:
            mark_handled(conn, body)  # a resent copy is dropped: one answer per question

    def answer(client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
        def work() -> None:
            try:
                handle_mention(ctx, client, body, event)
            except Exception:  # the member gets no half answer; the failure is logged for the admin
                log.exception("answering a mention failed")

        if not ctx.slow.submit(work):  # an answer may take an LLM's seconds: off bolt's listener pool
            log.warning("too many slow requests; a mention in %s is not answered", event.get("channel"))

    app.event("app_mention")(ack=ack_and_note, lazy=[answer])
