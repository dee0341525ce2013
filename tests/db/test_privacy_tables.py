"""Forget-me and purge reach every table. Each table of the schema has its rule here, so a table added later
fails this test until someone says what forgetting a member and purging a workspace do to it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from psycopg.types.json import Jsonb

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.intake import index_messages
from socialrag.models import Channel, Member, Message, PaperRef, Reaction

T, OTHER = "T0LAB", "T0ELSE"
AT = datetime(2025, 3, 3, 10, tzinfo=UTC)

# tables that hold nothing of any member or workspace: public paper metadata and the program's own state
PUBLIC = {
    "venues",
    "papers",
    "paper_ids",
    "authors",
    "paper_authors",
    "paper_references",
    "paper_citations",
    "paper_popularity",
    "paper_embeddings",
    "paper_fulltexts",
    "paper_passages",
    "paper_passage_vectors",
    "fulltext_claims",
    "index_queue",
    "source_pace",
    "paper_watch",
    "author_checks",
    "oauth_states",
    "schema_migrations",
}
# tables keyed by the workspace (team_id): purge leaves none of its rows (forgotten_members and deleted_messages:
# unless it keeps the forget list and the deletions, as it does unless told not to)
BY_TEAM = {
    "teams",
    "channels",
    "members",
    "channel_members",
    "messages",
    "reactions",
    "emoji_sentiments",
    "message_papers",
    "import_checkpoints",
    "channel_settings",
    "member_settings",
    "recommendations",
    "llm_calls",
    "processed_events",
    "deleted_messages",
    "removed_reactions",
    "installations",
    "forgotten_members",
    "channel_rankers",
    "channel_text_embeddings",
    "saved_papers",
    "reading_list_removals",
    "zotero_items",
    "zotero_groups",
    "reading_list_unsaves",
    "member_cooldowns",
    "llm_usage",
    "share_replies",
    "personal_picks",
    "follow_ups",
    "followed_authors",
    "author_news",
    "topic_steering",
    "onboarding",
    "assistant_threads",
    "answer_feedback",
    "announcements",
    "purged_teams",
}
# tables with a member's id: forget-me leaves none of their rows (forgotten_members keeps the note that it did)
BY_MEMBER = {
    "members",
    "reading_list_unsaves",
    "member_cooldowns",
    "llm_usage",
    "channel_members",
    "messages",
    "reactions",
    "member_settings",
    "saved_papers",
    "personal_picks",
    "followed_authors",
    "author_news",
    "topic_steering",
    "assistant_threads",
    "answer_feedback",
    "removed_reactions",
    "announcements",
}
# tables where a member's id can sit inside text or JSON: forget-me scrubs it
MENTIONING = {"recommendations": "draft::text", "llm_calls": "output", "import_checkpoints": "state::text"}


def _vector(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return v / np.linalg.norm(v)


def _lab(db: Database) -> dict[str, int]:
    """Two members share in T: U2 a paper no source knows (its vector made from U2's words), U1 a known one;
    the same unknown paper is also shared in another workspace."""
    with db.connection() as conn:
        for team in (T, OTHER):
            storage.workspaces.upsert_team(conn, team)
            storage.workspaces.upsert_channel(conn, Channel(team, "C1", "papers"))
        storage.workspaces.upsert_members(conn, [Member(T, "U1", "ana"), Member(T, "U2", "ben")])
        storage.workspaces.add_channel_member(conn, T, "C1", "U2")
        known = PaperRef("arxiv", "1706.03762", "https://arxiv.org/abs/1706.03762")
        unknown = PaperRef("arxiv", "2999.00001", "https://arxiv.org/abs/2999.00001", "our lab's secret draft")
        only_here = PaperRef("doi", "10.9999/only-here", "https://doi.org/10.9999/only-here", "ben's preprint")
        index_messages(
            conn,
            [
                Message(
                    T,
                    "C1",
                    "1.000001",
                    "U1",
                    "<https://arxiv.org/abs/1706.03762>",
                    AT,
                    papers=(known,),
                    reactions=(Reaction("U2", "+1", AT),),
                ),
                Message(T, "C1", "2.000001", "U2", "our secret draft", AT, papers=(unknown, only_here)),
                Message(OTHER, "C1", "3.000001", "UX", "elsewhere", AT, papers=(unknown,)),
                # U1 replies in U2's thread (naming U2), and in their own
                Message(T, "C1", "2.000002", "U1", "great find ben", AT, thread_ts="2.000001"),
                Message(T, "C1", "1.000002", "U1", "see section 3", AT, thread_ts="1.000001"),
            ],
        )
        ids = dict(conn.execute("SELECT value, paper_id FROM paper_ids").fetchall())
        conn.execute("UPDATE papers SET title = 'Attention Is All You Need' WHERE id = %s", (ids["1706.03762"],))
        known_id = ids["1706.03762"]
        storage.embeddings.upsert_embeddings(conn, "all-MiniLM-L6-v2", [(known_id, "h", _vector(known_id))])
        # the papers no source knows get a vector per channel, from that channel's words
        texts = storage.embeddings.load_channel_pending(conn, "all-MiniLM-L6-v2")
        assert {(t.team_id, t.paper_id) for t in texts} == {
            (T, ids["2999.00001"]),
            (T, ids["10.9999/only-here"]),
            (OTHER, ids["2999.00001"]),
        }
        storage.embeddings.upsert_channel_vectors(
            conn, "all-MiniLM-L6-v2", [(t, _vector(i)) for i, t in enumerate(texts)]
        )
        storage.settings.upsert_member_setting(conn, T, "U2", mentions_enabled=False)
        storage.settings.upsert_emoji_override(conn, T, "C1", "eyes", "positive")
        storage.checkpoints.record_checkpoint(conn, T, "C1", "backfill", None, {"users": ["U2"], "threads": []})
        conn.execute(
            "INSERT INTO recommendations (team_id, channel_id, slot_key, status, style, draft) "
            "VALUES (%s, 'C1', 's1', 'posted', 'template', %s)",
            (T, Jsonb({"mentions": ["U2"], "named": {"U2": "ben"}})),
        )
        conn.execute(
            "INSERT INTO llm_calls (team_id, channel_id, prompt_name, prompt_version, prompt_hash, model, output,"
            " latency_ms, outcome) VALUES (%s, 'C1', 'final', 2, 'x', 'm', 'for <@U2>', 5, 'ok')",
            (T,),
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
        storage.slack_events.record_event(conn, "Ev1", T)
        # U2 took a reaction off U1's share, and another message of the channel was deleted in Slack
        storage.deletions.record_removed_reaction(conn, T, "C1", "1.000001", "U2", "eyes", AT)
        storage.deletions.record_deleted_message(conn, T, "C1", "0.000009")
        storage.settings.record_inviter(conn, T, "C1", "U2")  # U2 invited PaperPing into #papers
        conn.execute(
            "INSERT INTO llm_calls (team_id, channel_id, prompt_name, prompt_version, prompt_hash, model, output,"
            " latency_ms, outcome) VALUES (%s, 'C1', 'answer', 2, 'x', 'm', 'as they said: our secret draft', 5, 'ok')",
            (OTHER,),
        )
        # the reading list: a paper U2 saved, one taken off, one sent to the channel's Zotero library
        storage.reading_list.save_paper(conn, T, "C1", known_id, "U2", AT)
        storage.reading_list.remove_paper(conn, T, "C1", ids["2999.00001"], AT)
        storage.reading_list.record_zotero_result(
            conn, T, "C1", "4242", known_id, item_key="ABCD2345", error=None, now=AT, retry_at=None
        )
        # a context reply on U2's share, and a paper sent to U2 in their personal picks
        storage.share_replies.want_share_reply(conn, T, "C1", "2.000001")
        storage.reading_list.bind_zotero_group(conn, T, "4242")
        storage.reading_list.unsave_paper(conn, T, "C1", known_id, "U2", AT)
        storage.usage.take_cooldown(conn, T, "U2", "like", AT, timedelta(seconds=30))
        storage.usage.take_llm_call(conn, T, "C1", "U2", AT, per_member=10, per_channel=30)
        storage.usage.take_member_hourly(conn, T, "U2", "lookups", AT, 20)  # a paper U2 linked went first
        storage.member_picks.record_picks_sent(conn, T, "U2", [(known_id, "C1")], AT)
        # a follow-up noticed for U1's share (it names no member: who shared is read when it is sent)
        storage.follow_ups.record_follow_up(conn, T, "C1", known_id, "published", "ACL", {"venue": "ACL"}, AT)
        storage.follow_ups.record_watch(conn, known_id, AT, "ACL", 2, ["paper:1"])
        # U2 asked the channel to follow an author; a paper of U2's own waits to be announced
        storage.followed_authors.follow_author(conn, T, "C1", "9001", "Ada Byron", "U2", AT)
        storage.followed_authors.record_author_check(conn, "9001", AT, ["s2x"])
        member_news = storage.followed_authors.Watcher(T, "C1", "member", "U2", AT)
        storage.followed_authors.record_author_news(conn, member_news, "9002", ids["10.9999/only-here"], AT)
        # U2 muted a topic of the channel's profile; the channel had its first day of five papers to rate
        muted = storage.topic_steering.SteerRow("protein design", "mute", "m", [1.0, 0.0], 0.5, "U2", AT)
        storage.topic_steering.upsert_steering(conn, T, "C1", muted)
        storage.topic_steering.record_onboarding(conn, T, "C1", "little history", [known_id], AT)
        # U2 asked PaperPing in Slack's AI app panel beside #papers
        storage.history_search.upsert_assistant_thread(conn, "DU2", "1.000100", T, "C1", "U2")
        # ... and marked its streamed answer not helpful
        storage.usage.record_answer_feedback(conn, T, "DU2", "1.000200", "U2", "C1", False, AT)
        # U2 changed a setting of #papers, announced there (U2's topic words in it)
        storage.usage.record_announcement(conn, T, "C1", "U2", "9.000100", ["asked PaperPing to lean toward: ben"], AT)
    return {"known": ids["1706.03762"], "unknown": ids["2999.00001"], "only_here": ids["10.9999/only-here"]}


def _tables(db: Database) -> set[str]:
    with db.connection() as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {r[0] for r in rows}


def test_every_table_has_a_rule(db: Database) -> None:
    assert _tables(db) == PUBLIC | BY_TEAM, "a new table needs its forget-me and purge rule here"


def _count(db: Database, sql: str, *params: object) -> int:
    with db.connection() as conn:
        row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def test_forget_me_reaches_every_table(db: Database) -> None:
    papers = _lab(db)
    with db.connection() as conn:
        storage.privacy.forget_member(conn, T, "U2")
    for table in BY_MEMBER:
        assert _count(db, f"SELECT count(*) FROM {table} WHERE team_id = %s AND user_id = 'U2'", T) == 0, table
    for table, column in MENTIONING.items():
        assert _count(db, f"SELECT count(*) FROM {table} WHERE {column} LIKE '%%U2%%'") == 0, table
    assert _count(db, "SELECT count(*) FROM installations WHERE installer_id = 'U2'") == 0
    assert _count(db, "SELECT count(*) FROM forgotten_members WHERE user_id = 'U2'") == 1
    # the vectors made from U2's words are gone; the paper, still shared elsewhere, is queued to be embedded again
    made_from_u2 = "SELECT count(*) FROM channel_text_embeddings WHERE team_id = %s"
    assert _count(db, made_from_u2, T) == 0
    assert _count(db, made_from_u2, OTHER) == 1, "another workspace's words are its own"
    assert _count(db, "SELECT count(*) FROM index_queue WHERE paper_id = %s", papers["unknown"]) == 1
    assert _count(db, "SELECT count(*) FROM paper_embeddings WHERE paper_id = %s", papers["known"]) == 1, (
        "a vector of public metadata stays"
    )


def test_forget_me_leaves_the_member_in_no_column(db: Database) -> None:
    """Every column that can hold text (text, names, arrays, JSON) of every table is searched for the member's id
    and name after forget-me: only the forget list itself may hold the id."""
    _lab(db)
    with db.connection() as conn:
        storage.privacy.forget_member(conn, T, "U2")
        columns = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'ARRAY')"
        ).fetchall()
        assert ("channel_settings", "invited_by") in columns and ("recommendations", "draft") in columns
        holding = set()
        for table, column in columns:  # names from the schema itself
            found = conn.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ~ %s', (r"\mU2\M|\mben\M",))
            if found.fetchone() != (0,):
                holding.add((table, column))
    assert holding == {("forgotten_members", "user_id")}


def test_forget_me_takes_the_replies_in_the_members_threads_and_their_steward_role(db: Database) -> None:
    _lab(db)
    with db.connection() as conn:
        counts = storage.privacy.forget_member(conn, T, "U2")
        replies = conn.execute("SELECT ts, text FROM messages WHERE team_id = %s AND is_reply", (T,)).fetchall()
        steward = storage.settings.load_channel_settings(conn, T, "C1").invited_by
        storage.settings.record_inviter(conn, T, "C1", "U3")  # a member who removes PaperPing and invites it back
        after = storage.settings.load_channel_settings(conn, T, "C1").invited_by
        outputs = conn.execute("SELECT team_id, output FROM llm_calls ORDER BY team_id").fetchall()
    assert counts["replies"] == 1 and replies == [("1.000002", "see section 3")], "a reply in U1's own thread stays"
    assert steward == after == storage.privacy.FORMER_STEWARD, "no member becomes the steward in U2's place"
    assert outputs == [(OTHER, "as they said: our secret draft"), (T, None)], "the workspace's model output goes"


def test_purge_reaches_every_table(db: Database) -> None:
    papers = _lab(db)
    with db.connection() as conn:
        storage.privacy.forget_member(conn, T, "U1")
        storage.workspaces.purge_team(conn, T)
    stays = {"forgotten_members", "deleted_messages"}  # what must stay gone: member ids, message ids and times
    for table in BY_TEAM - stays - {"purged_teams"}:  # the purge's own note: the workspace id and when
        assert _count(db, f"SELECT count(*) FROM {table} WHERE team_id = %s", T) == 0, table
    forgotten = "SELECT user_id FROM forgotten_members WHERE team_id = %s"
    with db.connection() as conn:
        assert conn.execute(forgotten, (T,)).fetchall() == [("U1",)], "the forget list stays (member ids only)"
        assert _count(db, "SELECT count(*) FROM deleted_messages WHERE team_id = %s", T) > 0, "and the deletions"
        storage.workspaces.purge_team(conn, T, keep_forget_list=False)
    for table in stays:
        assert _count(db, f"SELECT count(*) FROM {table} WHERE team_id = %s", T) == 0, "unless the admin drops them"
    assert _count(db, "SELECT count(*) FROM purged_teams WHERE team_id = %s", T) == 1, "the purge is noted"
    assert _count(db, "SELECT count(*) FROM papers WHERE id = %s", papers["only_here"]) == 0, (
        "a paper only this workspace's links brought in goes with it"
    )
    assert _count(db, "SELECT count(*) FROM channel_text_embeddings WHERE team_id = %s", OTHER) == 1
    assert _count(db, "SELECT count(*) FROM papers WHERE id = %s", papers["unknown"]) == 1, "shared elsewhere"
    assert _count(db, "SELECT count(*) FROM messages WHERE team_id = %s", OTHER) == 1, "another workspace's stay"
