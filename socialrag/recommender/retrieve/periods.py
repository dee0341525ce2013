"""When a member's question is about: "last week", "this month", "in December", "since March 2024", "the past 10
days", "in 2023". A question about the group's memory often names a time rather than a topic ("what did we read
last week?"), and one that names both ("what did we discuss about RAG this month?") wants the topic within that
time. Calendar weeks start on Monday, in the channel's timezone. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from socialrag.names import fold_text

MOST_DAYS = 3660  # "the past 100000 days" is the past ten years
RECENT_DAYS = 30  # "lately", "recently"
_MONTHS = {
    name: n
    for n, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_FULL_MONTH = "|".join(n for n in _MONTHS if len(n) > 4 or n in ("may", "june", "july"))
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365, "years": 365}
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3, "couple of": 2}

_LAST_N = re.compile(rf"\b(?:last|past|previous)\s+(\d{{1,6}}|{'|'.join(_NUMBERS)})\s+(days?|weeks?|months?|years?)\b")
_RELATIVE = re.compile(r"\b(this|last|past|previous)\s+(week|month|year)\b")
# a name followed by 's is someone's or something's, not a time: "Jan's group", "today's models" (folded, the
# apostrophe is a space: "jan s group")
_OWN = r"(?!\s*['’]?\s*s\b)"
_SINCE_MONTH = re.compile(rf"\bsince\s+({_MONTH})\b{_OWN}(?:\s+((?:19|20)\d\d))?")
# "in Jan", "during May"; "from" or "of" only with a full name or a year ("papers from Jan" may be from a member)
_IN_MONTH = re.compile(
    rf"\b(?:(?:in|during)\s+({_MONTH})|(?:from|of)\s+((?:{_FULL_MONTH})\b|(?:{_MONTH})(?=\s+(?:19|20)\d\d)))\b{_OWN}"
    r"(?:\s+((?:19|20)\d\d))?"
)
_SINCE_YEAR = re.compile(r"\bsince\s+((?:19|20)\d\d)\b")
_IN_YEAR = re.compile(r"\b(?:in|during|from|of)\s+((?:19|20)\d\d)\b")
_DAY = re.compile(rf"\b(today|yesterday)\b{_OWN}")
_RECENT = re.compile(r"\b(lately|recently|recent)\b")
_PATTERNS = (_LAST_N, _RELATIVE, _SINCE_MONTH, _IN_MONTH, _SINCE_YEAR, _IN_YEAR, _DAY, _RECENT)


@dataclass(frozen=True)
class Period:
    """From ``start`` up to (not including) ``end``, and how an answer names it ("last week", "in Dec 2025")."""

    start: datetime
    end: datetime
    label: str

    def holds(self, at: datetime) -> bool:
        return self.start <= at < self.end


def period_in(question: str, now: datetime, zone: ZoneInfo | None = None) -> Period | None:
    """The time a question is about, or None when it names none (``split_period``)."""
    return split_period(question, now, zone)[0]


def split_period(question: str, now: datetime, zone: ZoneInfo | None = None) -> tuple[Period | None, str]:
    """The time a question is about (None when it names none), and the question without the words that name it
    (folded: lower case, accents aside), so that "December" is not searched for as a topic. ``now`` is aware;
    weeks, months and days are counted in ``zone`` (UTC when None). A month named without a year is its latest
    one not after ``now``; a time after ``now`` is no period."""
    text = " ".join(fold_text(question).split())
    for pattern in _PATTERNS:
        m = pattern.search(text)
        if m is None:
            continue
        found = _period(pattern, m, now, now.astimezone(zone or ZoneInfo("UTC")))
        return found, (text[: m.start()] + " " + text[m.end() :]).strip() if found else text
    return None, text


def _period(pattern: re.Pattern[str], m: re.Match[str], now: datetime, local: datetime) -> Period | None:
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    end = now + timedelta(seconds=1)
    if pattern is _LAST_N:
        n = max(int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)], 1)  # "the past 0 days": today's
        unit = m.group(2) if n > 1 else m.group(2).removesuffix("s")
        days = n * _UNITS[m.group(2)]
        said = f"in the past {n} {unit}" if days <= MOST_DAYS else f"in the past {MOST_DAYS // 366} years"
        return Period(now - timedelta(days=min(days, MOST_DAYS)), end, said)
    if pattern is _RELATIVE:
        return _relative(m.group(1), m.group(2), now, midnight, end)
    if pattern in (_SINCE_MONTH, _IN_MONTH):
        month, year = (m.group(1), m.group(2)) if pattern is _SINCE_MONTH else (m.group(1) or m.group(2), m.group(3))
        start = _month_start(_MONTHS[month], year, local)
        if start > local:
            return None
        if pattern is _SINCE_MONTH:
            return Period(start, end, f"since {start:%b %Y}")
        return Period(start, min(_next_month(start), end), f"in {start:%b %Y}")
    if pattern in (_SINCE_YEAR, _IN_YEAR):
        start = midnight.replace(year=int(m.group(1)), month=1, day=1)
        if start > local:
            return None
        if pattern is _SINCE_YEAR:
            return Period(start, end, f"since {m.group(1)}")
        return Period(start, min(start.replace(year=start.year + 1), end), f"in {m.group(1)}")
    if pattern is _DAY:
        if m.group(1) == "today":
            return Period(midnight, end, "today")
        return Period(midnight - timedelta(days=1), midnight, "yesterday")
    return Period(now - timedelta(days=RECENT_DAYS), end, f"in the past {RECENT_DAYS} days")  # "lately"


def _relative(which: str, unit: str, now: datetime, midnight: datetime, end: datetime) -> Period:
    if which == "past":  # "the past week": the days just gone, not the calendar's
        days = {"week": 7, "month": 30, "year": 365}[unit]
        return Period(now - timedelta(days=days), end, f"in the past {days} days")
    if unit == "week":
        start = midnight - timedelta(days=midnight.weekday())
    elif unit == "month":
        start = midnight.replace(day=1)
    else:
        start = midnight.replace(month=1, day=1)
    if which == "this":
        return Period(start, end, f"this {unit}")
    if unit == "week":
        before = start - timedelta(days=7)
    elif unit == "month":
        before = (start - timedelta(days=1)).replace(day=1)
    else:
        before = start.replace(year=start.year - 1)
    return Period(before, start, f"last {unit} ({_span(before, start)})")


def _span(start: datetime, end: datetime) -> str:
    last = end - timedelta(days=1)
    if start.year != last.year:
        return f"{start:%d %b %Y} to {last:%d %b %Y}"
    if (start.month, start.day) == (1, 1) and (last.month, last.day) == (12, 31):
        return f"{start:%Y}"
    if start.month == last.month and start.day == 1 and _next_month(start) == end:
        return f"{start:%b %Y}"
    return f"{start:%d %b} to {last:%d %b}"


def _month_start(month: int, year: str | None, local: datetime) -> datetime:
    first = local.replace(month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    if year:
        return first.replace(year=int(year))
    return first if first <= local else first.replace(year=first.year - 1)


def _next_month(start: datetime) -> datetime:
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
