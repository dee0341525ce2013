"""The channel report in Slack: this month's summary chart, uploaded with ``files.uploadV2``."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.pacing import SlackPacer
from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.report import load_report_data, month_summary

log = logging.getLogger(__name__)


def month_start(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def post_month_report(
    db: Database, pacer: SlackPacer, client: WebClient, team: str, channel: str, now: datetime
) -> None:
    """Upload the month's chart (the last 30 days on the 1st) with two lines of figures about the channel as a
    whole; no member is named."""
    start = month_start(now)
    if now - start < timedelta(days=1):  # on the 1st, the month that just ended
        start = month_start(start - timedelta(days=1))
    with db.connection() as conn:
        data = load_report_data(conn, team, channel, since=start, until=now)
    with tempfile.TemporaryDirectory(prefix="paperping-report-") as tmp:
        png, text = month_summary(data, Path(tmp) / "paperping-month.png")
        pacer.call(
            client.files_upload_v2,
            channel=channel,
            file=str(png),
            filename="paperping-month.png",
            title=f"#{data.channel_name}: the month in PaperPing's view",
            alt_txt="Shares, thread replies and reactions per week, and PaperPing's posts",
            initial_comment=text,
        )
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, team, channel, report_last_at=now)


def post_due_reports(db: Database, pacer: SlackPacer, client_for: Callable[[str], WebClient], now: datetime) -> int:
    """The monthly reports due (channels that asked, not yet posted this month); how many were posted."""
    with db.connection() as conn:
        due = storage.reports.load_monthly_reports_due(conn, month_start(now))
    done = 0
    for team, channel in due:
        try:
            post_month_report(db, pacer, client_for(team), team, channel, now)
            done += 1
        except (PaperPingError, SlackApiError, OSError) as exc:  # tried again at the next tick
            log.warning("#%s: the monthly report failed, retrying later: %s", channel, exc)
        except Exception:  # one channel's report never stops the others' (logged in full)
            log.exception("#%s: the monthly report failed unexpectedly, retrying later", channel)
    return done
