"""The next recommendation does not depend on the order rows lie in on disk: a restore, a ``VACUUM FULL`` or
an update writes them in another order, and the channel must still get the same post and the same runners-up.
The channel's history is read in the order of stable keys (paper ids, times, message ids), and candidates whose
scores tie are taken in paper-id order."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
import pytest

from socialrag.db import Database
from socialrag.models import Candidate
from socialrag.recommender.rank.calibrate import default_model
from socialrag.recommender.rank.engagement import ScoringConfig
from socialrag.recommender.retrieve.candidates import CatalogSource
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper, load_channel_context
from socialrag.recommender.serve.pipeline import ChannelRequest, RecommendConfig, rank_channel, score_candidates
from socialrag.rows import MemberInfo, PaperInfo, ReactionEvent, Share
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab

pytestmark = pytest.mark.slow
MODEL = "all-MiniLM-L6-v2"
# the tables a channel's history is read from, each rewritten with the rows of its later papers or messages
# first (as a restore wrote one lab's rows: the same rows, in another order)
LATER_PAPERS = "paper_id > (SELECT avg(id) FROM papers)"
LATER_MESSAGES = "message_id > (SELECT avg(id) FROM messages)"
REWRITTEN = {
    "papers": "id > (SELECT avg(id) FROM papers) DESC, id",
    "messages": "id > (SELECT avg(id) FROM messages) DESC, id",
    "message_papers": f"{LATER_PAPERS} DESC, paper_id, message_id",
    "reactions": f"{LATER_MESSAGES} DESC, message_id, user_id, emoji",
}


def ranked(db: Database) -> list[Candidate]:
    request = ChannelRequest("T0LAB", "C1", AS_OF, [CatalogSource()], RecommendConfig(model=MODEL))
    with db.connection() as conn:
        return rank_channel(conn, request).ranked


def reverse_rows(conninfo: str) -> None:
    """Rewrite each table with its rows on disk in another order (the values, keys and references unchanged)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")  # references are not checked or cascaded
        for table, order in REWRITTEN.items():
            stored = ", ".join(
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public'"
                    " AND table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position",
                    (table,),
                )
            )
            with conn.transaction():
                conn.execute(f"CREATE TEMP TABLE kept AS SELECT {stored} FROM {table} ORDER BY {order}")
                conn.execute(f"DELETE FROM {table}")
                conn.execute(f"INSERT INTO {table} ({stored}) SELECT {stored} FROM kept")
                conn.execute("DROP TABLE kept")
            conn.execute(f"VACUUM FULL ANALYZE {table}")


def test_the_ranking_is_the_same_whatever_order_the_rows_lie_in(db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    before = ranked(db)
    reverse_rows(db.conninfo)
    with db.connection() as conn:
        ctx = load_channel_context(conn, "T0LAB", "C1", AS_OF, MODEL)
    assert list(ctx.papers) == sorted(ctx.papers), "the channel's papers come in paper-id order"
    after = ranked(db)
    assert len(after) > 50
    assert [(c.paper_id, c.score) for c in after] == [(c.paper_id, c.score) for c in before]


MOMENT = datetime(2024, 3, 1, tzinfo=UTC)  # the pure test's moment


def unit(v: list[float]) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def info(pid: int, title: str) -> PaperInfo:
    return PaperInfo(pid, title, None, None, 2024, (), publication_date=date(2024, 2, 1), date_precision="day")


def channel() -> ChannelContext:
    at = MOMENT - timedelta(days=10)
    shared = {
        pid: SharedPaper(info(pid, f"Shared {pid}"), [Share(pid, str(pid), "U1", at, None, None)], []) for pid in (1, 2)
    }
    shared[1].reactions.append(ReactionEvent(1, "U2", "+1", at + timedelta(hours=1)))
    vectors = {1: unit([1, 0, 0, 0]), 2: unit([0, 1, 0, 0])}
    members = {"U1": MemberInfo("U1", "ana"), "U2": MemberInfo("U2", "ben")}
    return ChannelContext("T", "C", MOMENT, shared, members, {}, {}, {}, vectors=vectors)


def test_tied_candidates_keep_paper_id_order_whatever_order_they_come_in() -> None:
    """Pure: three candidates alike in everything but their titles and ids tie; ``infos`` in two orders."""
    ctx = channel()
    twin = unit([1, 0.2, 0.1, 0])  # three candidates alike in everything but their titles and ids
    tied = {pid: info(pid, f"Candidate {pid}") for pid in (40, 10, 30)}
    other = {20: info(20, "Something else")}
    vectors = {**dict.fromkeys(tied, twin), 20: unit([0, 0, 1, 1])}
    ranker, config = default_model(), ScoringConfig()
    orders = []
    for infos in ({**tied, **other}, {**other, **dict(reversed(tied.items()))}):
        ranked = score_candidates(ctx, infos, vectors, dict.fromkeys(infos, "catalog"), [], config, ranker)
        scores = {c.paper_id: c.score for c in ranked}
        assert scores[10] == scores[30] == scores[40] != scores[20]
        orders.append([c.paper_id for c in ranked])
    assert orders[0] == orders[1]
    assert [pid for pid in orders[0] if pid != 20] == [10, 30, 40]
