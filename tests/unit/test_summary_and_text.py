from __future__ import annotations

from datetime import UTC, datetime, timedelta

from socialrag.explain import plan_mentions, render_plain
from socialrag.summary import summarize

ABSTRACT = (
    "Large language models are widely used. In this paper, we propose a retrieval method for group chats. "
    "It improves recall by 12% over a strong baseline. We release code. Related work is discussed."
)


def test_tldr_wins_and_is_clipped() -> None:
    assert summarize(ABSTRACT, "A short tldr.") == "A short tldr."
    assert summarize(None, "word " * 200, limit=50).endswith("…")  # type: ignore[union-attr]


def test_extractive_summary_prefers_contribution_sentences() -> None:
    summary = summarize(ABSTRACT)
    assert summary is not None and summary.startswith("In this paper, we propose")
    assert "12%" in summary and len(summary) <= 300


def test_mentions_respect_opt_out_and_quiet_days() -> None:
    now = datetime(2024, 1, 10, tzinfo=UTC)
    got = plan_mentions(["U1", "U2", "U3", "U1"], {"U2": False}, {"U3": now - timedelta(days=2)}, now)
    assert got == ("U1",)
    assert plan_mentions(["U3"], {}, {"U3": now - timedelta(days=8)}, now) == ("U3",)


def test_render_plain_names_members() -> None:
    assert render_plain("For {@U1} and {@U2}.", {"U1": "ana"}) == "For @ana and @U2."
