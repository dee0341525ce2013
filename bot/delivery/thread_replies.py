"""The Slack side of context replies on members' shares (what is said, and when, is decided by
``socialrag.recommender.serve.context_replies``): each reply sent in the share's thread, at Slack's pace."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from slack_sdk import WebClient

from bot.slack.pacer import SlackPacer
from bot.views.replies import context_blocks
from socialrag.db import Database
from socialrag.recommender import ScoringConfig, SendReply, ShareContext
from socialrag.recommender import reply_to_shares as decide_replies
from socialrag.storage.share_replies import WaitingReply


def thread_sender(pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> SendReply:
    """Send a context reply in the thread of the share it answers; the reply's ts."""

    def send(share: WaitingReply, found: ShareContext) -> str:
        text, blocks = context_blocks(found)
        response = pacer.post(
            client_for(share.team_id).chat_postMessage,
            channel=share.channel_id,
            thread_ts=share.message_ts,
            text=text,
            blocks=blocks,
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(response["ts"])

    return send


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
    """The context replies that are due, sent through Slack; how many went."""
    send = thread_sender(pacer, client_for)
    return decide_replies(db, model, send, now, window_days=window_days, scoring=scoring)
