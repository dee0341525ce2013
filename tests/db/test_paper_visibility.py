"""A paper a private channel brought in stays that channel's: never a row of another channel's conference planner
while it is shared, saved, focused on or picked there, and gone once nothing refers to it any more."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import psycopg
import pytest

from socialrag import knowledge, storage
from socialrag.db import Database
from socialrag.knowledge import index_messages
from socialrag.models import Channel, Message, PaperRef

T = "T0LAB"
AT = datetime(2025, 3, 3, 10, tzinfo=UTC)
SECRET = PaperRef("doi", "10.9999/secret", "https://doi.org/10.9999/secret")


def _lab(conn: psycopg.Connection) -> int:
    """#open (C1) and a private channel (G2); a venue of 2024 to plan for. Returns the venue."""
    storage.workspaces.upsert_team(conn, T)
    storage.workspaces.upsert_channel(conn, Channel(T, "C1", "open"))
    storage.workspaces.upsert_channel(conn, Channel(T, "G2", "secret"))
    row = conn.execute("INSERT INTO venues (name, normalized_name) VALUES ('ACL', 'acl') RETURNING id").fetchone()
    assert row is not None
    return int(row[0])


def _as_a_source_left_it(conn: psycopg.Connection, venue: int, value: str) -> int:
    """The paper's row as a source's look-up leaves it (titled, of the venue, not in the catalog)."""
    pid = storage.papers.ensure_papers(conn, [("doi", value)])[("doi", value)]
    conn.execute(
        "UPDATE papers SET title = %s, venue_id = %s, year = 2024, metadata_source = 's2' WHERE id = %s",
        (f"Paper {value}", venue, pid),
    )
    return pid


def _planner(conn: psycopg.Connection, venue: int, channel: str) -> list[int]:
    return storage.venues.load_venue_papers(conn, [venue], 2024, T, channel)


def test_a_deleted_private_share_takes_its_paper_with_it(db: Database) -> None:
    with db.connection() as conn:
        venue = _lab(conn)
        index_messages(
            conn, [Message(T, "G2", "5.000001", "U2", "<https://doi.org/10.9999/secret>", AT, papers=(SECRET,))]
        )
        pid = _as_a_source_left_it(conn, venue, "10.9999/secret")
        shared = (_planner(conn, venue, "C1"), _planner(conn, venue, "G2"))
        knowledge.record_deletion(conn, T, "G2", "5.000001")
        after = _planner(conn, venue, "C1")
        left = conn.execute("SELECT count(*) FROM papers WHERE id = %s", (pid,)).fetchone()
    assert shared == ([], [pid])
    assert after == [] and left == (0,), "nothing refers to it any more: it goes, as with forget-me"


def test_an_edit_that_swaps_the_only_link_takes_the_old_paper_with_it(db: Database) -> None:
    other = PaperRef("doi", "10.9999/other", "https://doi.org/10.9999/other")
    with db.connection() as conn:
        _lab(conn)
        index_messages(
            conn, [Message(T, "G2", "5.000001", "U2", "<https://doi.org/10.9999/secret>", AT, papers=(SECRET,))]
        )
        knowledge.record_edit(
            conn, Message(T, "G2", "5.000001", "U2", "<https://doi.org/10.9999/other>", AT, papers=(other,))
        )
        values = [r[0] for r in conn.execute("SELECT value FROM paper_ids ORDER BY value")]
    assert values == ["10.9999/other"]


def _save(conn: psycopg.Connection, pids: list[int]) -> None:
    for pid in pids:
        storage.reading_list.save_paper(conn, T, "G2", pid, "U2", AT)


def _focus(conn: psycopg.Connection, pids: list[int]) -> None:
    storage.settings.upsert_channel_setting(conn, T, "G2", focus_text="secret", focus_paper_ids=pids)


def _pick(conn: psycopg.Connection, pids: list[int]) -> None:
    storage.member_picks.record_picks_sent(conn, T, "U2", [(pid, "G2") for pid in pids], AT)


@pytest.mark.parametrize("bring_in", [_save, _focus, _pick], ids=["saved", "focused on", "picked"])
def test_a_paper_only_a_private_channel_brought_in_is_its_own(
    db: Database, bring_in: Callable[[psycopg.Connection, list[int]], None]
) -> None:
    """Saved with `/paperping save`, focused on, or sent in a member's picks from #secret only: #open's planner
    does not list it and does not know its venue; #secret's does. A paper no channel brought in, and a catalog
    paper, are everyone's."""
    with db.connection() as conn:
        venue = _lab(conn)
        secret = _as_a_source_left_it(conn, venue, "10.9999/secret")
        found = _as_a_source_left_it(conn, venue, "10.9999/found")  # a source found it; no channel brought it in
        catalog = _as_a_source_left_it(conn, venue, "10.9999/catalog")
        conn.execute("UPDATE papers SET in_catalog = true WHERE id = %s", (catalog,))
        bring_in(conn, [secret, catalog])
        seen = {c: _planner(conn, venue, c) for c in ("C1", "G2")}
        conn.execute("UPDATE papers SET venue_id = NULL WHERE id <> %s", (secret,))
        venues = {c: [v[0] for v in storage.venues.load_venues(conn, T, c)] for c in ("C1", "G2")}
    assert seen == {"C1": sorted([found, catalog]), "G2": sorted([secret, found, catalog])}
    assert venues == {"C1": [], "G2": [venue]}
