"""The channel report in Slack: the month's chart uploaded step by step (``uploads.upload_files``), so that a
failure says whether the file may have reached the channel. Which reports are due, what they hold and how
failures are retried is decided by ``socialrag.report.monthly``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from slack_sdk import WebClient

from bot.delivery.uploads import Upload, upload_files
from bot.slack.pacer import SlackPacer
from socialrag.db import Database
from socialrag.report import UploadReport
from socialrag.report import post_due_reports as decide_due_reports
from socialrag.report import post_month_report as decide_month_report

ALT_TEXT = "Shares, thread replies and reactions per week, and PaperPing's posts"


def uploader(pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> UploadReport:
    """Upload a report's chart and its lines into the channel, at Slack's pace. Raises ``SourceError`` when
    nothing reached the channel for certain, ``OutcomeUnknown`` when the file may be there."""

    def upload(team: str, channel: str, png: Path, text: str, title: str) -> None:
        chart = Upload("paperping-month.png", png.read_bytes(), title, alt_txt=ALT_TEXT)
        upload_files(pacer, client_for(team), channel, [chart], initial_comment=text)

    return upload


def post_month_report(
    db: Database, pacer: SlackPacer, client: WebClient, team: str, channel: str, now: datetime
) -> None:
    """`/paperping report`: this month's report now, through this workspace's client."""
    decide_month_report(db, uploader(pacer, lambda _: client), team, channel, now)


def post_due_reports(db: Database, pacer: SlackPacer, client_for: Callable[[str], WebClient], now: datetime) -> int:
    """The monthly reports that are due, uploaded to Slack; how many went."""
    return decide_due_reports(db, uploader(pacer, client_for), now)
