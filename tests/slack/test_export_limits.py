"""`/paperping export` of a long reading list through the real bolt app against the Slack stand-in: one upload
holds the newest ``EXPORT_MOST`` papers and says how many the list has; an ask while an export is under way is
not told that the file is there."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import rispy

from bot.commands.reading import EXPORT_CHARS, EXPORT_MOST
from socialrag.db import Database
from tests.support.harness import Harness, T


def save_many(harness: Harness, db: Database, n: int) -> None:
    """``n`` papers saved one second apart, "Paper 1" first."""
    assert "reading list is empty" in harness.command("list")  # the workspace and the channel are known
    with db.connection() as conn:
        conn.execute(
            """
            WITH made AS (
                INSERT INTO papers (title, year)
                SELECT 'Paper ' || g, 2020
                  FROM generate_series(1, %(n)s) g RETURNING id
            )
            INSERT INTO saved_papers (team_id, channel_id, paper_id, user_id, saved_at)
            SELECT %(t)s, 'C1', id, 'U3', %(at)s + make_interval(secs => id) FROM made
            """,
            {"n": n, "t": T, "at": datetime(2024, 1, 1, tzinfo=UTC)},
        )


def test_a_list_over_the_cap_uploads_its_newest_papers_and_says_how_many_the_list_has(
    harness: Harness, db: Database
) -> None:
    save_many(harness, db, EXPORT_MOST + 3)
    said = harness.command("export ris", timeout=120)
    assert said == f"Uploaded the newest {EXPORT_MOST:,} of the reading list's {EXPORT_MOST + 3:,} papers here."
    upload = harness.standin.files[-1]
    assert upload["title"] == f"Reading list (the newest {EXPORT_MOST:,} of {EXPORT_MOST + 3:,} papers, RIS)"
    titles = [r["title"] for r in rispy.loads(upload["data"].decode())]
    assert len(titles) == EXPORT_MOST
    assert titles[0] == "Paper 4" and titles[-1] == f"Paper {EXPORT_MOST + 3}", "the newest, oldest save first"
    assert "Paper 3" not in titles


def test_an_ask_while_an_export_is_under_way_is_not_told_it_is_uploaded(harness: Harness, db: Database) -> None:
    """The cooldown is taken when an export begins: a second ask meanwhile hears when it was asked for, not that a
    file is in the channel."""
    save_many(harness, db, 2)
    with db.connection() as held:
        held.execute("LOCK TABLE papers IN ACCESS EXCLUSIVE MODE")  # the first export cannot read the list yet
        first = threading.Thread(target=lambda: harness.command("export bibtex", user="U3", timeout=15))
        first.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with db.connection() as conn:
                row = conn.execute("SELECT export_asked_at FROM channel_settings WHERE channel_id = 'C1'").fetchone()
            if row and row[0]:
                break
            time.sleep(0.05)
        said = harness.command("export ris")
        assert not harness.standin.files, "the first export has uploaded nothing yet"
    first.join(20)
    harness.settle()
    assert row and row[0]
    asked = row[0].astimezone(UTC)
    assert said.startswith(
        f"The reading list was exported here at {asked:%H:%M} UTC (a long list may still be uploading)"
    )
    assert "`/paperping export` works again from" in said
    assert len(harness.standin.files) == 1
    assert harness.standin.responses[-1]["text"] == "Uploaded the reading list (2 papers) here."


def test_papers_with_the_longest_names_and_titles_make_a_file_of_bounded_size(harness: Harness, db: Database) -> None:
    """Each field a file writes is capped, but a list of papers whose sources sent 100 names of 200 characters
    and a title of 1,000 each still grew with every paper (5,000 such papers: gigabytes). Now the upload holds the
    newest papers that fit ``EXPORT_CHARS`` of text, and says so."""
    save_many(harness, db, 300)
    name = "Ω" * 150 + " Byron"  # escaped for LaTeX, each letter is several characters
    with db.connection() as conn:
        conn.execute(
            """
            WITH made AS (
                INSERT INTO authors (name, normalized_name)
                SELECT %(name)s || g, 'byron' || g FROM generate_series(1, 100) g RETURNING id
            )
            INSERT INTO paper_authors (paper_id, position, author_id)
            SELECT p.paper_id, row_number() OVER (PARTITION BY p.paper_id ORDER BY a.id), a.id
              FROM saved_papers p CROSS JOIN made a
            """,
            {"name": name},
        )
        conn.execute("UPDATE papers SET title = title || ' ' || repeat('word ', 250)")
    said = harness.command("export bibtex", timeout=120)
    # each paper writes some 17,000 characters: its title (1,000) and 100 names of about 160
    assert said.startswith("Uploaded the newest ") and said.endswith(" of the reading list's 300 papers here."), said
    n = int(said.removeprefix("Uploaded the newest ").split(" ")[0])
    assert EXPORT_CHARS // 20_000 < n < EXPORT_CHARS // 15_000, n
    upload = harness.standin.files[-1]
    assert len(upload["data"]) < 8 * EXPORT_CHARS, len(upload["data"])
    assert upload["data"].decode().count("@article") + upload["data"].decode().count("@misc") == n
