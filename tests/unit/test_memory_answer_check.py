"""The written answer's check (``unknown_papers``): a quoted title that is none of the retrieved papers' is refused;
an apostrophe inside a word ("Ben's share", "it's about") quotes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from socialrag.recommender.explain.memory_answer import ItemText, unknown_papers

ITEM = ItemText("TaBERT: Pretraining for Joint Understanding of Textual and Tabular Data", "ben",
                datetime(2020, 12, 1, tzinfo=UTC), "1 reaction", None, ())  # fmt: skip


def test_apostrophes_inside_words_quote_nothing() -> None:
    for text in (
        "Ben's share [1] is the one on tables; it's about pretraining on text and tables together.",
        "Ben’s share [1] covers tables, and it’s the group’s only paper on them.",
        "The members' view of [1] was positive, and the authors' code is public.",
        "The ‘BERT’ paper [1] and the authors’ claim that tables help were discussed.",
    ):
        assert unknown_papers(text, [ITEM], []) == [], text


def test_a_quoted_title_not_retrieved_is_still_refused() -> None:
    for text in (
        'The group read [1]; see also "Attention Is All You Need", which it never shared.',
        "The group read [1]; see also 'Attention Is All You Need', which it never shared.",
        "The group read [1]; see also ‘Attention Is All You Need’, which it never shared.",
        "Ben's share [1]; see also 'Attention Is All You Need'.",
    ):
        assert unknown_papers(text, [ITEM], []), text
    assert unknown_papers("The group read 'TaBERT: Pretraining for Joint Understanding' [1].", [ITEM], []) == []
