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
from socialrag.errors import ConfigError, PaperPingError, PermanentError
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
        storage.reports.record_report_posted(conn, team, channel, now)


REPORT_LEASE = timedelta(minutes=10)  # a worker's claim on a channel's monthly report
REPORT_RETRY = timedelta(hours=1)  # after a failure that may pass, doubling up to a day
REPORT_RETRY_LIMIT = timedelta(days=1)


def post_due_reports(db: Database, pacer: SlackPacer, client_for: Callable[[str], WebClient], now: datetime) -> int:
    """The monthly reports due, each claimed by one worker; how many were posted. A failure that cannot heal
    (``missing_scope``: the app lacks ``files:write``) stops that channel's monthly report with its reason;
    another is retried after an hour, then two, up to a day."""
    with db.connection() as conn:
        due = storage.reports.claim_monthly_reports_due(conn, month_start(now), now, REPORT_LEASE)
    done = 0
    for team, channel in due:
        try:
            post_month_report(db, pacer, client_for(team), team, channel, now)
            done += 1
        except Exception as exc:  # one channel's report never stops the others'
            _report_failed(db, team, channel, now, exc)
    return done


def _report_failed(db: Database, team: str, channel: str, now: datetime, exc: Exception) -> None:
    permanent = isinstance(exc, PermanentError | ConfigError)
    with db.connection() as conn:
        settings = storage.settings.load_channel_settings(conn, team, channel)
        wait = min(REPORT_RETRY * 2**settings.report_failures, REPORT_RETRY_LIMIT)
        storage.reports.record_report_failure(conn, team, channel, str(exc), permanent=permanent, retry_at=now + wait)
    if permanent:
        log.warning("#%s: the monthly report stopped, it cannot succeed: %s", channel, exc)
    elif isinstance(exc, PaperPingError | SlackApiError | OSError):
        log.warning("#%s: the monthly report failed, retrying in %s: %s", channel, wait, exc)
    else:
        log.exception("#%s: the monthly report failed unexpectedly, retrying in %s", channel, wait)
