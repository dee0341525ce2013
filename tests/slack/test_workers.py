"""Three worker processes, one Postgres, 200 due channels: every channel gets exactly one post."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from socialrag.db import Database
from tests.labbase import CachedEmbedder, build_lab
from tests.multiworker import add_due_channels
from tests.openai_standin import OpenAIStandIn, chain_answer
from tests.slack_standin import SlackStandIn, SlackState

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_three_workers_post_exactly_once_per_channel(db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    channels = add_due_channels(db, 200, datetime.now(UTC))
    state = SlackState(channels={c: {"id": c, "name": c} for c in channels})
    slack = SlackStandIn(state).start()
    llm = OpenAIStandIn(chain_answer)
    llm.delay = 0.02  # a slow model
    try:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.multiworker", db.conninfo, slack.url, llm.base_url],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        outputs = [p.communicate(timeout=600) for p in procs]
    finally:
        slack.stop()
        llm.stop()
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outputs]
    served = [int(o[0].split()[-1]) for o in outputs]
    per_channel = Counter(p["channel"] for p in slack.posts)
    assert sum(served) == 200 and all(s > 0 for s in served), served
    assert set(per_channel) == set(channels) and set(per_channel.values()) == {1}
    with db.connection() as conn:
        rows = conn.execute("SELECT status, count(*) FROM recommendations GROUP BY 1").fetchall()
    assert rows == [("posted", 200)]
