"""Three worker processes, one Postgres, 200 due channels: every channel gets exactly one post."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from socialrag.db import Database
from tests.support.labbase import CachedEmbedder, build_lab
from tests.support.multiworker import add_due_channels, run_workers
from tests.support.openai_standin import OpenAIStandIn, chain_answer
from tests.support.slack_standin import SlackStandIn, SlackState

pytestmark = pytest.mark.slow


def test_three_workers_post_exactly_once_per_channel(db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    channels = add_due_channels(db, 200, datetime.now(UTC))
    state = SlackState(channels={c: {"id": c, "name": c} for c in channels})
    slack = SlackStandIn(state).start()
    llm = OpenAIStandIn(chain_answer)
    llm.delay = 0.02  # a slow model
    try:
        results = run_workers(3, db.conninfo, slack.url, llm.base_url)
    finally:
        slack.stop()
        llm.stop()
    assert all(code == 0 for code, _, _ in results), [err[-2000:] for _, _, err in results]
    outputs = [(out, err) for _, out, err in results]
    served = [int(o[0].split()[-1]) for o in outputs]
    per_channel = Counter(p["channel"] for p in slack.posts)
    assert sum(served) == 200 and all(s > 0 for s in served), served
    assert set(per_channel) == set(channels) and set(per_channel.values()) == {1}
    with db.connection() as conn:
        rows = conn.execute("SELECT status, count(*) FROM recommendations GROUP BY 1").fetchall()
    assert rows == [("posted", 200)]
