"""A generated channel for the report's tests and benchmark: many shares with vectors, titles and venues,
replies and reactions, its text carrying hostile markup."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from socialrag.db import Database


def generated_channel(db: Database, shares: int, seed: int = 3) -> None:
    """One channel with ``shares`` shared papers (with vectors, titles, venues), replies and reactions, written
    straight into the tables; titles and names carry hostile markup."""
    rng = np.random.default_rng(seed)
    start = datetime(2022, 1, 1, tzinfo=UTC)
    with db.connection() as conn:
        conn.execute("INSERT INTO teams (team_id) VALUES ('TGEN')")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('TGEN', 'CGEN', 'big-lab')")
        conn.execute(
            "INSERT INTO members (team_id, user_id, display_name) SELECT 'TGEN', 'U' || g, "
            "CASE WHEN g = 1 THEN '<script>alert(1)</script> $x^2$' ELSE 'member name ' || g END "
            "FROM generate_series(1, 40) g"
        )
        conn.execute("INSERT INTO venues (name, normalized_name) VALUES ('ACL', 'acl'), ('<b>EMNLP</b>', 'emnlp')")
        conn.execute(
            """
            INSERT INTO papers (title, venue_id, year)
            SELECT CASE WHEN g %% 500 = 0 THEN '<img src=http://evil.example/x> $\\alpha$ <@U1> Paper ' || g
                        ELSE 'Paper ' || g || ' on ' || (ARRAY['parsing', 'translation', 'summarization',
                             'dialogue', 'retrieval'])[1 + g %% 5] END,
                   (SELECT id FROM venues ORDER BY id LIMIT 1 OFFSET g %% 2), 2022
              FROM generate_series(1, %(n)s) g
            """,
            {"n": shares},
        )
        ids = [r[0] for r in conn.execute("SELECT id FROM papers ORDER BY id").fetchall()]
        centers = rng.normal(size=(5, 384)).astype(np.float32)
        with (
            conn.cursor() as cur,
            cur.copy("COPY paper_embeddings (paper_id, model, content_hash, embedding) FROM STDIN") as copy,
        ):
            for i, pid in enumerate(ids):
                v = centers[i % 5] + 0.7 * rng.normal(size=384).astype(np.float32) / np.sqrt(384)
                v /= np.linalg.norm(v)
                copy.write_row((pid, "all-MiniLM-L6-v2", f"h{pid}", "[" + ",".join(f"{x:.4f}" for x in v) + "]"))
        conn.execute(
            """
            INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at)
            SELECT 'TGEN', 'CGEN', (%(t0)s + g * 3000)::text || '.000000', 'U' || (1 + g %% 40), 'a link',
                   to_timestamp(%(t0)s + g * 3000)
              FROM generate_series(1, %(n)s) g
            """,
            {"n": shares, "t0": int(start.timestamp())},
        )
        conn.execute(
            """
            INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url)
            SELECT m.id, p.id, 'TGEN', 'CGEN', 'https://x'
              FROM (SELECT id, row_number() OVER (ORDER BY id) AS k FROM messages WHERE channel_id = 'CGEN') m
              JOIN (SELECT id, row_number() OVER (ORDER BY id) AS k FROM papers) p ON p.k = m.k
            """
        )
        conn.execute(
            """
            INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, posted_at)
            SELECT 'TGEN', 'CGEN', ((split_part(ts, '.', 1))::bigint + 60)::text || '.000000', ts,
                   'U' || (1 + id % 37), 'a reply', posted_at + interval '1 minute'
              FROM messages WHERE channel_id = 'CGEN' AND id % 3 = 0
            """
        )
        conn.execute(
            """
            INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)
            SELECT id, 'TGEN', 'CGEN', 'U' || (1 + (id * 7 + k) % 40),
                   (ARRAY['+1', 'heart', 'eyes', '-1', 'fire::skin-tone-2'])[1 + (id + k) % 5], posted_at
              FROM messages, generate_series(1, 2) k WHERE channel_id = 'CGEN' AND thread_ts IS NULL
            """
        )
