"""The Slack side of follow-ups (what is noticed, and when it is said, is the core's: ``paper_watch`` and
``thread_follow_ups``): each one a reply in the thread of the share it follows, at Slack's pace."""

from __future__ import annotations

from collections.abc import Callable

from slack_sdk import WebClient

from bot.delivery.short_messages import post_text
from bot.slack.pacer import SlackPacer
from bot.views.follow_up_text import render_follow_up
from socialrag.recommender import FollowUpNote, SendFollowUp


def thread_replier(pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> SendFollowUp:
    """Send a follow-up in its thread; the reply's ts."""

    def send(team: str, channel: str, thread_ts: str, note: FollowUpNote) -> str:
        return post_text(pacer, client_for(team), channel, render_follow_up(note), thread_ts=thread_ts)

    return send
