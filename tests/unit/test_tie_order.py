"""Candidates whose scores tie are ranked in paper-id order, whatever order their rows came in: a restored home
reads the same rows in another order, and its next recommendation and runners-up must not change with it."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np

from socialrag.recommender.rank.calibrate import default_model
from socialrag.recommender.rank.engagement import ScoringConfig
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper
from socialrag.recommender.serve.pipeline import score_candidates
from socialrag.rows import MemberInfo, PaperInfo, ReactionEvent, Share

AS_OF = datetime(2024, 3, 1, tzinfo=UTC)


def unit(v: list[float]) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def info(pid: int, title: str) -> PaperInfo:
    return PaperInfo(pid, title, None, None, 2024, (), publication_date=date(2024, 2, 1), date_precision="day")


def channel() -> ChannelContext:
    at = AS_OF - timedelta(days=10)
    shared = {
        pid: SharedPaper(info(pid, f"Shared {pid}"), [Share(pid, str(pid), "U1", at, None, None)], []) for pid in (1, 2)
    }
    shared[1].reactions.append(ReactionEvent(1, "U2", "+1", at + timedelta(hours=1)))
    vectors = {1: unit([1, 0, 0, 0]), 2: unit([0, 1, 0, 0])}
    members = {"U1": MemberInfo("U1", "ana"), "U2": MemberInfo("U2", "ben")}
    return ChannelContext("T", "C", AS_OF, shared, members, {}, {}, {}, vectors=vectors)


def test_tied_candidates_keep_paper_id_order_whatever_order_they_come_in() -> None:
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
