"""Step 4 in a member's thread: a short reply with context on a paper a member shares (channels with
`context on`).

A share is noted when its message is stored (``note_share``: one row per message, so a resent event or an
unfurl's edit never makes a second reply). The reply waits until the paper is looked up and embedded, goes at
most one a minute per channel, and is not sent when nothing grounded links the paper to the channel. This module
decides; the group space's side only sends (``SendReply``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.models import Message
from socialrag.recommender.rank.engagement import ScoringConfig
from socialrag.recommender.serve.thread_answers import ShareContext, share_context
from socialrag.storage.share_replies import WaitingReply

log = logging.getLogger(__name__)

GIVE_UP_AFTER = timedelta(minutes=10)  # a share whose paper is not looked up by then gets no reply
# (the share to answer, what to say) -> the id (Slack's ts) of the reply sent in its thread
SendReply = Callable[[WaitingReply, ShareContext], str]


def note_share(conn: psycopg.Connection, message: Message, *, by_member: bool) -> bool:
    """A member's top-level share in a channel with context on: noted for a reply. True when noted now."""
    if not by_member or not message.papers or (message.thread_ts and message.thread_ts != message.ts):
        return False
    if not storage.settings.load_channel_settings(conn, message.team_id, message.channel_id).share_context:
        return False
    return storage.share_replies.want_share_reply(conn, message.team_id, message.channel_id, message.ts)


def reply_to_shares(
    db: Database,
    model: str,
    send: SendReply,
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
        if not _claim(db, w, now):
            continue
        try:
            sent += _reply(db, model, send, w, now, window_days, scoring)
        except PaperPingError as exc:  # kept as `sending`: given up later, never sent twice
            log.warning("context reply in %s failed: %s", w.channel_id, exc)
        except Exception:  # one share's failure nobody foresaw (logged in full) leaves the others to be answered
            log.exception("context reply in %s failed unexpectedly", w.channel_id)
    return sent


def _claim(db: Database, w: WaitingReply, now: datetime) -> bool:
    """The share's papers are looked up and this process takes the reply (one a minute per channel)."""
    with db.connection() as conn:
        papers = storage.messages.load_message_paper_ids(conn, w.team_id, w.channel_id, w.message_ts)
        if papers and storage.queue.papers_waiting(conn, papers):
            return False
        return storage.share_replies.claim_share_reply(conn, w.team_id, w.channel_id, w.message_ts, now)


def _reply(
    db: Database,
    model: str,
    send: SendReply,
    w: WaitingReply,
    now: datetime,
    window_days: int,
    scoring: ScoringConfig | None,
) -> int:
    with db.connection() as conn:
        found = share_context(
            conn, model, w.team_id, w.channel_id, w.message_ts, window_days=window_days, scoring=scoring
        )
    if isinstance(found, str):
        with db.connection() as conn:
            storage.share_replies.finish_share_reply(
                conn, w.team_id, w.channel_id, w.message_ts, status="silent", now=now, reason=found
            )
        return 0
    ts = send(w, found)
    with db.connection() as conn:
        storage.share_replies.finish_share_reply(
            conn, w.team_id, w.channel_id, w.message_ts, status="replied", now=now, reply_ts=ts
        )
    return 1
