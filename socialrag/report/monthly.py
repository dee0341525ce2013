"""The monthly report of each channel that asked for it: which are due (each claimed by one process), the
month's chart and two lines of figures, what is recorded once it is up, and how a failure is retried. The
group space's side only uploads (``UploadReport``)."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import ConfigError, PaperPingError, PermanentError
from socialrag.report.data import load_report_data
from socialrag.report.page import month_summary

log = logging.getLogger(__name__)

REPORT_LEASE = timedelta(minutes=10)  # a worker's claim on a channel's monthly report
REPORT_RETRY = timedelta(hours=1)  # after a failure that may pass, doubling up to a day
REPORT_RETRY_LIMIT = timedelta(days=1)
# (team id, channel id, the chart's PNG, the two lines that go with it, the title) -> None once it is up
UploadReport = Callable[[str, str, Path, str, str], None]


def month_start(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def post_month_report(db: Database, upload: UploadReport, team: str, channel: str, now: datetime) -> None:
    """Upload the month's chart (the last month on the 1st) with two lines of figures about the channel as a
    whole; no member is named."""
    start = month_start(now)
    if now - start < timedelta(days=1):  # on the 1st, the month that just ended
        start = month_start(start - timedelta(days=1))
    with db.connection() as conn:
        data = load_report_data(conn, team, channel, since=start, until=now)
    with tempfile.TemporaryDirectory(prefix="paperping-report-") as tmp:
        png, text = month_summary(data, Path(tmp) / "paperping-month.png")
        upload(team, channel, png, text, f"#{data.channel_name}: the month in PaperPing's view")
    with db.connection() as conn:
        storage.reports.record_report_posted(conn, team, channel, now)


def post_due_reports(db: Database, upload: UploadReport, now: datetime) -> int:
    """The monthly reports due, each claimed by one worker; how many were posted. A failure that cannot heal
    (``missing_scope``: the app lacks ``files:write``) stops that channel's monthly report with its reason;
    another is retried after an hour, then two, up to a day."""
    with db.connection() as conn:
        due = storage.reports.claim_monthly_reports_due(conn, month_start(now), now, REPORT_LEASE)
    done = 0
    for team, channel in due:
        try:
            post_month_report(db, upload, team, channel, now)
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
    elif isinstance(exc, PaperPingError | OSError):
        log.warning("#%s: the monthly report failed, retrying in %s: %s", channel, wait, exc)
    else:
        log.exception("#%s: the monthly report failed unexpectedly, retrying in %s", channel, wait)
