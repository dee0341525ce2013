"""The group's top list: what a reaction counts as, and how the answer names members and titles (the counting
itself is in the database: tests/db/test_top_counts.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.views.top_list import render_top_list
from socialrag.report import TopList, TopPaper
from socialrag.report.top import reaction_kind


def test_what_a_reaction_counts_as() -> None:
    assert reaction_kind("+1", {}) == "reaction"
    assert reaction_kind("-1", {}) is None, "a negative reaction is not engagement worth listing"
    assert reaction_kind("button:not-for-us", {}) is None
    assert reaction_kind("button:relevant", {}) == "click"
    assert reaction_kind("button:save", {}) == "save"
    assert reaction_kind("bookmark", {}) == "save"
    assert reaction_kind("eyes", {"eyes": "negative"}) is None, "the channel's own reading"


def test_the_answer_names_members_as_text_and_escapes_titles() -> None:
    since = datetime(2026, 11, 17, tzinfo=UTC)
    top = TopList(
        "week",
        since,
        [
            TopPaper(
                1, "<!channel> A & B", "https://arxiv.org/abs/2401.00001", {"share": 1, "reply": 2}, ("U1", "<!here>")
            )
        ],
    )
    text = render_top_list(top)
    assert "past week* (since 17 Nov 2026)" in text
    assert "1. <https://arxiv.org/abs/2401.00001|" in text and "— 1 share, 2 replies · " in text
    assert "<!channel>" not in text and "<!here>" not in text, "no text of others can notify anyone"
    assert text.endswith("· <@U1>, a member"), "members by their id: a name that shows and notifies nobody"
    assert "Nothing here drew" in render_top_list(TopList("year", since))
