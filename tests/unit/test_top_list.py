"""The group's top list counted from engagement events: what counts and as what, who engaged, and the order."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.views.top_list import render_top_list
from socialrag.report import TopList, TopPaper
from socialrag.report.top import kind_of, rank_top
from socialrag.storage.reports import EngagementEvent as E


def test_what_counts_and_as_what() -> None:
    assert kind_of(E(1, "reaction", "U1", "+1"), {}) == "reaction"
    assert kind_of(E(1, "reaction", "U1", "-1"), {}) is None, "a negative reaction is not engagement worth listing"
    assert kind_of(E(1, "reaction", "U1", "button:not-for-us"), {}) is None
    assert kind_of(E(1, "reaction", "U1", "button:relevant"), {}) == "click"
    assert kind_of(E(1, "reaction", "U1", "button:save"), {}) == "save"
    assert kind_of(E(1, "reaction", "U1", "bookmark"), {}) == "save"
    assert kind_of(E(1, "reaction", "U1", "eyes"), {"eyes": "negative"}) is None, "the channel's own reading"
    assert kind_of(E(1, "reply", "U1", None), {}) == "reply"


def test_the_most_engaged_first_with_who_engaged() -> None:
    events = [
        E(7, "share", "U2", None),
        E(7, "share", "U4", None),
        E(7, "reply", "U4", None),
        E(7, "reaction", "U3", "+1"),
        E(7, "reaction", "U1", "-1"),
        E(9, "share", "U3", None),
        E(9, "reply", "U2", None),
        E(9, "reaction", "U1", "bookmark"),
        E(5, "share", "U1", None),
        E(5, "save", "U4", None),
        E(5, "reaction", "U4", "fire"),
        E(5, "reaction", "UBOT", "+1"),
    ]
    ranked = rank_top(events, {}, {"UBOT"})
    assert [p for p, _, _ in ranked] == [7, 9, 5], "5 and 9 tie on 3; 9 has more members"
    assert ranked[0][1] == {"share": 2, "reply": 1, "reaction": 1} and ranked[0][2][0] == "U4"
    assert ranked[1][1] == {"share": 1, "reply": 1, "save": 1}
    assert ranked[2][1] == {"share": 1, "reaction": 1, "save": 1} and "UBOT" not in ranked[2][2]


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
