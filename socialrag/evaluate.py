"""Offline evaluation: replay a channel's history and ask how well each ranking predicts what was shared next.

At each share (after a few to learn from), the candidates are the catalog papers published before that
moment plus the paper really shared, minus everything the channel had already; each method ranks them
using only the past. Reported: recall@5, recall@10 and MRR of the full scorer against a random ranking,
popularity alone, and similarity without engagement (every past paper weighted alike).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
import psycopg

from socialrag.rank import ScoringConfig, channel_weights, score_popularity, score_similarity_many
from socialrag.social import load_channel_context

METHODS = ("PaperPing (engagement-weighted)", "similarity without engagement", "popularity only", "random")


@dataclass
class MethodResult:
    ranks: list[int] = field(default_factory=list)

    def recall(self, k: int) -> float:
        return sum(1 for r in self.ranks if r <= k) / len(self.ranks) if self.ranks else 0.0

    @property
    def mrr(self) -> float:
        return sum(1.0 / r for r in self.ranks) / len(self.ranks) if self.ranks else 0.0


@dataclass
class EvalReport:
    steps: int
    candidates: int
    results: dict[str, MethodResult]

    def table(self) -> str:
        lines = [f"{'method':<34}{'recall@5':>10}{'recall@10':>11}{'MRR':>8}", "-" * 63]
        for name, r in self.results.items():
            lines.append(f"{name:<34}{r.recall(5):>10.3f}{r.recall(10):>11.3f}{r.mrr:>8.3f}")
        lines.append(f"{self.steps} steps, about {self.candidates} candidates each")
        return "\n".join(lines)


@dataclass(frozen=True)
class Catalog:
    ids: np.ndarray
    vectors: np.ndarray
    published: np.ndarray  # epoch seconds; papers without a date count as published long ago
    popularity: np.ndarray


def load_catalog(conn: psycopg.Connection, model: str) -> Catalog:
    rows = conn.execute(
        """
        SELECT p.id, e.embedding,
               extract(epoch FROM COALESCE(p.publication_date, make_date(COALESCE(p.year, 1970), 1, 1))),
               COALESCE(p.popularity, p.citation_count, 0)
          FROM papers p JOIN paper_embeddings e ON e.paper_id = p.id AND e.model = %(m)s
        """,
        {"m": model},
    ).fetchall()
    from socialrag.embed import as_array

    if not rows:
        return Catalog(np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), np.zeros(0), np.zeros(0))
    return Catalog(
        np.array([r[0] for r in rows]),
        np.stack([as_array(r[1]) for r in rows]),
        np.array([float(r[2]) for r in rows]),
        np.array([float(r[3]) for r in rows]),
    )


def load_share_events(conn: psycopg.Connection, team: str, channel: str) -> list[tuple[datetime, int]]:
    """(first share time, paper id) of every paper the channel shared, in time order."""
    rows = conn.execute(
        """
        SELECT min(m.posted_at), mp.paper_id FROM message_papers mp JOIN messages m ON m.id = mp.message_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s GROUP BY mp.paper_id ORDER BY 1, 2
        """,
        {"t": team, "c": channel},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def _rank_of(scores: np.ndarray, truth_index: int) -> int:
    """1-based rank of the truth; ties count half, so a method that cannot tell papers apart gains nothing."""
    greater = int((scores > scores[truth_index]).sum())
    equal = int((scores == scores[truth_index]).sum()) - 1
    return greater + 1 + equal // 2


def evaluate_channel(
    conn: psycopg.Connection,
    team: str,
    channel: str,
    model: str,
    *,
    warmup: int = 5,
    config: ScoringConfig | None = None,
    seed: int = 13,
    max_steps: int = 200,
    window_days: int | None = None,
) -> EvalReport:
    """Replay the channel and rank, at each share, the catalog plus the paper shared next (with
    ``window_days``, only catalog papers published in those days before the share, as live posting would)."""
    config = config or ScoringConfig()
    catalog = load_catalog(conn, model)
    index = {int(pid): i for i, pid in enumerate(catalog.ids)}
    events = [(at, pid) for at, pid in load_share_events(conn, team, channel) if pid in index]
    results = {m: MethodResult() for m in METHODS}
    rng = random.Random(seed)
    sizes = []
    for at, truth in events[warmup : warmup + max_steps]:
        ctx = load_channel_context(conn, team, channel, at, model)
        if len(ctx.papers) < warmup:
            continue
        seen = {index[p] for p in ctx.papers if p in index}
        mask = catalog.published < at.timestamp()
        if window_days:
            mask &= catalog.published >= (at - timedelta(days=window_days)).timestamp()
        if window_days:
            mask &= catalog.published >= (at - timedelta(days=window_days)).timestamp()
        mask[list(seen)] = False
        mask[index[truth]] = True
        cand = np.flatnonzero(mask)
        t_pos = int(np.flatnonzero(cand == index[truth])[0])
        sizes.append(len(cand))
        vectors = catalog.vectors[cand]
        engaged = channel_weights(ctx.papers, at, config, ctx.emoji_overrides)
        flat = dict.fromkeys(ctx.papers, 1.0)
        max_pop = float(catalog.popularity[cand].max()) if len(cand) else 0.0
        pop = np.array([score_popularity(p, max_pop) for p in catalog.popularity[cand]])
        scores = {
            METHODS[0]: score_similarity_many(vectors, ctx.vectors, engaged) + config.popularity_weight * pop,
            METHODS[1]: score_similarity_many(vectors, ctx.vectors, flat),
            METHODS[2]: pop,
            METHODS[3]: np.array([rng.random() for _ in cand]),
        }
        for name, values in scores.items():
            results[name].ranks.append(_rank_of(values, t_pos))
    steps = len(results[METHODS[0]].ranks)
    return EvalReport(steps, int(np.median(sizes)) if sizes else 0, results)
