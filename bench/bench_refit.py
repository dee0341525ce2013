"""Benchmark: refitting one channel's calibrated ranker.

``python -m bench.bench_refit [--shares 1000] [--papers 20000] [--runs 7]`` builds (in a temporary embedded
Postgres) a catalog of ``--papers`` papers with authors, venues, clustered 384-d vectors and monthly popularity
readings, and one channel whose members shared ``--shares`` distinct papers over three years, each with two
reactions and, for one in five, a reply. It then refits the channel ``--runs`` times as the scheduler does
(``recommender.rank.refit.refit_channel``: load the history and, on two more connections at the same time, a pool
of up to 8,000 catalog papers; build the training pairs, choose the pull toward the default blend on the latest
quarter, fit, store) and prints the median and worst time, with the median of each part. Target: under 1 s.

``--busy-days N``: the channel's latest 160 shares were made in its last N days. With fewer than six days the
judge reaches back to 160 held-out shares, four times its usual 40 (``rank.served.judged_start``): the worst case.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DIM = 384
NOW = datetime(2024, 6, 1, tzinfo=UTC)
TEAM, CHANNEL = "T1", "C1"
BUSY_SHARES = 160


def build(db: object, shares: int, papers: int, seed: int = 5, busy_days: float | None = None) -> None:
    from socialrag.db import Database

    assert isinstance(db, Database)
    rng = np.random.default_rng(seed)
    topics = 200
    centers = rng.normal(size=(topics, DIM)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    start = NOW - timedelta(days=3 * 365)
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO venues (name, normalized_name) SELECT 'Venue ' || g, 'venue ' || g "
            "FROM generate_series(1, 50) g"
        )
        conn.execute(
            """
            INSERT INTO papers (id, title, abstract, venue_id, publication_date, popularity, in_catalog)
            SELECT g, 'Paper ' || g, 'An abstract.', 1 + g %% 50,
                   (%(start)s::date - 200) + (g * 1300 / %(n)s), (g * 7919) %% 500, true
              FROM generate_series(1, %(n)s) g
            """,
            {"n": papers, "start": start.date()},
        )
        conn.execute("SELECT setval('papers_id_seq', %(n)s)", {"n": papers})
        conn.execute(
            """
            INSERT INTO paper_popularity (paper_id, observed_at, value)
            SELECT id, publication_date + 30 * k, popularity * k / 12.0
              FROM papers, generate_series(1, 12) k ON CONFLICT DO NOTHING
            """
        )
        conn.execute(
            "INSERT INTO authors (id, name, normalized_name) SELECT g, 'Author ' || g, 'author ' || g "
            "FROM generate_series(1, 8000) g"
        )
        conn.execute("SELECT setval('authors_id_seq', 8000)")
        conn.execute(
            """
            INSERT INTO paper_authors (paper_id, position, author_id)
            SELECT p, k, 1 + ((p * 31 + k * 977) %% 8000) FROM generate_series(1, %(n)s) p, generate_series(0, 3) k
            """,
            {"n": papers},
        )
        conn.execute("INSERT INTO teams (team_id) VALUES (%s)", (TEAM,))
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES (%s, %s, 'lab')", (TEAM, CHANNEL))
        conn.execute(
            "INSERT INTO members (team_id, user_id, display_name) SELECT %s, 'U' || u, 'member ' || u "
            "FROM generate_series(1, 12) u",
            (TEAM,),
        )
    copy_sql = "COPY paper_embeddings (paper_id, model, content_hash, embedding) FROM STDIN"
    with db.connection() as conn, conn.cursor() as cur, cur.copy(copy_sql) as copy:
        noise = rng.normal(size=(papers, DIM)).astype(np.float32) / np.sqrt(DIM)
        vecs = centers[np.arange(papers) % topics] + 0.6 * noise
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        for pid, vec in enumerate(vecs, start=1):
            copy.write_row((pid, "all-MiniLM-L6-v2", f"h{pid}", "[" + ",".join(f"{x:.5f}" for x in vec) + "]"))
    # the channel reads 12 topics; it shares a paper about once a day, one it could have seen then
    span = (NOW - start).total_seconds()
    with db.connection() as conn:
        rows = []
        used: set[int] = set()
        for i in range(shares):
            at = start + timedelta(seconds=span * (i + 0.5) / shares)
            back = 600  # it picks among the latest 600 papers of the day...
            if busy_days is not None and i >= shares - BUSY_SHARES:  # ...or, in a busy stretch at the end, 4,000
                at, back = NOW - timedelta(days=busy_days * (shares - i - 0.5) / BUSY_SHARES), 4000
            day = (at.date() - (start.date() - timedelta(days=200))).days
            newest = max(1, min(papers, int(day * papers / 1300)))
            pid = next(
                p
                for p in (int(rng.integers(max(1, newest - back), newest + 1)) for _ in range(1000))
                if p not in used and p % topics < 12
            )
            used.add(pid)
            rows.append((i, pid, at))
        for i, pid, at in rows:
            mid = conn.execute(
                """
                INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at)
                VALUES (%s, %s, %s, %s, 'a paper', %s) RETURNING id
                """,
                (TEAM, CHANNEL, f"{at.timestamp():.6f}", f"U{1 + i % 12}", at),
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url) "
                "VALUES (%s, %s, %s, %s, 'x')",
                (mid, pid, TEAM, CHANNEL),
            )
            for k in range(2):
                conn.execute(
                    "INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    (mid, TEAM, CHANNEL, f"U{1 + (i + k + 1) % 12}", "+1" if (pid + k) % 3 else "eyes", at),
                )
            if i % 5 == 0:
                conn.execute(
                    """
                    INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, posted_at)
                    VALUES (%s, %s, %s, %s, 'U3', 'a reply', %s)
                    """,
                    (TEAM, CHANNEL, f"{at.timestamp() + 60:.6f}", f"{at.timestamp():.6f}", at + timedelta(minutes=1)),
                )
        conn.execute("ANALYZE")


def measure(db: object, runs: int) -> None:
    from socialrag.db import Database
    from socialrag.recommender.rank.calibrate import describe
    from socialrag.recommender.rank.history import build_history
    from socialrag.recommender.rank.refit import read_together, refit_channel
    from socialrag.recommender.rank.training import training_set

    assert isinstance(db, Database)
    model = "all-MiniLM-L6-v2"
    totals, loads, pairs_s, fits = [], [], [], []
    fitted = None
    for _ in range(runs):
        with db.connection() as conn:
            t = time.perf_counter()
            fitted = refit_channel(conn, TEAM, CHANNEL, model, now=NOW, connect=db.connection)  # as the service
            totals.append(time.perf_counter() - t)
            # the same steps again, timed one by one
            t = time.perf_counter()
            ctx, universe = read_together(conn, TEAM, CHANNEL, model, NOW, connect=db.connection)
            assert universe is not None
            history = build_history(ctx, universe, 60.0)
            loads.append(time.perf_counter() - t)
            t = time.perf_counter()
            training = training_set(history)
            pairs_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            training.fit(now=NOW)  # the strength of the pull chosen on the latest quarter, then the fit
            fits.append(time.perf_counter() - t)
    assert fitted is not None
    print(f"refit of one channel with {fitted.shares} shares learnt from ({fitted.pairs} pairs), {runs} runs:")
    print(f"  whole refit: median {statistics.median(totals):.2f} s, worst {max(totals):.2f} s (target < 1 s)")
    print(
        f"  parts (median): load history and pool {statistics.median(loads):.2f} s, "
        f"training pairs {statistics.median(pairs_s):.2f} s, fit (six, to choose the pull) "
        f"{statistics.median(fits) * 1000:.0f} ms"
    )
    print(f"  {describe(fitted)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shares", type=int, default=1000)
    parser.add_argument("--papers", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--busy-days", type=float, default=None, help="the latest 160 shares in this many days")
    args = parser.parse_args()
    from socialrag.db import migrated_database, start_embedded

    home = Path(tempfile.mkdtemp(prefix="paperping-refit-"))
    uri, server = start_embedded(home / "pgdata")
    try:
        db = migrated_database(uri, "refit")
        t = time.perf_counter()
        build(db, args.shares, args.papers, busy_days=args.busy_days)
        print(f"built {args.papers} papers and {args.shares} shares in {time.perf_counter() - t:.0f} s\n")
        measure(db, args.runs)
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)  # the stored channel and catalog (350 MB) go with it


if __name__ == "__main__":
    main()
