"""A channel whose latest stored fit cannot be read (a `channel_rankers` row damaged by hand, or written otherwise
by another release): its next pick is ranked by the default blend instead of crashing or ranking by garbage, and
`status` says why; the next refit replaces the row."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from socialrag import storage
from socialrag.db import Database
from socialrag.recommender.rank.calibrate import default_model
from socialrag.recommender.rank.features import FEATURES
from socialrag.recommender.rank.refit import load_fit, refit_channel
from socialrag.recommender.serve.service import Recommender
from tests.support.harness import Harness, T
from tests.support.labbase import CachedEmbedder, build_lab

MODEL = "all-MiniLM-L6-v2"
AT = datetime(2021, 1, 10, 9, tzinfo=UTC)
GOOD = {**default_model().to_json(), "decision": "kept the default blend"}
DAMAGED: dict[str, Any] = {
    "a word for a weight": {**GOOD, "weights": ["high", *GOOD["weights"][1:]]},
    "weights that are not numbers": {**GOOD, "weights": ["NaN"] * len(FEATURES)},
    "a weight too large to add": {**GOOD, "weights": [1e308] * len(FEATURES)},
    "a missing weight": {**GOOD, "weights": [GOOD["weights"][0], None, *GOOD["weights"][2:]]},
    "fewer weights than features": {**GOOD, "weights": GOOD["weights"][:3]},
    "a window past any date": {**GOOD, "window_days": 1e300},
    "a window that ends in the future": {**GOOD, "window_days": -30},
    "a list, not an object": [1.0, 2.0],
}


def test_a_fit_that_cannot_be_read_serves_the_default_blend_and_says_so(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    recommender = harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    blend = recommender.recommend(T, "C1", at=AT, style="template", top=5)
    assert blend.draft is not None
    for damage, row in DAMAGED.items():
        with db.connection() as conn:
            conn.execute("DELETE FROM channel_rankers")
            storage.rankers.save_fit(conn, T, "C1", AT - timedelta(days=1), row, 30, 400)
            fit = load_fit(conn, T, "C1", as_of=AT)
        assert fit.is_default_blend and fit.window_days is None, damage
        assert all(math.isfinite(w) for w in fit.weights), damage
        found = recommender.recommend(T, "C1", at=AT, style="template", top=5)
        assert found.draft is not None, (damage, found.empty_reason)
        assert [c.paper_id for c in found.candidates] == [c.paper_id for c in blend.candidates], damage
        assert all(math.isfinite(c.score) for c in found.candidates), damage
        status = harness.command("status")
        assert "could not be read" in status and "default blend" in status, (damage, status)
    # the next refit reads past the damaged row and stores a fit that can be read
    with db.connection() as conn:
        refit_channel(conn, T, "C1", MODEL, now=AT + timedelta(hours=1))
        assert "could not be read" not in load_fit(conn, T, "C1").decision
