"""When a channel's next post is due: frequency, the channel's timezone and posting hours, the quiet
period, and stepping down when posts go unanswered. Pure: times in, times out."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

FREQUENCIES = ("daily", "every-other-day", "weekly")
INTERVAL_DAYS = {"daily": 1, "every-other-day": 2, "weekly": 7}
QUIET_MINUTES = 15
MAX_QUIET_WAIT = timedelta(hours=2)
UNANSWERED_TO_STEP_DOWN = 5


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def _open_slot(day: datetime, start_hour: int, weekdays_only: bool) -> datetime:
    """The first posting time on or after ``day``'s date (skipping weekends when asked)."""
    local = day
    while weekdays_only and local.weekday() >= 5:
        local = local + timedelta(days=1)
    return datetime.combine(local.date(), time(start_hour), tzinfo=local.tzinfo)


def next_slot(
    now: datetime,
    last_post_at: datetime | None,
    frequency: str,
    tz: str | None = None,
    start_hour: int = 9,
    end_hour: int = 17,
    weekdays_only: bool = True,
) -> datetime:
    """The next time to post: ``frequency`` after the last post, at the start of the posting hours in the
    channel's timezone, on a weekday if asked; never in the past (a due slot today is now, if still open)."""
    tzinfo = zone(tz)
    local_now = now.astimezone(tzinfo)
    if last_post_at is None:
        earliest = local_now
    else:
        earliest = last_post_at.astimezone(tzinfo) + timedelta(days=INTERVAL_DAYS[frequency])
        earliest = datetime.combine(earliest.date(), time(0), tzinfo=tzinfo)
    slot = _open_slot(earliest, start_hour, weekdays_only)
    if slot < local_now:
        closes = datetime.combine(local_now.date(), time(0), tzinfo=tzinfo) + timedelta(hours=end_hour)
        open_today = not (weekdays_only and local_now.weekday() >= 5) and local_now.hour >= start_hour
        if open_today and local_now < closes:
            slot = local_now
        else:
            slot = _open_slot(local_now + timedelta(days=1), start_hour, weekdays_only)
    return slot.astimezone(now.tzinfo)


def quiet_until(now: datetime, slot_at: datetime, last_activity_at: datetime | None) -> datetime | None:
    """If members wrote in the last 15 minutes, when to try again (not later than two hours after the
    slot); None to post now."""
    if last_activity_at is None or now - last_activity_at >= timedelta(minutes=QUIET_MINUTES):
        return None
    if now >= slot_at + MAX_QUIET_WAIT:
        return None
    return min(last_activity_at + timedelta(minutes=QUIET_MINUTES), slot_at + MAX_QUIET_WAIT)


def step_down(frequency: str) -> str:
    """One step less often: daily -> every other day -> weekly."""
    i = FREQUENCIES.index(frequency)
    return FREQUENCIES[min(i + 1, len(FREQUENCIES) - 1)]


def should_step_down(engagement_of_recent_posts: Sequence[int]) -> bool:
    """True when the last five posts (newest first) drew no reaction or reply at all."""
    recent = list(engagement_of_recent_posts)[:UNANSWERED_TO_STEP_DOWN]
    return len(recent) == UNANSWERED_TO_STEP_DOWN and all(n == 0 for n in recent)


EMPTY_FIRST_WAIT = timedelta(minutes=30)
EMPTY_MAX_WAIT = timedelta(hours=6)
INDEX_WAIT_LIMIT = timedelta(minutes=30)
INDEX_RECHECK = timedelta(seconds=15)


def empty_retry_wait(empty_slots: int) -> timedelta:
    """How long after a slot that found nothing to post to try again: 30 minutes, doubling with each empty
    try in a row, never more than six hours (a channel waiting on a focus or its index is not left for days)."""
    return min(EMPTY_MAX_WAIT, EMPTY_FIRST_WAIT * 2 ** max(0, empty_slots - 1))


def index_wait(now: datetime, slot_at: datetime, indexing: bool) -> datetime | None:
    """While the channel's history is still being read or its papers looked up and embedded, when to look
    again (at most 30 minutes past the slot, so a slow source never holds a post for long); None to post now."""
    if not indexing or now >= slot_at + INDEX_WAIT_LIMIT:
        return None
    return min(now + INDEX_RECHECK, slot_at + INDEX_WAIT_LIMIT)
