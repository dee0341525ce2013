"""The papers one member may send ahead of every channel's shares in the index queue, through the real bolt app
and slack_sdk against the Slack stand-in: `focus`, `save` and `like` put a member's papers first up to
``MEMBER_FIRST_PER_HOUR`` an hour in a workspace; past it they are still queued, in turn with the channels' shares,
and the member is told, not refused. Another member, another workspace and the next hour have their own count."""

from __future__ import annotations

from pathlib import Path

from socialrag.db import Database
from socialrag.recommender import Recommender
from socialrag.storage.queue import MEMBER_FIRST_PER_HOUR, PRIORITY_NOW, PRIORITY_SHARED
from tests.support.harness import Harness, T, count
from tests.support.labbase import CachedEmbedder, build_lab

CAP = MEMBER_FIRST_PER_HOUR


def links(first: int, n: int) -> list[str]:
    """``n`` arXiv links no one has linked before, numbered from ``first``."""
    return [f"https://arxiv.org/abs/2601.{i:05d}" for i in range(first, first + n)]


def priorities(db: Database, urls: list[str]) -> list[int | None]:
    """Each linked paper's place in the index queue (None: not waiting)."""
    with db.connection() as conn:
        rows = dict(
            conn.execute(
                "SELECT i.value, q.priority FROM paper_ids i JOIN index_queue q ON q.paper_id = i.paper_id"
                " WHERE i.scheme = 'arxiv'"
            ).fetchall()
        )
    return [rows.get(url.rsplit("/", 1)[1]) for url in urls]


def test_a_members_papers_past_the_hourly_cap_wait_their_turn(harness: Harness, db: Database) -> None:
    assert CAP == 20 and CAP % 10 == 0  # a focus carries ten links at most: CAP // 10 focuses fill the cap
    first = links(0, 10)
    assert "I'm looking up the 10 linked papers now." in harness.command("focus " + " ".join(first))
    # the same link again (twice in one message, then by `save`) moves nothing up, so it counts nothing
    assert "10 linked papers now" in harness.command("focus " + " ".join(first))
    assert "Saved" in harness.command(f"save {first[0]}")
    rest = links(10, CAP - 10)
    for start in range(0, len(rest), 10):
        assert "linked papers now" in harness.command("focus " + " ".join(rest[start : start + 10]))
    assert priorities(db, first + rest) == [PRIORITY_NOW] * CAP, "within the cap every paper goes first"
    # past the cap: still saved and queued, behind no channel's shares but no longer ahead of them
    late_save = links(100, 1)
    assert "Saved" in harness.command(f"save {late_save[0]}")
    late_focus = links(200, 3)
    answer = harness.command("focus " + " ".join(late_focus))
    assert "lean toward that" in answer and "3 of them wait their turn behind the papers channels shared" in answer
    assert priorities(db, late_save + late_focus) == [PRIORITY_SHARED] * 4
    # another member of the workspace has their own count
    other_member = links(300, 1)
    assert "Saved" in harness.command(f"save {other_member[0]}", user="U3")
    assert priorities(db, other_member) == [PRIORITY_NOW]
    # the same member id in another workspace (its own channel) has its own count too
    harness.standin.state.channels["C9"] = {"id": "C9", "name": "reading", "members": ["U2", "UBOT"]}
    elsewhere = links(400, 1)
    assert "Saved" in harness.command(f"save {elsewhere[0]}", team="T0ELSE", channel="C9")
    assert priorities(db, elsewhere) == [PRIORITY_NOW]
    lookups = "SELECT coalesce(sum(calls), 0) FROM llm_usage WHERE kind = 'lookups' AND team_id = %s AND user_id = %s"
    assert (count(db, lookups, T, "U2"), count(db, lookups, T, "U3"), count(db, lookups, "T0ELSE", "U2")) == (CAP, 1, 1)
    assert count(db, "SELECT count(*) FROM llm_usage WHERE kind = 'llm'") == 0, "no LLM call was spent"
    # the next hour the member's papers go first again
    with db.connection() as conn:
        conn.execute("UPDATE llm_usage SET hour = hour - interval '1 hour'")
    next_hour = links(500, 1)
    assert "Saved" in harness.command(f"save {next_hour[0]}")
    assert priorities(db, next_hour) == [PRIORITY_NOW]


def test_like_past_the_cap_queues_the_paper_in_turn_and_says_so(harness: Harness, db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")  # PaperPing was invited to the lab's channel
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    before = links(0, CAP)
    for start in range(0, CAP, 10):
        harness.command("focus " + " ".join(before[start : start + 10]), user="U3")
    assert priorities(db, before) == [PRIORITY_NOW] * CAP
    late = links(100, 1)
    answer = harness.command(f"like {late[0]}", user="U3")
    assert "I don't know that paper yet; it waits its turn behind the papers channels shared" in answer
    assert priorities(db, late) == [PRIORITY_SHARED]
    # another member's like of a new paper still goes first
    assert "I'm looking it up now" in harness.command(f"like {links(200, 1)[0]}", user="U2")
    assert priorities(db, links(200, 1)) == [PRIORITY_NOW]
