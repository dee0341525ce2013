"""Benchmark: signals and recommendations on a large knowledge base.

``python -m bench.bench_scale [--channels 10000] [--messages 1000000] [--papers 100000] [--samples 60]``
builds (once, in ``--home``) a base of that size directly in Postgres: papers with authors, venues and
clustered 384-d vectors under an HNSW index, channels whose members share, react to and reply about papers
of a few topics each. It then prints, for sampled channels, the p50/p95 time to retrieve all signals for
one candidate (target p95 < 25 ms), to refit each sampled channel's calibrated ranker, and of a whole
recommendation with that ranker, without the LLM (target p95 < 250 ms), the recall of the filtered approximate
nearest-neighbour search against an exact one (target >= 0.95), and the time of an answer to a member's question
about the channel's history (`/paperping ask`), without the LLM (target p95 < 300 ms).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DIM = 384
AS_OF = datetime(2024, 6, 1, tzinfo=UTC)


def build(db: object, channels: int, messages: int, papers: int, seed: int = 3) -> None:
    from socialrag.db import Database

    assert isinstance(db, Database)
    rng = np.random.default_rng(seed)
    topics = 400
    centers = rng.normal(size=(topics, DIM)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    topic_of = np.arange(papers) % topics  # paper id p is on topic (p - 1) % 400
    t0 = time.perf_counter()
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO venues (name, normalized_name) SELECT 'Venue ' || g, 'venue ' || g "
            "FROM generate_series(1, 200) g"
        )
        conn.execute(
            """
            INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, popularity, in_catalog,
                                metadata_source, fetched_at)
            SELECT g, 'Paper ' || g || ' on topic ' || (g %% 400), 'An abstract about topic ' || (g %% 400) || '.',
                   1 + (g %% 200), 2016 + (g %% 9), make_date(2016 + (g %% 9), 1 + (g %% 12), 1 + (g %% 28)),
                   (g * 7919) %% 1000, true, 'catalog', now()
              FROM generate_series(1, %(n)s) g
            """,
            {"n": papers},
        )
        conn.execute("SELECT setval('papers_id_seq', %(n)s)", {"n": papers})
        conn.execute(
            "INSERT INTO paper_ids (scheme, value, paper_id) SELECT 'acl', 'bench.' || g, g "
            "FROM generate_series(1, %(n)s) g",
            {"n": papers},
        )
        conn.execute(
            "INSERT INTO authors (id, name, normalized_name) SELECT g, 'Author ' || g, 'author ' || g "
            "FROM generate_series(1, 30000) g"
        )
        conn.execute("SELECT setval('authors_id_seq', 30000)")
        conn.execute(
            """
            INSERT INTO paper_authors (paper_id, position, author_id, affiliations)
            SELECT p, k, 1 + ((p * 31 + k * 977) %% 30000), ARRAY['University ' || ((p + k) %% 300)]
              FROM generate_series(1, %(n)s) p, generate_series(0, 2) k
            """,
            {"n": papers},
        )
    print(f"papers, authors, venues: {time.perf_counter() - t0:.0f}s", flush=True)
    t0 = time.perf_counter()
    copy_sql = "COPY paper_embeddings (paper_id, model, content_hash, embedding) FROM STDIN"
    with db.connection() as conn:  # building the HNSW index once is far faster than growing it row by row
        conn.execute("DROP INDEX paper_embeddings_hnsw_all_minilm_l6_v2")
    with db.connection() as conn, conn.cursor() as cur, cur.copy(copy_sql) as copy:
        for start in range(0, papers, 10000):
            ids = np.arange(start, min(start + 10000, papers))
            # each paper near its topic centre (cosine about 0.85), as sentence embeddings cluster by topic
            noise = rng.normal(size=(len(ids), DIM)).astype(np.float32) / np.sqrt(DIM)
            vecs = centers[topic_of[ids]] + 0.6 * noise
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            for pid, vec in zip(ids, vecs, strict=True):
                text = "[" + ",".join(f"{x:.5f}" for x in vec) + "]"
                copy.write_row((int(pid) + 1, "all-MiniLM-L6-v2", f"h{pid}", text))
    with db.connection() as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute(
            "CREATE INDEX paper_embeddings_hnsw_all_minilm_l6_v2 ON paper_embeddings USING hnsw "
            "((embedding::vector(384)) vector_cosine_ops) WHERE model = 'all-MiniLM-L6-v2'"
        )
    print(f"embeddings and their HNSW index: {time.perf_counter() - t0:.0f}s", flush=True)
    t0 = time.perf_counter()
    per_channel = messages // channels
    with db.connection() as conn:
        conn.execute("INSERT INTO teams (team_id) SELECT 'T' || g FROM generate_series(1, 10) g")
        conn.execute(
            "INSERT INTO channels (team_id, channel_id, name) SELECT 'T' || (1 + g %% 10), 'C' || g, "
            "'channel-' || g FROM generate_series(1, %(c)s) g",
            {"c": channels},
        )
        conn.execute(
            "INSERT INTO members (team_id, user_id, display_name) SELECT 'T' || t, 'U' || t || '_' || u, "
            "'member ' || u FROM generate_series(1, 10) t, generate_series(1, 2000) u"
        )
        # each channel reads 3 topics; 40% of its stored messages share a paper, the rest reply to them
        conn.execute(
            """
            INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, permalink, posted_at)
            SELECT 'T' || (1 + c %% 10), 'C' || c, (1705000000 + c * 10 + m * 112320)::text || '.000000',
                   CASE WHEN m %% 5 < 2 THEN NULL
                        ELSE (1705000000 + c * 10 + (m - m %% 5) * 112320)::text || '.000000' END,
                   'U' || (1 + c %% 10) || '_' || (1 + (c * 7 + m) %% 2000),
                   'a message', 'https://bench.slack.com/archives/C' || c || '/p' || m,
                   to_timestamp(1705000000 + c * 10 + m * 112320)
              FROM generate_series(1, %(c)s) c, generate_series(0, %(m)s - 1) m
            """,
            {"c": channels, "m": per_channel},
        )
        conn.execute(
            """
            INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url)
            SELECT id, 1 + ((abs(hashtext(channel_id)) + 133 * (abs(hashtext(ts)) %% 3)) %% 400)
                     + 400 * (abs(hashtext(ts || 'p')) %% (%(n)s / 400)),
                   team_id, channel_id, 'https://x'
              FROM messages WHERE thread_ts IS NULL
            """,
            {"n": papers},
        )
        conn.execute(
            """
            INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)
            SELECT id, team_id, channel_id, 'U' || substr(team_id, 2) || '_' || (1 + (id * 13 + k) %% 2000),
                   (ARRAY['+1', 'heart', 'eyes', '-1'])[1 + (id + k) %% 4], posted_at
              FROM messages, generate_series(1, 2) k WHERE thread_ts IS NULL
            """,
            {},
        )
        conn.execute("ANALYZE")
    print(f"channels, messages, reactions: {time.perf_counter() - t0:.0f}s", flush=True)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def measure(db: object, samples: int, channels: int) -> None:
    from socialrag.db import Database
    from socialrag.recommender.rank.engagement import ScoringConfig, channel_weights
    from socialrag.recommender.rank.refit import refit_channel
    from socialrag.recommender.retrieve.candidates import CandidateQuery, CatalogSource
    from socialrag.recommender.retrieve.signals import SignalInput, compute_signals
    from socialrag.recommender.serve.pipeline import ChannelRequest, RecommendConfig, load_relations, recommend
    from socialrag.recommender.serve.service import SEARCH_BESIDE_WAIT_S
    from socialrag.storage.context_rows import load_paper_infos
    from socialrag.storage.embeddings import load_vectors

    assert isinstance(db, Database)
    rng = np.random.default_rng(11)
    picks = [int(c) for c in rng.integers(1, channels + 1, size=samples)]
    signal_ms, rec_ms, recalls = [], [], []
    config = RecommendConfig(model="all-MiniLM-L6-v2")
    refit_s = []
    fitted = []
    with db.connection() as conn:
        conn.execute("SET jit = off")
        for c in picks:  # each sampled channel gets its calibrated ranker, as the scheduler would give it
            t = time.perf_counter()
            model = refit_channel(conn, f"T{1 + c % 10}", f"C{c}", config.model, now=AS_OF)
            refit_s.append(time.perf_counter() - t)
            fitted.append(model.learnt)
        conn.commit()
        # as the service searches the catalog: on this connection and one more
        catalog = CatalogSource(beside=partial(db.connection, wait=SEARCH_BESIDE_WAIT_S))
        for c in picks[:3]:  # warm the caches
            recommend(conn, ChannelRequest(f"T{1 + c % 10}", f"C{c}", AS_OF, [catalog], config))
        for c in picks:
            team, channel = f"T{1 + c % 10}", f"C{c}"
            t = time.perf_counter()
            rec = recommend(conn, ChannelRequest(team, channel, AS_OF, [catalog], config))
            rec_ms.append((time.perf_counter() - t) * 1000)
            if not rec.candidates or rec.context is None:
                continue
            ctx = rec.context
            cand = rec.candidates[min(3, len(rec.candidates) - 1)].paper_id
            weights = channel_weights(ctx.papers, AS_OF, ScoringConfig(), ctx.emoji_overrides)
            t = time.perf_counter()
            info = load_paper_infos(conn, [cand])[cand]
            vec = load_vectors(conn, config.model, [cand])[cand]
            compute_signals(SignalInput(ctx, info, vec, load_relations(conn, ctx, cand)), weights)
            signal_ms.append((time.perf_counter() - t) * 1000)
            recalls.append(ann_recall(conn, CatalogSource().query_vectors(CandidateQuery(ctx, weights, config.model))))
            conn.rollback()
    print(f"\nsampled {len(picks)} channels")
    print(
        f"refit of a channel's ranker: p50 {percentile(refit_s, 50) * 1000:.0f} ms, "
        f"p95 {percentile(refit_s, 95) * 1000:.0f} ms ({sum(fitted)} of {len(fitted)} learnt their own weights)"
    )
    print(
        f"signals for one candidate: p50 {percentile(signal_ms, 50):.1f} ms, p95 {percentile(signal_ms, 95):.1f} ms"
        " (target p95 < 25 ms)"
    )
    print(
        f"whole recommendation with the calibrated ranker (no LLM): p50 {percentile(rec_ms, 50):.0f} ms, "
        f"p95 {percentile(rec_ms, 95):.0f} ms (target p95 < 250 ms)"
    )
    print(
        f"filtered ANN recall@20 vs exact: mean {statistics.mean(recalls):.3f}, min {min(recalls):.3f} (target >= 0.95)"
    )
    ask_ms = measure_ask(db, picks)
    print(
        f"answer to a member's question (/paperping ask: the question embedded, full text and vectors searched, "
        f"the answer built; no LLM): p50 {percentile(ask_ms, 50):.0f} ms, p95 {percentile(ask_ms, 95):.0f} ms "
        "(target p95 < 300 ms)"
    )


def measure_ask(db: object, picks: list[int]) -> list[float]:
    """Milliseconds of ``ask_memory`` for each sampled channel, as a member's `/paperping ask` runs it without an
    LLM: a question on one of the channel's topics, the whole answer built (papers, shares, reception)."""
    from socialrag.db import Database
    from socialrag.knowledge.embed import Embedder
    from socialrag.recommender import ask_memory

    assert isinstance(db, Database)
    embedder = Embedder()

    def encode(text: str) -> np.ndarray:
        return np.asarray(embedder.encode([text])[0])

    encode("warm the model")
    times = []
    with db.connection() as conn:
        conn.execute("SET jit = off")
        for c in picks:
            question = f"what have we read about topic {c % 400}?"
            t = time.perf_counter()
            ask_memory(conn, embedder.model_name, encode, f"T{1 + c % 10}", [f"C{c}"], "U1_1", question, None, AS_OF)
            times.append((time.perf_counter() - t) * 1000)
    return times


def ann_recall(conn: object, vectors: list[np.ndarray], k: int = 20) -> float:
    """Share of the exact top-k (filtered to the catalog published before AS_OF) that HNSW also returns."""
    sql = """
        SELECT e.paper_id FROM paper_embeddings e JOIN papers p ON p.id = e.paper_id
         WHERE e.model = 'all-MiniLM-L6-v2' AND p.in_catalog AND p.publication_date < %(as_of)s
         ORDER BY {expr} LIMIT %(k)s
    """
    hits = []
    for vec in vectors[:2]:
        params = {"q": vec, "as_of": AS_OF, "k": k}
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")  # type: ignore[attr-defined]
        conn.execute("SET LOCAL hnsw.ef_search = 100")  # type: ignore[attr-defined]
        ann = {
            r[0]
            for r in conn.execute(  # type: ignore[attr-defined]
                sql.format(expr="e.embedding::vector(384) <=> %(q)s::vector(384)"), params
            ).fetchall()
        }
        conn.execute("SET LOCAL enable_indexscan = off")  # type: ignore[attr-defined]
        exact = {
            r[0]
            for r in conn.execute(  # type: ignore[attr-defined]
                sql.format(expr="e.embedding::vector(384) <=> %(q)s::vector(384)"), params
            ).fetchall()
        }
        conn.execute("SET LOCAL enable_indexscan = on")  # type: ignore[attr-defined]
        hits.append(len(ann & exact) / max(1, len(exact)))
    return float(np.mean(hits)) if hits else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--channels", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--home", type=Path, help="keep the base here; a second run measures it again")
    args = parser.parse_args()
    from socialrag.db import migrated_database, start_embedded

    home = args.home or Path(tempfile.mkdtemp(prefix="paperping-scale-"))
    home.mkdir(parents=True, exist_ok=True)
    uri, server = start_embedded(home / "pgdata")
    try:
        name = f"scale_{args.channels}_{args.messages}_{args.papers}"
        with __import__("psycopg").connect(uri, autocommit=True) as conn:
            fresh = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None
        db = migrated_database(uri, name)
        if fresh:
            build(db, args.channels, args.messages, args.papers)
        measure(db, args.samples, args.channels)
    finally:
        server.cleanup()
        if args.home is None:  # a home of its own: nothing of it is kept
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
