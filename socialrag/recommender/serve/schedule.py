"""When a channel's next post is due: frequency, the channel's timezone and posting hours, the quiet
period, and stepping down when posts are received badly (or, over a long stretch, not at all). Pure: times
in, times out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from socialrag.knowledge.emoji import read_sentiment
from socialrag.models import Sentiment

FREQUENCIES = ("daily", "every-other-day", "weekly")
DIGEST = "weekly-digest"  # several papers in one message a week (the channel's ``digest_size``)
DIGEST_SIZES = range(3, 8)
DIGEST_DEFAULT = 5
INTERVAL_DAYS = {"daily": 1, "every-other-day": 2, "weekly": 7, DIGEST: 7}
QUIET_MINUTES = 15
MAX_QUIET_WAIT = timedelta(hours=2)
UNANSWERED_TO_STEP_DOWN = 5  # the latest posts judged for explicit negatives
BADLY_TO_STEP_DOWN = 3  # of them received badly: post less often
SILENT_TO_STEP_DOWN = 15  # posts in a row with no answer at all: post less often


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder of zones (`America`), not one
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


def describe_pace(frequency: str, digest_size: int | None) -> str:
    """How often a channel gets posts, as members read it: ``posts every other day``, ``a weekly digest of 5
    papers``."""
    if frequency == DIGEST:
        return f"a weekly digest of {digest_size or DIGEST_DEFAULT} papers"
    return f"posts {frequency.replace('-', ' ')}"


def step_down(frequency: str) -> str:
    """One step less often: daily -> every other day -> weekly (a weekly digest stays one)."""
    if frequency not in FREQUENCIES:
        return frequency
    i = FREQUENCIES.index(frequency)
    return FREQUENCIES[min(i + 1, len(FREQUENCIES) - 1)]


@dataclass(frozen=True)
class Reception:
    """How one of PaperPing's posts was received: positive and negative reactions and clicks (read with the
    channel's own readings), and replies in its thread."""

    positive: int = 0
    negative: int = 0
    neutral: int = 0
    replies: int = 0

    @property
    def silent(self) -> bool:
        return not (self.positive or self.negative or self.neutral or self.replies)

    @property
    def received_badly(self) -> bool:
        """An explicit negative (a not-for-us click, a negative emoji) outweighing any positive, and no reply."""
        return self.negative > self.positive and not self.replies


def read_reception(
    emoji: Mapping[str, int], replies: int, overrides: Mapping[str, Sentiment] | None = None
) -> Reception:
    """A post's ``Reception`` from how many members left each reaction or click on it, read with the channel's
    own readings of its emoji."""
    counts = {"positive": 0, "negative": 0, "neutral": 0}
    for name, n in emoji.items():
        counts[read_sentiment(name, overrides)] += n
    return Reception(counts["positive"], counts["negative"], counts["neutral"], replies)


def should_step_down(recent: Sequence[Reception]) -> str | None:
    """Why to post less often, from the channel's latest posts (newest first), or None. Explicit negatives come
    first: three of the last five posts received badly. Silence is weak evidence (a lab may read without
    reacting): only ``SILENT_TO_STEP_DOWN`` posts in a row with no answer at all count."""
    last = list(recent)[:UNANSWERED_TO_STEP_DOWN]
    if len(last) == UNANSWERED_TO_STEP_DOWN and sum(r.received_badly for r in last) >= BADLY_TO_STEP_DOWN:
        return f"{BADLY_TO_STEP_DOWN} of the last five posts were marked not for us or drew negative reactions"
    stretch = list(recent)[:SILENT_TO_STEP_DOWN]
    if len(stretch) == SILENT_TO_STEP_DOWN and all(r.silent for r in stretch):
        return f"the last {SILENT_TO_STEP_DOWN} posts drew no reaction, click or reply"
    return None


def silent_streak(recent: Sequence[Reception]) -> int:
    """How many of the latest posts in a row drew no answer at all (what `status` shows)."""
    n = 0
    for r in recent:
        if not r.silent:
            break
        n += 1
    return n


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
