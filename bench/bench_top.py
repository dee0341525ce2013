"""Benchmark: `/paperping top year` on a channel with a year of about 200,000 engagements.

``python -m bench.bench_top [--members 200] [--runs 3]`` writes a channel of 2,000 shared papers into a temporary
embedded Postgres (about 180,000 reactions, some of them negative, 10,000 replies and a few saves) and times
``load_top_list`` for the year, with the peak of Python's memory while it runs. Target: < 1 s, < 5 MB.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import psycopg

END = 1_764_000_000  # the last share, in Unix seconds; the list is asked for a day later


def generate(conn: psycopg.Connection, members: int) -> int:
    """The channel T1/C1: 2,000 shares over the year with their reactions, replies and saves; how many rows."""
    run = conn.execute
    run("INSERT INTO teams (team_id) VALUES ('T1')")
    run("INSERT INTO channels (team_id, channel_id, name) VALUES ('T1', 'C1', 'big-lab')")
    run(
        "INSERT INTO members (team_id, user_id, display_name) SELECT 'T1', 'U' || g, 'member ' || g "
        "FROM generate_series(1, %s) g",
        (members,),
    )
    run("INSERT INTO papers (title) SELECT 'Paper ' || g FROM generate_series(1, 2000) g")
    run(
        """
        INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at)
        SELECT 'T1', 'C1', (%(end)s - g * 15000)::text || '.000000', 'U' || (1 + g %% %(m)s), 'a link',
               to_timestamp(%(end)s - g * 15000)
          FROM generate_series(1, 2000) g
        """,
        {"end": END, "m": members},
    )
    run(
        """
        INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url)
        SELECT m.id, p.id, 'T1', 'C1', 'https://x'
          FROM (SELECT id, row_number() OVER (ORDER BY id) AS k FROM messages) m
          JOIN (SELECT id, row_number() OVER (ORDER BY id) AS k FROM papers) p USING (k)
        """
    )
    run(
        """
        INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)
        SELECT m.id, 'T1', 'C1', 'U' || u, e, m.posted_at + interval '1 hour'
          FROM messages m, generate_series(1, %(m)s) u, unnest(ARRAY['+1', 'fire', '-1', 'eyes', 'bookmark']) e
         WHERE (m.id * 31 + u * 7 + length(e)) %% 50 = 0 OR (u <= m.id %% 150 AND e = '+1')
        """,
        {"m": members},
    )
    run(
        """
        INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, posted_at)
        SELECT 'T1', 'C1', ((split_part(ts, '.', 1))::bigint + r)::text || '.000000', ts,
               'U' || (1 + (id + r) %% %(m)s), 'a reply', posted_at + r * interval '1 second'
          FROM messages, generate_series(1, 5) r WHERE thread_ts IS NULL
        """,
        {"m": members},
    )
    run("ANALYZE")
    row = run("SELECT (SELECT count(*) FROM reactions) + (SELECT count(*) FROM messages)").fetchone()
    assert row is not None
    return int(row[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from socialrag.db import migrated_database, start_embedded
    from socialrag.report import load_top_list

    home = Path(tempfile.mkdtemp(prefix="paperping-top-"))
    uri, server = start_embedded(home / "pgdata")
    try:
        db = migrated_database(uri, "top")
        with db.connection() as conn:
            rows = generate(conn, args.members)
        now = datetime.fromtimestamp(END + 86400, UTC)
        seconds, peaks = [], []
        for _ in range(args.runs):
            tracemalloc.start()
            t = time.perf_counter()
            with db.connection() as conn:
                top = load_top_list(conn, "T1", "C1", "year", now)
            seconds.append(time.perf_counter() - t)
            peaks.append(tracemalloc.get_traced_memory()[1] / 1e6)
            tracemalloc.stop()
        print(f"`top year` of a channel with {rows} engagement rows, {args.runs} runs:")
        print(f"  median {statistics.median(seconds):.2f} s, worst {max(seconds):.2f} s (target < 1 s)")
        print(f"  Python's peak memory: worst {max(peaks):.1f} MB (target < 5 MB)")
        print(f"  first: paper {top.papers[0].paper_id}, {top.papers[0].counts}")
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
