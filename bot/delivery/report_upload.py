"""The channel report in Slack: the month's chart uploaded the way ``files.uploadV2`` does it, step by step, so
that a failure says whether the file may have reached the channel. Which reports are due, what they hold and how
failures are retried is decided by ``socialrag.report.monthly``."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.pacer import SlackPacer
from socialrag.db import Database
from socialrag.errors import OutcomeUnknown, SourceError
from socialrag.report import UploadReport
from socialrag.report import post_due_reports as decide_due_reports
from socialrag.report import post_month_report as decide_month_report

ALT_TEXT = "Shares, thread replies and reactions per week, and PaperPing's posts"
# Slack's errors that may come after part of the work was done (its documentation says so of internal_error)
MAYBE_DONE_ERRORS = frozenset({"internal_error", "fatal_error", "request_timeout", "service_unavailable"})


def uploader(pacer: SlackPacer, client_for: Callable[[str], WebClient]) -> UploadReport:
    """Upload a report's chart and its lines into the channel, at Slack's pace. Raises ``SourceError`` when
    nothing reached the channel for certain, ``OutcomeUnknown`` when the file may be there."""

    def upload(team: str, channel: str, png: Path, text: str, title: str) -> None:
        client = client_for(team)
        data = png.read_bytes()
        # steps 1 and 2 (an upload address, then the bytes): the file is in no channel until step 3 shares it
        try:
            got = pacer.call(client.files_getUploadURLExternal, filename="paperping-month.png", length=len(data),
                             alt_txt=ALT_TEXT)  # fmt: skip
            send_bytes(client, str(got["upload_url"]), data)
        except SourceError:
            raise
        except Exception as exc:  # Slack out of reach, a timeout: whatever it was, nothing is shared yet
            raise SourceError("slack", f"the upload failed before the file was shared: {exc!r}") from exc
        try:
            pacer.call(
                client.files_completeUploadExternal,
                files=[{"id": str(got["file_id"]), "title": title}],
                channel_id=channel,
                initial_comment=text,
            )
        except SourceError as exc:
            if _maybe_done(exc):
                raise OutcomeUnknown("slack", exc.detail) from exc
            raise
        except Exception as exc:  # the answer was lost (a timeout, a dropped connection): Slack may have shared it
            raise OutcomeUnknown("slack", f"no answer to files.completeUploadExternal: {exc!r}") from exc

    return upload


def send_bytes(web: WebClient, url: str, data: bytes) -> None:
    """The file's bytes to the address ``files.getUploadURLExternal`` gave, with the client's timeout and TLS
    settings; a failure here posted nothing."""
    request = urllib.request.Request(url, data=data, method="POST")
    with urllib.request.urlopen(request, timeout=web.timeout, context=web.ssl) as answer:
        if answer.status != 200:
            raise SourceError("slack", f"the file's upload was answered {answer.status}")


def _maybe_done(exc: SourceError) -> bool:
    """Slack's error answer may come after the file was shared: a server error, or an error it says may."""
    cause = exc.__cause__
    server_error = isinstance(cause, SlackApiError) and cause.response.status_code >= 500
    return server_error or exc.detail in MAYBE_DONE_ERRORS


def post_month_report(
    db: Database, pacer: SlackPacer, client: WebClient, team: str, channel: str, now: datetime
) -> None:
    """`/paperping report`: this month's report now, through this workspace's client."""
    decide_month_report(db, uploader(pacer, lambda _: client), team, channel, now)


def post_due_reports(db: Database, pacer: SlackPacer, client_for: Callable[[str], WebClient], now: datetime) -> int:
    """The monthly reports that are due, uploaded to Slack; how many went."""
    return decide_due_reports(db, uploader(pacer, client_for), now)
