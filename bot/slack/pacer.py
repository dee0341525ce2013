"""Pacing of Slack Web API calls: one ``SlackPacer`` per process, shared by every listener and the scheduler
(429 answers waited out as ``Retry-After`` says, at most one message a second per channel), and one
``HistoryPacer`` per backfill (Slack's limited history tier).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from slack_sdk.errors import SlackApiError

from socialrag.errors import PermanentError, RateLimited, SourceError

log = logging.getLogger(__name__)
progress_log = logging.getLogger("paperping.progress")

# Slack errors that no retry will change: the channel is gone or closed to PaperPing, or its token is dead
PERMANENT_SLACK_ERRORS = frozenset(
    {
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "restricted_action",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "invalid_auth",
        "not_authed",
        "team_access_not_granted",
        "missing_scope",
        "ekm_access_denied",
    }
)
PAGE = 200
LIMITED_PAGE = 15
LIMITED_INTERVAL = 60.0
# the longest one call of a listener or a job waits out Slack's Retry-After, all its 429s together: half the
# ten-minute lease a worker holds on a post or a report, so that no other worker takes over a post still on its way
MAX_WAIT_SECONDS = 300.0
LONGEST_WAIT = 3600.0  # the longest one Retry-After is waited (a backfill waits for it; a listener gives up first)


def retry_after_seconds(headers: Mapping[str, Any]) -> float:
    """How long a 429 asks to wait: its ``Retry-After`` in seconds (1 without one), at most ``LONGEST_WAIT``. One
    that is not a plain positive number of seconds (a date, a negative or infinite number) is waited out as a
    minute, the pace of Slack's slowest tier."""
    raw = headers.get("Retry-After") or headers.get("retry-after")
    if raw is None or raw == "":
        return 1.0
    try:
        seconds = float(str(raw).strip()[:20])
    except ValueError:
        return LIMITED_INTERVAL
    if not math.isfinite(seconds) or seconds <= 0:
        return LIMITED_INTERVAL
    return min(seconds, LONGEST_WAIT)


def call_with_retry_after(
    fn: Callable[..., Any],
    wait: Callable[[float], None],
    max_retries: int,
    kwargs: dict[str, Any],
    max_wait: float | None = None,
) -> tuple[Any, float]:
    """Call a Web API method, waiting out 429s; returns the answer and the longest wait asked for.
    Other Slack errors become ``SourceError``. With ``max_wait``, a wait that would take the call's waits past it
    is not begun: ``RateLimited`` instead, and the caller's usual retry applies."""
    longest = waited = 0.0
    for _ in range(max_retries):
        try:
            return fn(**kwargs), longest
        except SlackApiError as exc:
            if exc.response.status_code != 429:
                error = str(exc.response.get("error") or exc)
                kind = PermanentError if error in PERMANENT_SLACK_ERRORS else SourceError
                raise kind("slack", error) from exc
            retry_after = retry_after_seconds(exc.response.headers)
            if max_wait is not None and waited + retry_after > max_wait:
                raise RateLimited(
                    "slack",
                    f"rate limited: Slack asked to wait {retry_after:.0f} s, past the {max_wait:.0f} s a call waits",
                ) from exc
            longest = max(longest, retry_after)
            waited += retry_after
            log.info("Slack asked to wait %.0fs", retry_after)
            wait(retry_after)
    raise SourceError("slack", f"still rate limited after {max_retries} waits")


@dataclass
class SlackPacer:
    """The process's pace of Slack calls: 429s waited out, up to ``max_wait`` seconds a call, and at most one
    message a second per channel."""

    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    max_retries: int = 20
    max_wait: float = MAX_WAIT_SECONDS
    _last: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, fn: Callable[..., Any], **kwargs: Any) -> Any:
        """Any Web API call, with 429s waited out."""
        return call_with_retry_after(fn, self.sleep, self.max_retries, kwargs, self.max_wait)[0]

    def post(self, fn: Callable[..., Any], *, channel: str, **kwargs: Any) -> Any:
        """A message to a channel (``chat.postMessage`` and the like), spaced a second from the last one there."""
        self.wait_channel(channel)
        return self.call(fn, channel=channel, **kwargs)

    def wait_channel(self, channel_id: str) -> None:
        """Wait for this channel's next free second. The second is reserved under the lock and waited for
        outside it, so that posts queued for one channel never hold up another channel's."""
        with self._lock:
            now = self.clock()
            slot = max(now, self._last.get(channel_id, -1e9) + 1.0)
            self._last[channel_id] = slot
        if slot > now:
            self.sleep(slot - now)


@dataclass
class HistoryPacer:
    """One backfill's pace: spaces history and replies calls, and switches to Slack's limited tier (one
    request a minute) when the workspace gives only 15 messages a page."""

    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    limited_interval: float = LIMITED_INTERVAL
    max_retries: int = 20
    limited: bool = False
    waited: list[float] = field(default_factory=list)
    _last: float = -1e12

    @property
    def page_size(self) -> int:
        return LIMITED_PAGE if self.limited else PAGE

    def before_call(self) -> None:
        if self.limited:
            wait = self._last + self.limited_interval - self.clock()
            if wait > 0:
                self._wait(wait)
        self._last = self.clock()

    def after_page(self, asked: int, got: int, has_more: bool) -> None:
        if not self.limited and has_more and got <= LIMITED_PAGE < asked:
            log.warning(
                "Slack returns %d messages a page: slowing to one request every %.0fs", got, self.limited_interval
            )
            self.limited = True

    def _wait(self, seconds: float) -> None:
        self.waited.append(seconds)
        if seconds >= 5:
            until = datetime.now().astimezone() + timedelta(seconds=seconds)
            reason = "Slack allows this app one history request a minute" if self.limited else "Slack asked to wait"
            progress_log.info("backfill waiting until %s: %s", until.strftime("%H:%M:%S"), reason)
        self.sleep(seconds)

    def call(self, fn: Callable[..., Any], **kwargs: Any) -> Any:
        """Call a Web API method in this backfill's pace, waiting out 429s."""
        self.before_call()
        answer, longest = call_with_retry_after(fn, self._wait, self.max_retries, kwargs)
        if longest >= 30:
            self.limited = True
        return answer
