"""App Home under Slack's limits, through signed events into the real bolt app, slack_sdk and the Slack stand-in:
the view is published when Slack first answers ``views.publish`` with a 429, and a member whose channels hold long
titles in another script still gets a Home Slack takes (it refuses a view over 250 kB as a whole)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel
from tests.support.harness import Harness, T


def open_home(harness: Harness, user: str) -> None:
    harness.standin.views.pop(user, None)
    harness.event({"type": "app_home_opened", "user": user, "channel": "D1", "tab": "home", "event_ts": "9.0"})
    harness.settle()


def member_in_channels(db: Database, user: str, count: int, title: str = "") -> None:
    """``count`` active channels with ``user`` in them, their member lists just read; with ``title``, each
    channel's reading list holds five papers of that title, saved now."""
    now = datetime.now(UTC)
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T, domain="lab")
        for k in range(count):
            cid = f"C{k:04d}"
            storage.workspaces.upsert_channel(conn, Channel(T, cid, f"reading-{k:03d}"))
            storage.settings.upsert_channel_setting(conn, T, cid, active=True)
            storage.workspaces.add_channel_member(conn, T, cid, user)
            for n in range(5 if title else 0):
                row = conn.execute("INSERT INTO papers (title) VALUES (%s) RETURNING id", (f"{title} {n}",)).fetchone()
                assert row is not None
                storage.reading_list.save_paper(conn, T, cid, int(row[0]), user, now - timedelta(minutes=n))
        conn.execute("UPDATE channels SET members_read_at = now()")


def test_app_home_is_published_when_slack_first_answers_429(harness: Harness, db: Database) -> None:
    """Slack rate limits ``views.publish`` (Tier 4, per workspace): the Home waits out the Retry-After and is
    published. Before, the 429 ended the work and the member's Home stayed as it was (or empty)."""
    member_in_channels(db, "U1", 1)
    harness.standin.rate_limits["views.publish"] = 1
    open_home(harness, "U1")
    assert len(harness.standin.calls_to("views.publish")) == 2, "asked again after the Retry-After"
    assert "reading-000" in json.dumps(harness.standin.views["U1"])


def test_a_home_of_long_titles_in_another_script_stays_under_slacks_size_limit(harness: Harness, db: Database) -> None:
    """25 channels, each with five saved papers whose titles are long and in a script outside ASCII (each
    character sent as a 12-byte JSON escape): every section within 3,000 characters, yet the whole view over
    250 kB, which Slack refuses (``view_too_large``), so the member's Home was never published. Now the
    channels that fit are shown and the others counted, with the member's own controls."""
    member_in_channels(db, "U1", 25, title="𝒜" * 400)
    open_home(harness, "U1")
    assert "U1" in harness.standin.views, "Slack took the view"
    view = harness.standin.views["U1"]
    text = json.dumps(view)
    assert len(text) <= 250_000 and len(view["blocks"]) <= 100
    assert "reading-000" in text and "𝒜" in json.dumps(view, ensure_ascii=False)
    shown = sum(1 for k in range(25) if f"reading-{k:03d}" in text)
    assert 0 < shown < 25
    assert f"And {25 - shown} more channel" in text and "Forget me" in text and "Turn mentions off" in text


def test_a_channel_too_long_for_one_section_is_cut_between_lines_never_inside_an_escape(
    harness: Harness, db: Database
) -> None:
    """Saved papers whose titles are all ampersands (each escaped as ``&amp;``, five characters) make a channel's
    part longer than a section's 3,000 characters. It was cut at the 3,000th character, inside an escape, and the
    member saw a fragment such as ``&am``. Now the section keeps the lines that fit, each whole."""
    member_in_channels(db, "U1", 1, title="&" * 300)
    open_home(harness, "U1")
    (section,) = [
        str(b["text"]["text"]) for b in harness.standin.views["U1"]["blocks"] if "reading-000" in str(b.get("text"))
    ]
    assert len(section) <= 3000 and "&amp;" in section
    assert re.sub(r"&(amp|lt|gt);", "", section).count("&") == 0, "no escape is cut"
    lines = section.split("\n")
    assert all(line.count("&amp;") in (0, 200) for line in lines), "a title is shown whole (200 characters) or not"
