"""Files into a channel the way ``files.uploadV2`` does it, step by step (an upload address and the bytes for each
file, then one call that shares them all), so that a failure says whether the files may have reached the channel:
``SourceError`` when nothing was shared for certain, ``OutcomeUnknown`` when Slack may have shared them. The monthly
report, the reading list's export and the conference planner upload through it."""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.pacer import SlackPacer
from socialrag.errors import OutcomeUnknown, SourceError

# Slack's errors that may come after part of the work was done (its documentation says so of internal_error)
MAYBE_DONE_ERRORS = frozenset({"internal_error", "fatal_error", "request_timeout", "service_unavailable"})


@dataclass(frozen=True)
class Upload:
    """One file: its name, bytes and title (and a text description, for an image)."""

    filename: str
    data: bytes
    title: str
    alt_txt: str | None = None


def upload_files(
    pacer: SlackPacer,
    client: WebClient,
    channel: str,
    files: list[Upload],
    *,
    initial_comment: str | None = None,
    thread_ts: str | None = None,
) -> None:
    """Share ``files`` in ``channel`` (in the thread of ``thread_ts`` when given) with one message, at Slack's pace.
    Raises ``SourceError`` when nothing reached the channel for certain, ``OutcomeUnknown`` when it may have."""
    ids = []
    # steps 1 and 2 (an upload address, then the bytes): a file is in no channel until step 3 shares it
    try:
        for f in files:
            extra = {"alt_txt": f.alt_txt} if f.alt_txt else {}
            got = pacer.call(client.files_getUploadURLExternal, filename=f.filename, length=len(f.data), **extra)
            send_bytes(client, str(got["upload_url"]), f.data)
            ids.append({"id": str(got["file_id"]), "title": f.title})
    except SourceError:
        raise
    except Exception as exc:  # Slack out of reach, a timeout: whatever it was, nothing is shared yet
        raise SourceError("slack", f"the upload failed before the file was shared: {exc!r}") from exc
    shared: dict[str, object] = {"files": ids, "channel_id": channel}
    shared |= {"initial_comment": initial_comment} if initial_comment else {}
    shared |= {"thread_ts": thread_ts} if thread_ts else {}
    try:
        pacer.call(client.files_completeUploadExternal, **shared)
    except SourceError as exc:
        if maybe_done(exc):
            raise OutcomeUnknown("slack", exc.detail) from exc
        raise
    except Exception as exc:  # the answer was lost (a timeout, a dropped connection): Slack may have shared them
        raise OutcomeUnknown("slack", f"no answer to files.completeUploadExternal: {exc!r}") from exc


def send_bytes(web: WebClient, url: str, data: bytes) -> None:
    """A file's bytes to the address ``files.getUploadURLExternal`` gave, with the client's timeout and TLS
    settings; a failure here posted nothing."""
    request = urllib.request.Request(url, data=data, method="POST")
    with urllib.request.urlopen(request, timeout=web.timeout, context=web.ssl) as answer:
        if answer.status != 200:
            raise SourceError("slack", f"the file's upload was answered {answer.status}")


def maybe_done(exc: SourceError) -> bool:
    """Slack's error answer may come after the files were shared: a server error, or an error it says may."""
    cause = exc.__cause__
    server_error = isinstance(cause, SlackApiError) and cause.response.status_code >= 500
    return server_error or exc.detail in MAYBE_DONE_ERRORS
