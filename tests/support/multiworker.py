"""Many due channels and separate worker processes sharing one Postgres (for the scale test and benchmark).

``python -m tests.support.multiworker DATABASE_URL SLACK_API_URL OPENAI_BASE_URL START_DIR WORKERS`` runs one worker
process: once WORKERS of them have loaded, it ticks until no channel is due and exits.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from socialrag import storage
from socialrag.db import Database
from tests.support.barrier import meet

T = "T0LAB"


def add_due_channels(db: Database, n: int, now: datetime, papers_per_channel: int = 3) -> list[str]:
    """``n`` channels that each shared a few catalog papers (with a reaction) and are due a post now."""
    channels = [f"CW{i:04d}" for i in range(n)]
    with db.connection() as conn:
        papers = [r[0] for r in conn.execute("SELECT id FROM papers WHERE in_catalog ORDER BY id").fetchall()]
        storage.workspaces.upsert_team(conn, T, domain="lab")
        for i, cid in enumerate(channels):
            shares = [
                (papers[(i * 7 + k * 13) % len(papers)], now - timedelta(days=10 - k), now - timedelta(days=9 - k))
                for k in range(papers_per_channel)
            ]
            add_shared_channel(conn, cid, f"w-{i}", shares, style="llm", next_post_at=now - timedelta(minutes=1))
    return channels


def add_shared_channel(
    conn: psycopg.Connection,
    cid: str,
    name: str,
    shares: Sequence[tuple[int, datetime, datetime]],
    *,
    style: str,
    next_post_at: datetime,
) -> None:
    """#``name``, in which U2 shared each paper at its moment and U3 liked it (+1) at the moment given after it,
    active on the local catalog with ``style``, posting at any hour from ``next_post_at``."""
    conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES (%s, %s, %s)", (T, cid, name))
    for k, (paper, at, liked_at) in enumerate(shares):
        row = conn.execute(
            """INSERT INTO messages (team_id, channel_id, ts, user_id, text, permalink, posted_at)
               VALUES (%s, %s, %s, 'U2', 'a paper', %s, %s) RETURNING id""",
            (T, cid, f"{at.timestamp():.6f}", f"https://lab.slack.com/archives/{cid}/p{k}", at),
        ).fetchone()
        assert row is not None
        conn.execute(
            "INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url) VALUES (%s, %s, %s, %s, 'https://x')",
            (row[0], paper, T, cid),
        )
        conn.execute(
            "INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)"
            " VALUES (%s, %s, %s, 'U3', '+1', %s)",
            (row[0], T, cid, liked_at),
        )
    storage.settings.upsert_channel_setting(
        conn,
        T,
        cid,
        active=True,
        style=style,
        sources=["catalog"],
        next_post_at=next_post_at,
        weekdays_only=False,
        post_start_hour=0,
        post_end_hour=24,
    )


def run_workers(n: int, db_url: str, slack_url: str, llm_url: str, timeout: float = 600) -> list[tuple[int, str, str]]:
    """Start ``n`` worker processes, wait for all, and return each one's (exit code, stdout, stderr)."""
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parents[2]
    start = tempfile.mkdtemp(prefix="paperping-workers-")  # all take work only once all have loaded
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.support.multiworker", db_url, slack_url, llm_url, start, str(n)],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    try:
        outputs = [p.communicate(timeout=timeout) for p in procs]
    finally:
        shutil.rmtree(start, ignore_errors=True)
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]


def main() -> None:
    from slack_sdk import WebClient

    from socialrag.config import Settings
    from socialrag.recommender.serve.service import Recommender
    from tests.support.slots import slot_worker

    url, slack, openai_url, start, everyone = sys.argv[1:6]
    settings = Settings(
        home=Path("/nonexistent"),
        database_url=url,
        slack_api_url=slack,
        slack_bot_token="xoxb-w",
        openai_base_url=openai_url,
        openai_api_key="k",
        llm_timeout=10,
    )
    db = Database(url)
    client = WebClient(token="xoxb-w", base_url=slack)
    worker = slot_worker(db, lambda team: client, Recommender(settings, db), clock=lambda: datetime.now(UTC))
    meet(Path(start), int(everyone))
    served = worker.tick(max_posts=10_000)
    print(f"served {served}", flush=True)


if __name__ == "__main__":
    main()
