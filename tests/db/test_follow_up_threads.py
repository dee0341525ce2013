"""The threads follow-ups are said in: a share deleted in Slack, or forgotten with its member's forget-me, leaves
no ts of it in ``follow_ups`` (a follow-up still waiting for it is dropped, one already said keeps no ts), the
caps still hold without it, and a watch run reads each channel's threads once however many of its papers are
due."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import check_follow_ups, record_deletion
from socialrag.knowledge.intake import index_messages
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.models import Channel, Message, Paper, PaperRef
from socialrag.recommender import FollowUpNote, send_follow_ups
from socialrag.storage.follow_ups import GONE, SharedThread
from tests.db.test_follow_up_sources import s2_answers

T = "T0THR"
NOW = datetime(2026, 5, 1, tzinfo=UTC)
DAY = timedelta(days=1)
CAPS = {"thread_gap_days": 30, "per_week": 3}


def _channel(conn: psycopg.Connection, channel: str = "C1") -> None:
    storage.workspaces.upsert_team(conn, T)
    storage.workspaces.upsert_channel(conn, Channel(T, channel, channel.lower()))
    storage.settings.upsert_channel_setting(conn, T, channel, active=True)


def _share(conn: psycopg.Connection, ts: str, user: str, arxiv: str, at: datetime, channel: str = "C1") -> int:
    """A member shares an arXiv paper (with a title, as its lookup would have filled); the paper's id."""
    ref = PaperRef("arxiv", arxiv, f"https://arxiv.org/abs/{arxiv}")
    index_messages(conn, [Message(T, channel, ts, user, f"<{ref.url}>", at, papers=(ref,))])
    storage.papers.record_papers(conn, [Paper(ids={"arxiv": arxiv}, source="arxiv", title=arxiv, venue="arXiv")])
    row = conn.execute("SELECT paper_id FROM paper_ids WHERE scheme = 'arxiv' AND value = %s", (arxiv,)).fetchone()
    assert row is not None
    return int(row[0])


def _said(conn: psycopg.Connection, pid: int, kind: str, key: str, thread_ts: str, at: datetime) -> None:
    """A follow-up noticed and said at ``at`` in the thread ``thread_ts``, as the sender claims and settles it."""
    assert storage.follow_ups.record_follow_up(conn, T, "C1", pid, kind, key, {"venue": key}, at)
    row = conn.execute("SELECT id FROM follow_ups WHERE paper_id = %s AND key = %s", (pid, key)).fetchone()
    assert row is not None
    fid = row[0]
    assert storage.follow_ups.claim_follow_up(conn, fid, at, **CAPS)
    storage.follow_ups.finish_follow_up(conn, fid, "posted", thread_ts=thread_ts, reply_ts="9.900001")


def _rows(conn: psycopg.Connection) -> dict[tuple[int, str], tuple[str, str | None, str | None]]:
    rows = conn.execute("SELECT paper_id, key, status, thread_ts, reason FROM follow_ups").fetchall()
    return {(r[0], r[1]): (r[2], r[3], r[4]) for r in rows}


def test_forget_me_leaves_no_ts_of_the_members_shares_in_follow_ups(db: Database) -> None:
    """U1 shared A and C, U2 shared B; a follow-up was said under A and one under B, one waits for C and one for B.
    U1 uses forget-me: A's keeps no ts of U1's message, C's is dropped (its share is gone), B's are untouched."""
    with db.connection() as conn:
        _channel(conn)
        a = _share(conn, "1.000001", "U1", "2401.10001", NOW - 20 * DAY)
        b = _share(conn, "2.000001", "U2", "2401.10002", NOW - 19 * DAY)
        c = _share(conn, "3.000001", "U1", "2401.10003", NOW - 18 * DAY)
        _said(conn, a, "published", "ACL", "1.000001", NOW - 5 * DAY)
        _said(conn, b, "published", "EMNLP", "2.000001", NOW - 5 * DAY)
        for pid in (b, c):
            assert storage.follow_ups.record_follow_up(conn, T, "C1", pid, "version", "2", {"version": 2}, NOW)
        storage.privacy.forget_member_in(conn, (T,), "U1")
        rows = _rows(conn)
        left = conn.execute(
            "SELECT count(*) FROM follow_ups f WHERE f::text LIKE '%1.000001%' OR f::text LIKE '%3.000001%'"
        ).fetchone()
    assert left == (0,), "no follow-up holds the ts of a message PaperPing was told to forget"
    assert rows[a, "ACL"] == ("posted", None, None)
    assert rows[c, "2"] == ("dropped", None, GONE)
    assert rows[b, "EMNLP"] == ("posted", "2.000001", None) and rows[b, "2"] == ("waiting", None, None)


def test_a_deleted_share_leaves_no_ts_and_the_caps_still_hold_without_it(db: Database) -> None:
    """A was shared by U1 and again by U3. U1 deletes their share (the thread goes): the follow-up said there keeps
    no ts, still keeps the thread's monthly gap, and the one waiting goes to U3's share later. U3 deletes theirs
    while that reply is being sent: it keeps no ts either, and the next one waiting is dropped."""
    with db.connection() as conn:
        _channel(conn)
        a = _share(conn, "1.000001", "U1", "2401.20001", NOW - 20 * DAY)
        _share(conn, "4.000001", "U3", "2401.20001", NOW - 10 * DAY)
        index_messages(conn, [Message(T, "C1", "1.000002", "U2", "a reply", NOW - 19 * DAY, thread_ts="1.000001")])
        _said(conn, a, "published", "ACL", "1.000001", NOW - 5 * DAY)
        assert storage.follow_ups.record_follow_up(conn, T, "C1", a, "version", "2", {"version": 2}, NOW)
        assert record_deletion(conn, T, "C1", "1.000002") == 1, "a reply deleted: the share stays"
        assert _rows(conn)[a, "ACL"] == ("posted", "1.000001", None)
        assert record_deletion(conn, T, "C1", "1.000001") >= 1  # the share, as Slack's message_deleted says
        rows = _rows(conn)
    assert rows[a, "ACL"] == ("posted", None, None)
    assert rows[a, "2"] == ("waiting", None, None), "U3's share of the paper is still its thread"
    said: list[str] = []

    def send(team: str, channel: str, thread_ts: str, note: FollowUpNote) -> str:
        said.append(thread_ts)
        with db.connection() as conn:  # U3 deletes their share while the reply goes out
            record_deletion(conn, team, channel, thread_ts)
            storage.follow_ups.record_follow_up(conn, T, "C1", a, "version", "3", {"version": 3}, NOW)
        return "9.900002"

    assert send_follow_ups(db, send, NOW) == 0, "the thread heard one 5 days ago, its ts gone or not"
    assert send_follow_ups(db, send, NOW + 26 * DAY) == 1 and said == ["4.000001"]
    with db.connection() as conn:
        rows = _rows(conn)
        left = conn.execute("SELECT count(*) FROM follow_ups f WHERE f::text LIKE '%4.000001%'").fetchone()
    assert rows[a, "2"] == ("posted", None, None) and left == (0,)
    assert rows[a, "3"] == ("waiting", None, None)  # noticed after the deletion: the sender drops it
    assert send_follow_ups(db, send, NOW + 60 * DAY) == 0
    with db.connection() as conn:
        assert _rows(conn)[a, "3"] == ("dropped", None, GONE)


def test_a_watch_run_reads_each_channels_threads_once(db: Database) -> None:
    """30 papers shared in #c1 and 4 in #c2 are due in one run: each channel's threads are read once (they were
    read once per paper), and a new paper citing two of #c1's is noted once, in the earlier thread."""
    arxiv = [f"2402.{k:05d}" for k in range(34)]
    s2_ids = {a: f"{k:040x}" for k, a in enumerate(arxiv)}
    citing: dict[str, list[dict[str, object]]] = {}

    s2 = s2_answers(s2_ids, citing)

    with db.connection() as conn:
        _channel(conn, "C1")
        _channel(conn, "C2")
        pids = [
            _share(conn, f"{k + 1}.000001", "U1", a, NOW - (40 - k) * DAY, "C1" if k < 30 else "C2")
            for k, a in enumerate(arxiv)
        ]
    reads: list[tuple[str, str]] = []

    def load(conn: psycopg.Connection, team: str, channel: str) -> dict[int, SharedThread]:
        reads.append((team, channel))
        return storage.follow_ups.load_shared_threads(conn, team, channel)

    client = SemanticScholar("https://s2.test/", transport=httpx.MockTransport(s2), min_interval=0.0)
    assert check_follow_ups(db, [client], NOW, DAY, limit=100, load_threads=load) == 0, "the first look"
    assert sorted(reads) == [(T, "C1"), (T, "C2")]
    citer = {"paperId": "c" * 40, "externalIds": {}, "title": "On two of them", "year": 2026}
    citing.update({s2_ids[arxiv[7]]: [citer], s2_ids[arxiv[3]]: [citer]})
    reads.clear()
    assert check_follow_ups(db, [client], NOW + 2 * DAY, DAY, limit=100, load_threads=load) == 1
    assert sorted(reads) == [(T, "C1"), (T, "C2")]
    with db.connection() as conn:
        rows = conn.execute("SELECT channel_id, paper_id, kind, detail FROM follow_ups").fetchall()
    assert [(r[0], r[1], r[2], r[3]["others"]) for r in rows] == [("C1", pids[3], "builds_on", [pids[7]])]
