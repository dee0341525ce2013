"""The monthly report shows the month that ended, however late in the next month it goes, uploaded through the
real slack_sdk to the Slack stand-in (files.getUploadURLExternal, the bytes, files.completeUploadExternal)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from slack_sdk import WebClient

from bot.delivery.report_upload import post_due_reports
from socialrag.db import Database
from socialrag.knowledge.intake import index_messages
from socialrag.models import Message, PaperRef
from tests.support.harness import Harness, T


def test_a_monthly_report_sent_after_the_first_shows_the_month_that_ended(harness: Harness, db: Database) -> None:
    """Slack refused the upload all of the 1st (each retry waits longer, up to a day), or the process was down
    then: the report that goes on the 2nd is March's. Before, it showed the day and a half of April so far, with
    none of March's shares, and March's report was never sent."""
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    assert "monthly report here on the 1st" in harness.command("report monthly")
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, datetime(2031, 3, 1, 8, tzinfo=UTC)) == 1
    with db.connection() as conn:  # three papers members shared in March
        for day in (3, 12, 28):
            at = datetime(2031, 3, day, 10, tzinfo=UTC)
            ref = PaperRef("arxiv", f"2103.{day:05d}", f"https://arxiv.org/abs/2103.{day:05d}", f"Paper {day}")
            index_messages(conn, [Message(T, "C1", f"{at.timestamp():.6f}", "U2", f"<{ref.url}>", at, papers=(ref,))])

    harness.standin.fail_next["files.getUploadURLExternal"] = 1  # Slack's 500 on the 1st
    april = datetime(2031, 4, 1, 8, tzinfo=UTC)
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, april) == 0
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, april + timedelta(days=1, hours=2)) == 1
    comment = harness.standin.files[-1]["initial_comment"]
    assert comment.startswith("*01 Mar to 29 Mar 2031:* 3 papers shared"), comment


def test_a_monthly_report_turned_on_mid_month_first_goes_on_the_next_first(harness: Harness, db: Database) -> None:
    """`report monthly` says "on the 1st", yet typed mid-month it posted last month's report at the next tick.
    Now the first is this month's, on the next 1st. Typed again while on (a stopped report's retry), it may go at
    once; turned off and on within a month, nothing is sent twice."""
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    now = datetime.now(UTC)
    month = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    following = (month + timedelta(days=32)).replace(day=1)
    said = harness.command("report monthly")
    assert f"the first on 1 {following:%B} ({month:%B}'s)" in said, said
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, now + timedelta(minutes=1)) == 0
    assert "the first on" not in harness.command("report monthly"), "already on: a retry, nothing moves"
    assert post_due_reports(db, harness.ctx.pacer, lambda team: client, following + timedelta(hours=8)) == 1
    assert harness.standin.files[-1]["initial_comment"].startswith(f"*01 {month:%b}"), "this month's"
