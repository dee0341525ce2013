"""Arbitrary input raises nothing but the documented errors: the link parser, the Slack message parser, the
catalog line parser, the slash-command parser, and the text made safe to quote.

The examples are derandomized so that every run (and CI) tries the same ones; to search further, run the
file with ``derandomize`` set to False and a higher ``max_examples``."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.commands import UsageError, parse_command
from bot.slack.payloads import message_from_slack, reactions_from_slack
from socialrag.errors import BadRecord
from socialrag.knowledge.links import find_paper_refs
from socialrag.knowledge.papers.local_catalog import paper_from_catalog
from socialrag.text import as_data

# JSON-like values, as an export file or an event body can hold them
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
FIELDS = (
    "type",
    "subtype",
    "ts",
    "thread_ts",
    "user",
    "bot_id",
    "text",
    "reply_count",
    "edited",
    "reactions",
    "attachments",
    "files",
)
messages = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=len(FIELDS))
link_texts = st.text(max_size=200) | st.lists(
    st.sampled_from(
        [
            "<",
            ">",
            "|",
            "https://",
            "arxiv.org/abs/",
            "doi.org/10.",
            "aclanthology.org/",
            "2005.14165",
            "10.18653/v1/",
            "P19-1001",
            "v2",
            ".pdf",
            " ",
            "\n",
            "&amp;",
            "arxiv:",
            "%",
            "?",
            "#",
            "\x00",
        ]
    ),
    max_size=12,
).map("".join)


@settings(derandomize=True, database=None, max_examples=300, deadline=None)
@given(link_texts)
def test_the_link_parser_takes_any_text(text: str) -> None:
    for ref in find_paper_refs(text):
        assert ref.scheme and ref.value


@settings(derandomize=True, database=None, max_examples=400, deadline=None)
@given(messages)
def test_the_message_parser_raises_only_bad_record(raw: dict[str, Any]) -> None:
    try:
        message = message_from_slack(raw, "T1", "C1")
    except BadRecord:
        return
    if message is not None:
        assert "\x00" not in message.text and isinstance(message.reply_count, int)
        assert message.user_id is None or isinstance(message.user_id, str)


@pytest.mark.parametrize("count", ["³", "٣", "²¹"])
def test_a_reply_count_in_another_scripts_digits_is_a_bad_record(count: str) -> None:
    """An export's ``reply_count`` of "³" passed ``str.isdigit`` and made ``int`` raise: not the ``BadRecord`` that
    lets an import skip one message and go on."""
    raw = {"type": "message", "user": "U1", "text": "hi", "ts": "1600000000.000100", "reply_count": count}
    with pytest.raises(BadRecord):
        message_from_slack(raw, "T1", "C1")


@pytest.mark.parametrize(
    "url", ["https://www.semanticscholar.org/search?corpusId=³", "https://ieeexplore.ieee.org/x?arnumber=٣"]
)
def test_a_link_with_another_scripts_digits_names_no_paper(url: str) -> None:
    assert find_paper_refs(url) == ()


@settings(derandomize=True, database=None, max_examples=200, deadline=None)
@given(json_values)
def test_reactions_of_any_shape(raw: Any) -> None:
    for reaction in reactions_from_slack(raw):
        assert isinstance(reaction.user_id, str) and isinstance(reaction.emoji, str)


@settings(derandomize=True, database=None, max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            (
                "acl_id",
                "doi",
                "arxiv_id",
                "s2_id",
                "title",
                "abstract",
                "authors",
                "venue",
                "year",
                "publication_date",
                "url",
                "popularity",
                "references",
            )
        ),
        json_values,
        max_size=8,
    )
)
def test_the_catalog_parser_raises_only_value_error(raw: dict[str, Any]) -> None:
    try:
        paper = paper_from_catalog(raw)
    except ValueError:
        return
    assert paper.ids
    assert paper.year is None or 1000 <= paper.year <= 2200
    assert "\x00" not in (paper.title or "") + (paper.abstract or "")


@settings(derandomize=True, database=None, max_examples=400, deadline=None)
@given(
    st.text(max_size=80)
    | st.lists(
        st.sampled_from(
            [
                "frequency",
                "style",
                "hours",
                "emoji",
                "focus",
                "now",
                "9-17",
                "25-3",
                "weekly",
                "llm",
                ":x:",
                "every-day",
                " ",
                "Europe/Berlin",
                "link-author",
                "forget-me",
            ]
        ),
        max_size=5,
    ).map(" ".join)
)
def test_the_command_parser_raises_only_usage_error(text: str) -> None:
    try:
        command = parse_command(text)
    except UsageError as exc:
        assert str(exc)
        return
    assert command.name


@settings(derandomize=True, database=None, max_examples=300, deadline=None)
@given(
    st.text(max_size=120)
    | st.lists(
        st.sampled_from(
            [
                "<!channel>",
                "<@U1>",
                "{@U2}",
                "<#C1|x>",
                "@here",
                "<https://e.com|l>",
                "evil.example.com",
                "word",
                " ",
                "<",
                ">",
                "{@",
                "}",
                "|",
            ]
        ),
        max_size=10,
    ).map("".join)
)
def test_text_from_outside_never_keeps_markup(text: str) -> None:
    safe = as_data(text)
    assert not re.search(r"<[@!#][^<>]*>|\{@[A-Z0-9]+\}|https?://|evil\.example", safe)
    assert as_data(safe) == safe, "cleaning is stable"
