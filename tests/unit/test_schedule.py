from __future__ import annotations

from datetime import UTC, datetime, timedelta

from socialrag.recommender.serve.schedule import (
    SILENT_TO_STEP_DOWN,
    Reception,
    next_slot,
    quiet_until,
    read_reception,
    should_step_down,
    silent_streak,
    step_down,
)

BERLIN = "Europe/Berlin"


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_first_slot_is_now_within_posting_hours() -> None:
    now = utc(2024, 3, 5, 10, 0)  # Tuesday, 11:00 in Berlin
    assert next_slot(now, None, "daily", BERLIN) == now


def test_after_hours_moves_to_next_morning_local_time() -> None:
    now = utc(2024, 3, 5, 17, 30)  # 18:30 Berlin
    assert next_slot(now, None, "daily", BERLIN) == utc(2024, 3, 6, 8, 0)  # 09:00 Berlin


def test_frequency_after_last_post_and_weekends_skipped() -> None:
    last = utc(2024, 3, 7, 8, 0)  # Thursday
    now = utc(2024, 3, 7, 9, 0)
    assert next_slot(now, last, "daily", BERLIN) == utc(2024, 3, 8, 8, 0)  # Friday 09:00
    assert next_slot(now, last, "every-other-day", BERLIN) == utc(2024, 3, 11, 8, 0)  # Sat -> Monday
    assert next_slot(now, last, "weekly", BERLIN) == utc(2024, 3, 14, 8, 0)
    assert next_slot(now, last, "every-other-day", BERLIN, weekdays_only=False) == utc(2024, 3, 9, 8, 0)


def test_quiet_period_waits_up_to_two_hours() -> None:
    slot = utc(2024, 3, 5, 9, 0)
    assert quiet_until(slot, slot, None) is None
    assert quiet_until(slot, slot, slot - timedelta(minutes=5)) == slot + timedelta(minutes=10)
    late = slot + timedelta(hours=2)
    assert quiet_until(late, slot, late - timedelta(minutes=1)) is None


def test_step_down() -> None:
    assert step_down("daily") == "every-other-day" and step_down("weekly") == "weekly"

    silent, liked = Reception(), read_reception({"button:relevant": 1}, 0)
    not_for_us, thumbs_down = read_reception({"button:not-for-us": 2}, 0), read_reception({"-1": 1}, 0)
    # a lab that reads without reacting keeps its pace: silence alone counts only over a long stretch
    assert should_step_down([silent] * 5 + [liked]) is None
    assert should_step_down([silent] * (SILENT_TO_STEP_DOWN - 1)) is None
    assert "no reaction, click or reply" in (should_step_down([silent] * SILENT_TO_STEP_DOWN) or "")
    # explicit negatives come first: three of the last five posts marked not for us (or a negative emoji)
    assert "not for us" in (should_step_down([not_for_us, silent, thumbs_down, liked, not_for_us]) or "")
    assert should_step_down([not_for_us, silent, thumbs_down, liked, liked]) is None
    # a reply or as many positive reactions keeps a post from counting as received badly
    assert not read_reception({"button:not-for-us": 1}, 1).received_badly
    assert not read_reception({"button:not-for-us": 1, "+1": 1}, 0).received_badly
    # the channel's own reading of an emoji applies, a button's never changes
    assert read_reception({"eyes": 2}, 0, {"eyes": "negative"}).received_badly
    assert read_reception({"button:relevant": 1}, 0, {"button:relevant": "negative"}).positive == 1
    assert silent_streak([silent, silent, liked, silent]) == 2
