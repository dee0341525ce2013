"""The channel report in Slack: the month's chart uploaded with ``files.uploadV2``. Which reports are due, what
they hold and how failures are retried is decided by ``socialrag.report.monthly``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from slack_sdk import WebClient

from bot.slack.pacer import SlackPacer
from socialrag.db import Database
from socialrag.report import UploadReport
from socialrag.report import post_due_reports as decide_due_reports
from socialrag.report import post_month_report as decide_month_report


def uploader(pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> UploadReport:
    """Upload a report's chart and its lines into the channel, at Slack's pace."""

    def upload(team: str, channel: str, png: Path, text: str, title: str) -> None:
        pacer.call(
            client_for(team).files_upload_v2,
            channel=channel,
            file=str(png),
            filename="paperping-month.png",
            title=title,
            alt_txt="Shares, thread replies and reactions per week, and PaperPing's posts",
            initial_comment=text,
        )

    return upload


def post_month_report(
    db: Database, pacer: SlackPacer, client: WebClient, team: str, channel: str, now: datetime
) -> None:
    """`/paperping report`: this month's report now, through this workspace's client."""
    decide_month_report(db, uploader(pacer, lambda _: client), team, channel, now)


def post_due_reports(db: Database, pacer: SlackPacer, client_for: Callable[[str], WebClient], now: datetime) -> int:
    """The monthly reports that are due, uploaded to Slack; how many went."""
    return decide_due_reports(db, uploader(pacer, client_for), now)
