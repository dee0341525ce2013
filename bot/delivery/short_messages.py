"""One short mrkdwn message from PaperPing (a reply in a thread, an announcement, an answer): a single section taken
as written, no link previews, at Slack's pace; the shared way every delivery sends text of its own."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from bot.slack.pacer import SlackPacer
from bot.views.post_blocks import mrkdwn


def post_text(pacer: SlackPacer, client: WebClient, channel: str, text: str, *, thread_ts: str | None = None) -> str:
    """Post ``text`` in the channel (in the thread of ``thread_ts`` when given); the message's ts."""
    thread: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
    response = pacer.post(
        client.chat_postMessage,
        channel=channel,
        text=text,
        blocks=[{"type": "section", "text": mrkdwn(text)}],
        unfurl_links=False,
        unfurl_media=False,
        **thread,
    )
    return str(response["ts"])
