"""Benchmark: posts a minute with 1, 2 and 4 ``paperping`` worker processes sharing one Postgres.

``python -m bench.bench_workers [--channels 120] [--llm-delay 0.1]`` prepares that many due channels on a
real-data catalog (ACL Anthology, bundled model), serves Slack and an OpenAI-compatible model from local
stand-ins (each model answer takes ``--llm-delay`` seconds, four answers a post), and times the workers.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--channels", type=int, default=120)
    parser.add_argument("--llm-delay", type=float, default=0.1)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    from socialrag.db import migrated_database, start_embedded
    from tests.support.labbase import CachedEmbedder, build_lab
    from tests.support.multiworker import add_due_channels, run_workers
    from tests.support.openai_standin import OpenAIStandIn, chain_answer
    from tests.support.slack_standin import SlackStandIn, SlackState

    home = Path(tempfile.mkdtemp(prefix="paperping-workers-"))
    uri, server = start_embedded(home / "pgdata")
    embedder = CachedEmbedder()
    try:
        for n in args.workers:
            name = f"workers_{n}"
            db = migrated_database(uri, name)
            (home / name).mkdir()
            build_lab(db, home / name, embedder)
            channels = add_due_channels(db, args.channels, datetime.now(UTC))
            slack = SlackStandIn(SlackState(channels={c: {"id": c, "name": c} for c in channels})).start()
            llm = OpenAIStandIn(chain_answer)
            llm.delay = args.llm_delay
            started = time.perf_counter()
            run_workers(n, db.conninfo, slack.url, llm.base_url, timeout=3600)
            seconds = time.perf_counter() - started
            per_channel = Counter(p["channel"] for p in slack.posts)
            slack.stop()
            llm.stop()
            once = all(v == 1 for v in per_channel.values()) and len(per_channel) == len(channels)
            print(
                f"{n} worker(s): {len(slack.posts)} posts in {seconds:.1f}s = {len(slack.posts) / seconds * 60:.0f} "
                f"posts/min; every channel exactly once: {once}",
                flush=True,
            )
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
