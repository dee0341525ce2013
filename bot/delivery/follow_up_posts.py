"""The Slack side of follow-ups (what is noticed, and when it is said, is the core's: ``paper_watch`` and
``thread_follow_ups``): each one a reply in the thread of the share it follows, at Slack's pace."""

from __future__ import annotations

from collections.abc import Callable

from slack_sdk import WebClient

from bot.slack.pacer import SlackPacer
from bot.views.follow_up_text import render_follow_up
from bot.views.post_blocks import mrkdwn
from socialrag.recommender import FollowUpNote, SendFollowUp


def thread_replier(pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> SendFollowUp:
    """Send a follow-up in its thread; the reply's ts."""

    def send(team: str, channel: str, thread_ts: str, note: FollowUpNote) -> str:
        text = render_follow_up(note)
        response = pacer.post(
            client_for(team).chat_postMessage,
            channel=channel,
            thread_ts=thread_ts,
            text=text,
            blocks=[{"type": "section", "text": mrkdwn(text)}],
            unfurl_links=False,
            unfurl_media=False,
        )
        return str(response["ts"])

    return send
