"""The commands that steer a channel, typed as a hostile or careless member would, through the real bolt app and
slack_sdk against the Slack stand-in: a timezone that is a folder of timezones, focus after focus in a channel
PaperPing never posted in, and on-demand reports asked at once or after the clock was set back."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from tests.support.harness import Harness, T


def _settings(db: Database) -> storage.settings.ChannelSettings:
    with db.connection() as conn:
        return storage.settings.load_channel_settings(conn, T, "C1")


def test_hours_with_a_folder_of_timezones_is_refused_as_an_unknown_timezone(harness: Harness, db: Database) -> None:
    """`America` is a folder of the timezone database, not a timezone: the member is told it is unknown (not that
    something went wrong), and nothing changes; hostile names and other digits change nothing either."""
    for text in ("hours 9-17 America", "hours 9-17 Europe", "hours 9-17 zone.tab", "hours 9-17 ../etc"):
        answer = harness.command(text)
        assert "is not a timezone I know" in answer, (text, answer)
    assert "Try `/paperping hours 9-17`" in harness.command("hours ٩-١٧")
    s = _settings(db)
    assert s.timezone is None and (s.post_start_hour, s.post_end_hour) == (9, 17)
    assert not [p for p in harness.standin.posts if str(p["text"]).startswith("<@U2>")], "nothing was announced"
    assert harness.command("hours 10-16 America/New_York") == (
        "Done: I'll post between 10:00 and 16:00 (America/New_York) on weekdays."
    )


def test_focus_after_focus_in_a_new_channel_opens_one_post_in_ten_minutes(harness: Harness, db: Database) -> None:
    """A focus in a channel PaperPing never posted in brings its first post to a minute later. When that search
    found nothing, the channel has still never posted: a member typing focus after focus must not open a search of
    every source each minute. The focus is kept each time; the post is brought forward once in ten minutes, the
    bound `now` keeps."""
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    assert "The first post here comes at about" in harness.command("focus retrieval-augmented generation")
    first = _settings(db)
    assert first.next_post_at is not None and first.next_post_at - datetime.now(UTC) < timedelta(minutes=2)
    later = datetime.now(UTC) + timedelta(days=1)
    with db.connection() as conn:  # the slot searched, found nothing and put the channel off, as the worker does
        storage.settings.upsert_channel_setting(
            conn, T, "C1", next_post_at=later, empty_reason="no candidate", empty_at=datetime.now(UTC)
        )
    for words in ("protein design", "graph neural networks", "speech recognition"):
        answer = harness.command(f"focus {words}")
        assert answer.startswith("Done") and "The first post here comes at about" not in answer, answer
        assert "brings it forward again from" in answer
        s = _settings(db)
        assert s.focus_text == words and s.next_post_at == later, "the focus is kept, the post is not brought forward"
    with db.connection() as conn:  # ten minutes on
        storage.settings.upsert_channel_setting(conn, T, "C1", post_asked_at=datetime.now(UTC) - timedelta(minutes=11))
    assert "The first post here comes at about" in harness.command("focus protein design")
    assert _settings(db).next_post_at != later


def test_a_report_asked_after_the_clock_was_set_back_is_posted(harness: Harness, db: Database) -> None:
    """An on-demand report noted an hour ahead of now (the server's clock was set back since) does not hold the
    channel's reports for that hour: only a report of the last ten minutes does."""
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", report_asked_at=datetime.now(UTC) + timedelta(hours=1))
    assert "Posted this month's report" in harness.command("report")
    assert len(harness.standin.files) == 1
    assert "works again from" in harness.command("report"), "one on-demand report every ten minutes"
    assert len(harness.standin.files) == 1


def test_two_reports_asked_at_once_upload_one_file(harness: Harness, db: Database) -> None:
    """Two members ask for the report at the same moment (each runs in the pool of slow requests): one file is
    uploaded, and the other member is told when the report may be asked again."""
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    before = len(harness.standin.responses)
    asks = [threading.Thread(target=harness.command, args=("report",), kwargs={"user": u}) for u in ("U1", "U2", "U3")]
    for ask in asks:
        ask.start()
    for ask in asks:
        ask.join()
    harness.settle()
    answers = [str(r["text"]) for r in harness.standin.responses[before:]]
    assert len(answers) == 3, answers
    assert len(harness.standin.files) == 1, answers
    assert sum("Posted this month's report" in a for a in answers) == 1, answers
    assert sum("works again from" in a for a in answers) == 2, answers


def test_a_focus_carrying_a_nul_character_is_kept_without_it(harness: Harness, db: Database) -> None:
    """Postgres keeps no NUL in text: a focus carrying one is kept without it, rather than answered with
    "something went wrong"; mentions and control characters in it are shown to the channel as data."""
    answer = harness.command("focus protein\x00 design <!channel> <@U1>\u202e")
    assert answer.startswith("Done"), answer
    assert _settings(db).focus_text == "protein design <!channel> <@U1>\u202e"
    (announced,) = [str(p["text"]) for p in harness.standin.posts if str(p["text"]).startswith("<@U2>")]
    assert "protein design" in announced and "<!channel>" not in announced and "<@U1>" not in announced
    assert "\u202e" not in announced and "\x00" not in announced


def test_new_hours_move_the_next_post_into_them(harness: Harness, db: Database) -> None:
    """The next post was set by the schedule before a change: a lab that gave its timezone (`hours 9-17
    America/New_York`) got its next post at 9:00 UTC, before 5 in the morning there, and a channel set to `daily`
    after `weekly` waited out the week. Now the next post follows the new schedule, counted from the last post; a
    post asked for now stays where it is."""
    from zoneinfo import ZoneInfo

    now = datetime.now(UTC)
    last = now - timedelta(hours=1)
    utc_nine = datetime.combine((now + timedelta(days=1)).date(), datetime.min.time(), UTC) + timedelta(hours=9)
    assert "PaperPing here" in harness.command("status")  # the channel is known
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(
            conn, T, "C1", active=True, frequency="daily", last_post_at=last, next_post_at=utc_nine, weekdays_only=False
        )
    harness.command("hours 9-17 America/New_York every-day")
    moved = _settings(db).next_post_at
    new_york = ZoneInfo("America/New_York")
    assert moved is not None and moved.astimezone(new_york).hour == 9, moved
    # the day after the last post's day in New York, not a span of hours: with `now` between 22:00 and 01:00
    # there (03:00-06:00 UTC in winter), 9:00 the next day is under 12 hours after the last post, and on time
    day_after_last = last.astimezone(new_york).date() + timedelta(days=1)
    assert moved.astimezone(new_york).date() == day_after_last, "no sooner than the schedule allows"

    with db.connection() as conn:  # weekly, its next post a week after the last; then daily
        storage.settings.upsert_channel_setting(
            conn,
            T,
            "C1",
            frequency="weekly",
            last_post_at=now - timedelta(days=2),
            next_post_at=now + timedelta(days=5),
        )
    harness.command("frequency daily")
    moved = _settings(db).next_post_at
    assert moved is not None and moved < now + timedelta(days=2), moved

    with db.connection() as conn:  # no post scheduled yet (PaperPing has not joined): hours set none
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=None, last_post_at=None)
    harness.command("hours 0-24 every-day")
    assert _settings(db).next_post_at is None, "the first post waits for PaperPing to join and read the history"

    asked = now + timedelta(minutes=1)  # a post asked for now: its slot is open, and stays
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=asked, slot_at=asked)
    harness.command("hours 10-16 Asia/Tokyo")
    assert _settings(db).next_post_at == asked


def test_a_channel_reads_a_bounded_number_of_emoji_by_hand(harness: Harness, db: Database) -> None:
    """Each `emoji NAME ...` added a reading, with no bound: a member could add thousands, and every post and
    answer reads them all. Now a channel reads at most ``EMOJI_SET_BY_HAND`` by hand; a reading already set can
    still change, and `auto` frees a place."""
    from bot.commands.steering import EMOJI_SET_BY_HAND

    assert "Done" in harness.command("emoji e0 positive")
    with db.connection() as conn:  # the others set before, as the command stores them
        for k in range(1, EMOJI_SET_BY_HAND):
            storage.settings.upsert_emoji_override(conn, T, "C1", f"e{k}", "positive")
    refused = harness.command("emoji one_more negative")
    assert refused.startswith(f"This channel reads {EMOJI_SET_BY_HAND} emoji as set by hand already"), refused
    assert "Done: :e5: counts as negative" in harness.command("emoji e5 negative"), "a set reading still changes"
    assert "Done" in harness.command("emoji e7 auto")
    assert "Done: :one_more: counts as negative" in harness.command("emoji one_more negative")
    with db.connection() as conn:
        readings = storage.settings.load_emoji_overrides(conn, T, "C1")
    assert len(readings) == EMOJI_SET_BY_HAND and readings["e5"] == "negative" and "e7" not in readings
