"""The Slack side of the group's own papers (what is announced is decided by
``socialrag.recommender.serve.author_news``): one short message in the channel, at Slack's pace."""

from __future__ import annotations

from collections.abc import Callable

from slack_sdk import WebClient

from bot.delivery.short_messages import post_text
from bot.slack.pacer import SlackPacer
from bot.views.news_text import render_own_paper
from socialrag.recommender import OwnPaperNote, SendNews


def news_poster(pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> SendNews:
    """Announce a member's new paper in the channel; the message's ts."""

    def send(team: str, channel: str, note: OwnPaperNote) -> str:
        return post_text(pacer, client_for(team), channel, render_own_paper(note))

    return send
