"""The monthly report of each channel that asked for it: which are due (each claimed by one process), the
month's chart and two lines of figures, what is recorded once it is up, and how a failure is retried. The
group space's side only uploads (``UploadReport``).

A monthly report is uploaded at most once. Just before the upload, one worker marks the month's report as begun
(a compare-and-set no other worker passes that month, however long the first waits on Slack). Only the
uploader's ``OutcomeUnknown`` (a crash aside, a lost or ambiguous answer to the step that shares the file) keeps
the mark: the report may be in the channel, and a lab would rather miss one month's chart (the log and
``status`` say so) than find it there twice. Any other failure came before the file was shared: it undoes the
mark, and the report is retried later. Looking in the channel first, as slots do, is no way out here: a file
shared by upload carries no metadata to know it by, and Slack may list it in the channel's history only some
time after the upload."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import ConfigError, OutcomeUnknown, PaperPingError, PermanentError
from socialrag.report.data import load_report_data
from socialrag.report.page import month_summary

log = logging.getLogger(__name__)

REPORT_LEASE = timedelta(minutes=10)  # a worker's claim on a channel's monthly report
REPORT_RETRY = timedelta(hours=1)  # after a failure that may pass, doubling up to a day
REPORT_RETRY_LIMIT = timedelta(days=1)
# (team id, channel id, the chart's PNG, the two lines that go with it, the title) -> None once it is up. Raises
# ``SourceError`` when nothing reached the channel for certain, ``OutcomeUnknown`` when it may have.
UploadReport = Callable[[str, str, Path, str, str], None]


def month_start(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def report_period(now: datetime) -> datetime:
    """The start of the month a report made ``now`` shows: this one, or on the 1st the month that just ended."""
    start = month_start(now)
    return month_start(start - timedelta(days=1)) if now - start < timedelta(days=1) else start


def monthly_period(now: datetime) -> tuple[datetime, datetime]:
    """The month a monthly report shows: the one that ended as ``now``'s month began, however late in the month
    the report goes (a retry after a day of failures, a process that was down on the 1st)."""
    end = month_start(now)
    return month_start(end - timedelta(days=1)), end


def post_month_report(db: Database, upload: UploadReport, team: str, channel: str, now: datetime) -> None:
    """Upload the month's chart (the last month on the 1st) with two lines of figures about the channel as a
    whole; no member is named."""
    with tempfile.TemporaryDirectory(prefix="paperping-report-") as tmp:
        png, text, title = _draw_report(db, team, channel, (report_period(now), now), Path(tmp))
        upload(team, channel, png, text, title)
    with db.connection() as conn:
        storage.reports.record_report_posted(conn, team, channel, now)


def _draw_report(
    db: Database, team: str, channel: str, period: tuple[datetime, datetime], folder: Path
) -> tuple[Path, str, str]:
    with db.connection() as conn:
        data = load_report_data(conn, team, channel, since=period[0], until=period[1])
    png, text = month_summary(data, folder / "paperping-month.png")
    return png, text, f"#{data.channel_name}: the month in PaperPing's view"


def post_due_reports(db: Database, upload: UploadReport, now: datetime) -> int:
    """The monthly reports due, each of the month that ended (``monthly_period``), claimed by one worker and
    uploaded at most once; how many were posted. A failure that cannot heal (``missing_scope``: the app lacks
    ``files:write``) stops that channel's monthly report with its reason; another that left nothing in the channel
    is retried after an hour, then two, up to a day."""
    with db.connection() as conn:
        due = storage.reports.claim_monthly_reports_due(conn, month_start(now), now, REPORT_LEASE)
    done = 0
    for team, channel in due:
        try:
            done += _post_claimed_report(db, upload, team, channel, now)
        except Exception as exc:  # one channel's report never stops the others'
            _report_failed(db, team, channel, now, exc)
    return done


def _post_claimed_report(db: Database, upload: UploadReport, team: str, channel: str, now: datetime) -> bool:
    """Draw the claimed report, mark it begun (unless another worker has), upload it and record the outcome."""
    with tempfile.TemporaryDirectory(prefix="paperping-report-") as tmp:
        png, text, title = _draw_report(db, team, channel, monthly_period(now), Path(tmp))
        with db.connection() as conn:
            if not storage.reports.start_report_upload(conn, team, channel, month_start(now), now):
                log.info("#%s: the monthly report is another worker's, or settled already", channel)
                return False
        try:
            upload(team, channel, png, text, title)
        except OutcomeUnknown as exc:  # the uploader says the file may be in the channel
            _report_unconfirmed(db, team, channel, exc)
            return False
        except Exception:  # anything else happened before the file was shared: the retry may upload
            with db.connection() as conn:  # (Slack said no, the workspace has no token, the chart is unreadable)
                storage.reports.cancel_report_upload(conn, team, channel)
            raise
    with db.connection() as conn:
        storage.reports.record_report_posted(conn, team, channel, now)
    return True


def _report_unconfirmed(db: Database, team: str, channel: str, exc: Exception) -> None:
    with db.connection() as conn:
        storage.reports.record_report_unconfirmed(conn, team, channel)
    log.warning(
        "#%s: Slack never confirmed this month's report (%s); it may be in the channel, so it is not uploaded "
        "again this month",
        channel,
        exc,
    )


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
