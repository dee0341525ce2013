"""A mrkdwn message from PaperPing (a reply in a thread, an announcement, an answer): sections taken as written,
no link previews, at Slack's pace; the shared way every delivery sends text of its own. A text longer than one
message may hold goes on in more messages, in the first one's thread."""

from __future__ import annotations

from slack_sdk import WebClient

from bot.slack.pacer import SlackPacer
from bot.views.post_blocks import mrkdwn, section_messages


def post_text(pacer: SlackPacer, client: WebClient, channel: str, text: str, *, thread_ts: str | None = None) -> str:
    """Post ``text`` in the channel (in the thread of ``thread_ts`` when given), in sections within Slack's limits
    (``section_messages``); the first message's ts ("" when the text was blank and nothing was posted)."""
    first = ""
    for parts in section_messages(text):
        thread = thread_ts or first
        response = pacer.post(
            client.chat_postMessage,
            channel=channel,
            text="\n".join(parts),
            blocks=[{"type": "section", "text": mrkdwn(part)} for part in parts],
            unfurl_links=False,
            unfurl_media=False,
            **({"thread_ts": thread} if thread else {}),
        )
        first = first or str(response["ts"])
    return first
