"""A member on the forget list can still use PaperPing, and what they cause stores nothing of theirs: the counts
that bound their work are kept under one key the workspace's forgotten members share (so a forgotten member's
second costly request within the cooldown is still refused), and the rows their actions make either are not kept
or are kept for the channel with who asked cleared. Nothing of the other members changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel, Member
from socialrag.storage.usage import FORGOTTEN

T, OTHER = "T0LAB", "T0ELSE"
NOW = datetime(2025, 3, 3, 10, 5, tzinfo=UTC)
# ids a hostile or odd caller may send: the shared key itself, quotes and SQL, a very long id
ODD = ("U2'; DROP TABLE llm_usage; --", "U" + "9" * 300)


def _rows_naming(conn: psycopg.Connection, user: str) -> dict[str, int]:
    """Every table with a member column, and how many of its rows in the workspace ``T`` name ``user`` there."""
    tables = conn.execute(
        """
        SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = 'public' AND column_name IN ('user_id', 'invited_by', 'installer_id')
           AND table_name <> 'forgotten_members'
        """
    ).fetchall()
    found = {}
    for table, column in tables:  # names from the catalogue, never from input
        n = conn.execute(f"SELECT count(*) FROM {table} WHERE team_id = %s AND {column} = %s", (T, user)).fetchone()
        if n and n[0]:
            found[f"{table}.{column}"] = int(n[0])
    return found


def _workspace(db: Database) -> None:
    with db.connection() as conn:
        for team in (T, OTHER):
            storage.workspaces.upsert_team(conn, team)
            storage.workspaces.upsert_channel(conn, Channel(team, "C1", "papers"))
        storage.workspaces.upsert_members(conn, [Member(T, "U1", "ana"), Member(T, "U2", "ben"), Member(T, "U3", "cy")])
        for user in ("U2", "U3", *ODD):
            storage.privacy.forget_member(conn, T, user)


def test_a_forgotten_members_cooldowns_and_counts_bound_them_under_a_shared_key(db: Database) -> None:
    _workspace(db)
    length = timedelta(seconds=20)
    with db.connection() as conn:
        assert storage.usage.take_cooldown(conn, T, "U2", "ask", NOW, length) is None
        # their second costly request within the cooldown is refused, and so is another forgotten member's
        assert storage.usage.take_cooldown(conn, T, "U2", "ask", NOW + timedelta(seconds=5), length) == NOW + length
        assert storage.usage.take_cooldown(conn, T, "U3", "ask", NOW + timedelta(seconds=5), length) == NOW + length
        for odd in ODD:
            assert storage.usage.take_cooldown(conn, T, odd, "ask", NOW, length) == NOW + length
        # other members, and the same id in a workspace where it is not forgotten, are counted as before
        assert storage.usage.take_cooldown(conn, T, "U1", "ask", NOW, length) is None
        assert storage.usage.take_cooldown(conn, OTHER, "U2", "ask", NOW, length) is None
        assert storage.usage.take_cooldown(conn, T, "U2", "ask", NOW + length, length) is None  # it ends

        # LLM calls: one cap for the forgotten members together; the channel's count is the channel's
        assert storage.usage.take_llm_call(conn, T, "C1", "U2", NOW, per_member=2, per_channel=10) is None
        assert storage.usage.take_llm_call(conn, T, "C1", "U3", NOW, per_member=2, per_channel=10) is None
        assert storage.usage.take_llm_call(conn, T, "C1", "U2", NOW, per_member=2, per_channel=10) == "member"
        assert storage.usage.take_llm_call(conn, T, None, ODD[0], NOW, per_member=2, per_channel=10) == "member"
        assert storage.usage.take_llm_call(conn, T, "C1", "U1", NOW, per_member=2, per_channel=10) is None

        # the papers a member puts first in the index queue (`save`, `focus`, `like`) in an hour
        paper_ids = list(storage.papers.ensure_papers(conn, [("arxiv", f"2401.0000{i}") for i in range(4)]).values())
        assert storage.queue.enqueue_for_member(conn, T, "U2", paper_ids[:2], NOW, per_hour=3) == 0
        assert storage.queue.enqueue_for_member(conn, T, "U3", paper_ids[2:], NOW, per_hour=3) == 1

        for user in ("U2", "U3", *ODD):
            assert _rows_naming(conn, user) == {}
        kept = conn.execute(
            "SELECT kind, calls FROM llm_usage WHERE team_id = %s AND user_id = %s ORDER BY kind", (T, FORGOTTEN)
        ).fetchall()
        assert kept == [("llm", 2), ("lookups", 3)]
        assert conn.execute("SELECT count(*) FROM member_cooldowns WHERE user_id = 'U1'").fetchone() == (1,)


def test_a_forgotten_members_answer_feedback_is_not_kept(db: Database) -> None:
    _workspace(db)
    with db.connection() as conn:
        for user in ("U2", *ODD):
            assert not storage.usage.record_answer_feedback(conn, T, "DU2", "1.000001", user, "C1", True, NOW)
            assert _rows_naming(conn, user) == {}
        assert storage.usage.record_answer_feedback(conn, T, "DU1", "1.000002", "U1", "C1", False, NOW)
        assert storage.usage.record_answer_feedback(conn, OTHER, "DU2", "1.000001", "U2", "C1", True, NOW)
        assert storage.usage.load_answer_feedback(conn, T, "C1", NOW) == (0, 1)


def test_a_forgotten_members_actions_keep_nothing_of_theirs_and_the_channel_keeps_its_part(db: Database) -> None:
    """Each table a member's action writes their id into, written as a forgotten member (U2) and as another (U1)."""
    _workspace(db)
    with db.connection() as conn:
        paper = storage.papers.ensure_papers(conn, [("arxiv", "1706.03762")])[("arxiv", "1706.03762")]
        for n, user in enumerate(("U2", ODD[0], "U1")):
            kept = user == "U1"
            channel = f"C{n + 2}"  # a channel each: the first inviter stays
            storage.workspaces.upsert_channel(conn, Channel(T, channel, "papers"))
            storage.settings.record_inviter(conn, T, channel, user)
            assert storage.reading_list.unsave_paper(conn, T, "C1", paper, user, NOW) is kept
            assert storage.settings.upsert_member_setting(conn, T, user, mentions_enabled=False) is kept
            assert storage.settings.upsert_member_setting(conn, T, user, s2_author_id="1741101") is kept
            storage.member_picks.record_picks_sent(conn, T, user, [(paper, "C1")], NOW)
            author = f"900{n}"
            storage.followed_authors.follow_author(conn, T, "C1", author, "Ada Byron", user, NOW)
            own = storage.followed_authors.Watcher(T, "C1", "member", user, NOW)
            assert storage.followed_authors.record_author_news(conn, own, author, paper, NOW) is kept
            steer = storage.topic_steering.SteerRow(f"topic {user}", "mute", "m", [1.0, 0.0], 0.5, user, NOW)
            storage.topic_steering.upsert_steering(conn, T, "C1", steer)
            storage.usage.record_announcement(conn, T, "C1", user, "9.000100", ["set the frequency: weekly"], NOW)
            assert storage.usage.add_announcement_line(conn, T, "C1", user, "paused", NOW, 10) == (
                ("9.000100", ["set the frequency: weekly", "paused"]) if kept else None
            )
        storage.installs.upsert_installation(
            conn,
            {
                "team_id": T,
                "team_name": "Lab",
                "bot_token": "enc1:x",
                "bot_user_id": "UB",
                "bot_id": "B",
                "installer_id": "U2",
                "scopes": "chat:write",
            },
        )

        for user in ("U2", ODD[0]):
            assert _rows_naming(conn, user) == {}
        # what matters to the channel stays, naming nobody: the follows, the muted topics, the stewards
        assert conn.execute(
            "SELECT count(*) FROM followed_authors WHERE team_id = %s AND user_id IS NULL", (T,)
        ).fetchone() == (2,)
        assert conn.execute(
            "SELECT count(*) FROM topic_steering WHERE team_id = %s AND user_id IS NULL", (T,)
        ).fetchone() == (2,)
        inviters = conn.execute(
            "SELECT channel_id, invited_by FROM channel_settings WHERE team_id = %s ORDER BY channel_id", (T,)
        ).fetchall()
        former = storage.privacy.FORMER_STEWARD
        assert inviters == [("C2", former), ("C3", former), ("C4", "U1")]
        assert conn.execute("SELECT installer_id FROM installations WHERE team_id = %s", (T,)).fetchone() == (None,)
        # the other member's rows are all there
        named = _rows_naming(conn, "U1")
        for table in (
            "reading_list_unsaves",
            "member_settings",
            "personal_picks",
            "followed_authors",
            "author_news",
            "topic_steering",
            "announcements",
        ):
            assert named.get(f"{table}.user_id") == 1, (table, named)
        assert named.get("channel_settings.invited_by") == 1


def test_forget_me_and_remember_me_never_start_a_members_limits_afresh(db: Database) -> None:
    """A member who used up their hour's LLM calls, or is in a cooldown, gets none back by typing `forget-me` and
    `remember-me` over and over: the limits pass to the key they are counted under next, and no row keeps their id
    while they are on the list."""
    _workspace(db)
    length = timedelta(minutes=10)
    with db.connection() as conn:
        storage.usage.take_cooldown(conn, T, "U1", "picks now", NOW, length)
        for _ in range(3):
            assert storage.usage.take_llm_call(conn, T, None, "U1", NOW, per_member=3, per_channel=30) is None
        assert storage.usage.take_llm_call(conn, T, None, "U1", NOW, per_member=3, per_channel=30) == "member"
        storage.privacy.forget_member(conn, T, "U1")
        assert "member_cooldowns.user_id" not in _rows_naming(conn, "U1")
        assert "llm_usage.user_id" not in _rows_naming(conn, "U1")
        assert storage.privacy.remember_member(conn, T, "U1")
        later = NOW + timedelta(minutes=1)
        assert storage.usage.take_llm_call(conn, T, None, "U1", later, per_member=3, per_channel=30) == "member"
        assert storage.usage.take_cooldown(conn, T, "U1", "picks now", later, length) == NOW + length
        # the next hour counts afresh, as for everyone
        assert (
            storage.usage.take_llm_call(conn, T, None, "U1", NOW + timedelta(hours=1), per_member=3, per_channel=30)
            is None
        )
