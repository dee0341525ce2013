"""The channel report and App Home's month in figures, from what PaperPing really posted through the Slack
stand-in: PaperPing's own posts are never counted as members' shares, and a post deleted in Slack leaves the
report (its title, its count) as it leaves `why`, `status` and App Home's list of posts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.recommender import Recommender
from socialrag.report import load_report_data, month_summary, write_report
from tests.support.harness import Harness, T, count
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab
from tests.support.slots import slot_worker


def _post_once(harness: Harness, db: Database, tmp_path: Path) -> dict[str, str]:
    """The lab's history, then one post by PaperPing at ``AS_OF`` through the stand-in."""
    build_lab(db, tmp_path, CachedEmbedder())
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.channels.activate(T, "C1", AS_OF)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=AS_OF, weekdays_only=False)
    with Recommender(harness.settings, db, embedder=CachedEmbedder()) as rec:
        assert slot_worker(db, lambda team: client, rec, clock=lambda: AS_OF).tick() == 1
    (post,) = [p for p in harness.standin.posts if p.get("metadata")]
    return post


def _month(db: Database, tmp_path: Path) -> tuple[str, str]:
    """The month's two lines as the upload carries them, and the HTML page, from the post on (the post is recorded
    at the slot's time, its message at the stand-in's)."""
    until = datetime.now(UTC) + timedelta(days=1)
    with db.connection() as conn:
        data = load_report_data(conn, T, "C1", since=AS_OF - timedelta(hours=1), until=until)
    _, text = month_summary(data, tmp_path / "month.png")
    page = write_report(data, tmp_path / "page").path.read_text(encoding="utf-8")
    return text, page


def test_paperpings_own_post_is_not_a_members_share_and_a_deleted_post_leaves_the_report(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    post = _post_once(harness, db, tmp_path)
    with db.connection() as conn:
        title = conn.execute("SELECT p.title FROM recommendations r JOIN papers p ON p.id = r.paper_id").fetchone()[0]
        headline = storage.reports.load_headline(conn, T, "C1", AS_OF + timedelta(hours=1))
        shared = storage.reports.load_headline(conn, T, "C1", datetime.now(UTC) + timedelta(seconds=5)).shared
    text, page = _month(db, tmp_path)
    # the lab's one share in the period is U2's; PaperPing's post is no member's share
    assert "1 papers shared" in text and "PaperPing posted 1" in text, text
    assert text.startswith("*14 Jan to "), "the months keep their capitals"
    assert shared == 0 and headline.posts == 1, "PaperPing's post is not a member's share"
    assert title[:40] in page

    harness.event(
        {
            "type": "reaction_added",
            "user": "U3",
            "reaction": "+1",
            "event_ts": "1900000000.000100",
            "item": {"type": "message", "channel": "C1", "ts": post["ts"]},
        }
    )
    own = "SELECT count(*) FROM messages WHERE team_id = %s AND channel_id = 'C1' AND ts = %s"
    assert count(db, own, T, post["ts"]) == 1, "PaperPing's post is kept as its share, for the reactions to it"
    reacted = count(db, "SELECT count(*) FROM reactions WHERE user_id = 'U3'")
    # as Slack sends it: the message before the deletion is PaperPing's own (bolt drops PaperPing's own events)
    before = {"type": "message", "user": "UBOT", "bot_id": "BBOT", "text": post.get("text"), "ts": post["ts"]}
    harness.event(
        {
            "type": "message",
            "subtype": "message_deleted",
            "hidden": True,
            "channel": "C1",
            "ts": "1900000001.000100",
            "event_ts": "1900000001.000100",
            "deleted_ts": post["ts"],
            "previous_message": before,
        }
    )
    with db.connection() as conn:
        assert storage.posts.is_deleted_post(conn, T, "C1", post["ts"])
        headline = storage.reports.load_headline(conn, T, "C1", AS_OF + timedelta(hours=1))
    assert count(db, own, T, post["ts"]) == 0, "the deleted post's share and its reactions went"
    assert count(db, "SELECT count(*) FROM reactions WHERE user_id = 'U3'") == reacted - 1
    text, page = _month(db, tmp_path)
    assert "PaperPing posted 0" in text, text
    assert headline.posts == 0, "App Home's month leaves the deleted post out, as its list of posts does"
    assert title[:40] not in page, "the page no longer lists the deleted post"


def test_status_and_top_take_a_place_in_the_bounded_pool_like_other_slow_commands(
    harness: Harness, db: Database
) -> None:
    """`status` reads the channel's whole history (the emoji it learnt) and `top year` a year of engagement: seconds
    each in a large channel. They run in the slow pool, so one member's burst holds at most two places there and
    never the listeners that handle events; another member is answered meanwhile."""
    import threading

    from bot.listeners.commands import MEMBER_BUSY

    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    release = threading.Event()
    for _ in range(2):  # two of U2's slow requests, still under way
        assert harness.ctx.slow.submit(lambda: release.wait(10), owner=f"{T}:U2")
    try:
        assert harness.command("status", user="U2") == MEMBER_BUSY
        assert harness.command("top year", user="U2") == MEMBER_BUSY
        assert "PaperPing here" in harness.command("status", user="U3")
        assert "past month" in harness.command("top", user="U3")
    finally:
        release.set()
