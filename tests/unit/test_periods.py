"""The time a member's question names ("last week", "in December", "since March 2024"), counted in the channel's
timezone, and the question left to search by topic once those words are out."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from socialrag.recommender.retrieve.periods import MOST_DAYS, period_in

NOW = datetime(2021, 1, 18, 9, 0, tzinfo=UTC)  # a Monday


def span(question: str, zone: ZoneInfo | None = None) -> tuple[str, str, str] | None:
    period = period_in(question, NOW, zone)
    if period is None:
        return None
    return period.start.isoformat()[:16], period.end.isoformat()[:16], period.label


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did we read last week?", ("2021-01-11T00:00", "2021-01-18T00:00", "last week (11 Jan to 17 Jan)")),
        ("what was discussed this week", ("2021-01-18T00:00", "2021-01-18T09:00", "this week")),
        ("what was discussed this month", ("2021-01-01T00:00", "2021-01-18T09:00", "this month")),
        ("anything from last month?", ("2020-12-01T00:00", "2021-01-01T00:00", "last month (Dec 2020)")),
        ("What did we read in December?", ("2020-12-01T00:00", "2021-01-01T00:00", "in Dec 2020")),
        ("what did we read in jan", ("2021-01-01T00:00", "2021-01-18T09:00", "in Jan 2021")),
        ("papers since March 2020 on RAG", ("2020-03-01T00:00", "2021-01-18T09:00", "since Mar 2020")),
        ("in the past 10 days", ("2021-01-08T09:00", "2021-01-18T09:00", "in the past 10 days")),
        ("the last two weeks", ("2021-01-04T09:00", "2021-01-18T09:00", "in the past 2 weeks")),
        ("the past 1 day", ("2021-01-17T09:00", "2021-01-18T09:00", "in the past 1 day")),
        ("the past 0 days", ("2021-01-17T09:00", "2021-01-18T09:00", "in the past 1 day")),
        ("what did we read in 2020", ("2020-01-01T00:00", "2021-01-01T00:00", "in 2020")),
        ("what did we read last year", ("2020-01-01T00:00", "2021-01-01T00:00", "last year (2020)")),
        ("anything today", ("2021-01-18T00:00", "2021-01-18T09:00", "today")),
        ("and yesterday?", ("2021-01-17T00:00", "2021-01-18T00:00", "yesterday")),
        ("what have we read lately on parsing", ("2020-12-19T09:00", "2021-01-18T09:00", "in the past 30 days")),
    ],
)
def test_the_time_a_question_names(question: str, expected: tuple[str, str, str]) -> None:
    got = span(question)
    assert got is not None and (got[0], got[1][:13], got[2]) == (expected[0], expected[1][:13], expected[2])


def test_no_time_is_no_period_and_a_future_or_huge_one_is_bounded() -> None:
    assert span("What have we read about retrieval-augmented generation?") is None
    assert span("what may interest me") is None, '"may" is a month only as "in May"'
    assert span("What did we read from Jan?") is None, "a member may be called Jan: an abbreviation needs in or a year"
    assert span("papers from jan 2020") is not None and span("in decoding") is None
    assert span("what did we read in Jan's group about parsing?") is None, "Jan's group is a person's"
    assert span("what did we read in Jan’s group?") is None and span("since May's talk") is None
    assert span("what do we know about today's LLMs?") is None, "today's LLMs are not a time"
    assert span("what did we read in Jan?") is not None and span("what did we read today?") is not None
    assert span("what did we read in December 2099") is None, "a time after now is no period"
    huge = period_in("the last 999999 days", NOW)
    assert huge is not None and (NOW - huge.start).days == MOST_DAYS and huge.label == "in the past 10 years"


def test_weeks_and_days_are_counted_in_the_channels_timezone() -> None:
    """Monday 09:00 UTC is Monday 18:00 in Tokyo, and Monday 01:00 in Los Angeles: "today" begins at each one's
    own midnight; at Sunday 20:00 in Los Angeles (Monday 04:00 UTC) "this week" is still the week before."""
    tokyo = period_in("today", NOW, ZoneInfo("Asia/Tokyo"))
    assert tokyo is not None and tokyo.start == datetime(2021, 1, 17, 15, 0, tzinfo=UTC)
    early = datetime(2021, 1, 18, 4, 0, tzinfo=UTC)
    week = period_in("this week", early, ZoneInfo("America/Los_Angeles"))
    assert week is not None and week.start == datetime(2021, 1, 11, 8, 0, tzinfo=UTC)
