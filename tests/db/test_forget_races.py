"""A member's write that reaches the database while their forget-me is still under way (the forget-me has not
committed yet) waits for it, then keeps nothing of theirs: a reaction heard from Slack, a removed reaction, a save
or an unsave, an answer marked helpful, a setting, the members an import lists,
a member joining a channel, a channel's member list read from Slack. Without the wait, the write's check
of the forget list would not see the forget-me's uncommitted entry, and its row would outlive the forget-me."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from socialrag import knowledge, storage
from socialrag.db import Database
from socialrag.knowledge.embed import embed_channel_texts
from socialrag.knowledge.intake import index_messages
from socialrag.knowledge.links import find_paper_refs
from socialrag.models import Channel, Member, Message, PaperRef
from tests.support.labbase import CachedEmbedder

T = "T0LAB"
REF = PaperRef("arxiv", "2401.00001", "https://arxiv.org/abs/2401.00001")
NOW = datetime(2025, 3, 3, 10, 5, tzinfo=UTC)
Write = Callable[[psycopg.Connection], object]


def _lab(db: Database) -> int:
    """A channel with one share of U1's that U2 may react to; the id of a paper."""
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "papers"))
        storage.workspaces.upsert_members(conn, [Member(T, "U1", "ana"), Member(T, "U2", "ben")])
        share = Message(T, "C1", "1700000000.000100", "U1", "<https://arxiv.org/abs/2401.00001>", NOW, papers=(REF,))
        assert knowledge.record_message(conn, share, by_member=True)
        return next(iter(storage.papers.ensure_papers(conn, [("arxiv", "2401.00001")]).values()))


WRITES: dict[str, Callable[[int], Write]] = {
    "reaction": lambda _: (
        lambda c: knowledge.record_reaction(c, T, "C1", "1700000000.000100", "U2", "fire", added=True, at=NOW)
    ),
    "removed reaction": lambda _: (
        lambda c: knowledge.record_reaction(c, T, "C1", "1700000000.000100", "U2", "fire", added=False, at=NOW)
    ),
    "save": lambda paper: lambda c: storage.reading_list.save_paper(c, T, "C1", paper, "U2", NOW),
    "unsave": lambda paper: lambda c: storage.reading_list.unsave_paper(c, T, "C1", paper, "U2", NOW),
    "answer mark": lambda _: (
        lambda c: storage.usage.record_answer_feedback(c, T, "C1", "1700000001.000100", "U2", "C1", True, NOW)
    ),
    "setting": lambda _: lambda c: storage.settings.upsert_member_setting(c, T, "U2", picks_enabled=True),
    "import's members": lambda _: lambda c: storage.workspaces.upsert_members(c, [Member(T, "U2", "ben again")]),
    "import's channel members": lambda _: (
        lambda c: storage.workspaces.upsert_channel(c, Channel(T, "C2", "reading", member_ids=("U2",)))
    ),
    "member joined": lambda _: lambda c: storage.workspaces.add_channel_member(c, T, "C1", "U2"),
    "Slack's member list": lambda _: (
        lambda c: storage.workspaces.replace_channel_members(c, T, "C1", ["U1", "U2"], NOW)
    ),
}


def _rows_of_u2(conn: psycopg.Connection) -> dict[str, int]:
    tables = conn.execute(
        """
        SELECT table_name FROM information_schema.columns
         WHERE table_schema = 'public' AND column_name = 'user_id' AND table_name <> 'forgotten_members'
        """
    ).fetchall()
    found = {}
    for (table,) in tables:  # names from the catalogue
        row = conn.execute(f"SELECT count(*) FROM {table} WHERE team_id = %s AND user_id = 'U2'", (T,)).fetchone()
        if row and row[0]:
            found[table] = int(row[0])
    return found


@pytest.mark.parametrize("kind", list(WRITES))
def test_a_write_racing_a_forget_me_keeps_nothing_of_the_member(db: Database, kind: str) -> None:
    waited = _write_during_forget_me(db, WRITES[kind](_lab(db)))
    assert waited, f"the {kind} did not wait for the forget-me under way"
    with db.connection() as conn:
        assert _rows_of_u2(conn) == {}


def _write_during_forget_me(db: Database, write: Write, *, patience: float = 0.5, done: float = 10) -> bool:
    """Run ``write`` in a transaction of its own while U2's forget-me holds its transaction open; True when the
    write waited for the forget-me (still running after ``patience`` seconds). Both have ended on return."""
    forgetting, may_commit = threading.Event(), threading.Event()

    def forget() -> None:
        with db.connection() as conn:
            storage.privacy.forget_member(conn, T, "U2")
            forgetting.set()
            may_commit.wait(10)  # the forget-me's transaction stays open while the write comes in

    forgetter = threading.Thread(target=forget)
    forgetter.start()
    assert forgetting.wait(10)
    writer = threading.Thread(target=lambda: _write_once(db, write))
    writer.start()
    writer.join(patience)
    waited = writer.is_alive()  # the write waits for the forget-me rather than passing it
    may_commit.set()
    forgetter.join(10)
    writer.join(done)
    return waited


def _write_once(db: Database, write: Write) -> None:
    with db.connection() as conn:
        write(conn)


UNKNOWN = "https://aclanthology.org/2099.nowhere-1.7"  # a paper no source knows: embedded from members' words


def test_a_channel_vector_made_while_a_forget_me_is_under_way_holds_none_of_the_members_words(
    db: Database, tmp_path: Path
) -> None:
    """Two members wrote about a paper no source knows; the channel's vector of it is being made when one of them
    types forget-me. The vector that stays is made from the other member's words only."""
    embedder = CachedEmbedder(cache=tmp_path / "vectors")
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "papers"))
        storage.workspaces.upsert_members(conn, [Member(T, "U1", "ana"), Member(T, "U2", "ben")])
        words = {"U1": f"{UNKNOWN} our draft on protein folding", "U2": f"{UNKNOWN} ben's notes on grasping robots"}
        index_messages(
            conn,
            [
                Message(T, "C1", f"{i}.0", u, w, NOW, papers=find_paper_refs(w))
                for i, (u, w) in enumerate(words.items(), 1)
            ],
        )
    waited = _write_during_forget_me(db, lambda c: embed_channel_texts(c, embedder), patience=2, done=30)
    assert waited, "the vector was made without waiting for the forget-me under way"
    with db.connection() as conn:
        stale = storage.embeddings.load_channel_pending(conn, embedder.model_name, every=True)
        kept = conn.execute("SELECT count(*) FROM channel_text_embeddings").fetchone()
    assert kept == (1,) and stale == [], "the vector kept is made from the words left, U1's"


@pytest.mark.parametrize("digest", [False, True])
def test_a_post_drafted_while_a_forget_me_is_under_way_is_not_recorded_naming_the_member(
    db: Database, digest: bool
) -> None:
    """The day's post was chosen with U2 among the members it @-mentions, and U2 types forget-me before it is
    recorded: the draft is refused (the slot is drafted again once its lease ends), so no post goes out naming them.
    A draft naming only members still here is recorded as before."""
    paper = _lab(db)
    with db.connection() as conn:
        rec = storage.posts.open_slot(conn, T, "C1", "2025-03-03", "brief")
        later = storage.posts.open_slot(conn, T, "C1", "2025-03-04", "brief")
    one = {"team_id": T, "channel_id": "C1", "mentions": ["U2"], "named": {"U1": "ana"}}
    naming_u2 = {"digest": [{"mentions": []}, one], "kind": "weekly"} if digest else one
    recorded: list[bool] = []
    draft = storage.posts.record_draft
    waited = _write_during_forget_me(db, lambda c: recorded.append(draft(c, rec.id, paper, "brief", 1.0, naming_u2)))
    assert waited and recorded == [False]
    with db.connection() as conn:
        assert storage.posts.load_slot_draft(conn, rec.id) is None
        assert storage.posts.record_draft(conn, later.id, paper, "brief", 1.0, {"mentions": ["U1"], "named": {}})
