"""The group's memory by what its papers' bodies say (issue 56): "where did we read about label smoothing?" finds the
channel's paper whose full text discusses it, with the passage, though its title and abstract never say it.

Postgres' full-text index finds the passages of the channel's own papers holding the question's words, pgvector
those closest to its meaning (where passages have vectors of the service's model); ``retrieve.passages`` scores
them as it scores one paper's, the words' rarity counted among all the channel's passages; each paper keeps its
best passage. One channel at a time, scoped by its ``ChannelContext``, as the rest of the memory is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg

from socialrag import storage
from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.recommender.retrieve.keywords import topic_words
from socialrag.recommender.retrieve.memory import Found
from socialrag.recommender.retrieve.passages import PassageMatch, score_passages

BY_WORDS = 400  # passages read by the words, at most
BY_MEANING = 50  # and by the meaning
BODY_WEIGHT = 1.0  # a paper's body matching all the question's words counts as its abstract matching them best


def search_bodies(
    conn: psycopg.Connection, ctx: ChannelContext, question: str, vector: np.ndarray | None
) -> dict[int, PassageMatch]:
    """The channel's papers whose full text answers the question, each with its best passage."""
    ids = sorted(ctx.papers)
    words = topic_words(question)
    if not ids or not words:
        return {}
    found = [p for p, _ in storage.fulltext.search_passages(conn, ids, words, most=BY_WORDS)]
    meaning: dict[tuple[int, int], float] = {}
    if vector is not None:
        for p, close in storage.passage_search.load_near_passages(conn, ctx.model, ids, vector, most=BY_MEANING):
            meaning[(p.paper_id, p.n)] = close
            found.append(p)
    pool = list({(p.paper_id, p.n): p for p in found}.values())
    if not pool:
        return {}
    among = storage.passage_search.count_passages(conn, sorted({p.paper_id for p in pool}))
    best: dict[int, PassageMatch] = {}
    for match in score_passages(pool, question, meaning=meaning, among=among, most=len(pool)):
        best.setdefault(match.paper_id, match)
    return best


def with_bodies(found: Sequence[Found], bodies: dict[int, PassageMatch]) -> list[Found]:
    """The papers found by their record and thread, and those found by their body, each body match adding
    ``BODY_WEIGHT`` times the share of the question's words it holds (or its meaning's closeness), best first."""
    scores = {f.paper_id: f.score for f in found}
    for pid, match in bodies.items():
        scores[pid] = scores.get(pid, 0.0) + BODY_WEIGHT * max(match.coverage, match.meaning or 0.0)
    return [Found(pid, s) for pid, s in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]
