from __future__ import annotations

import pytest

from socialrag.knowledge.emoji import normalize_emoji, parse_sentiment, read_sentiment


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("+1", "positive"),
        ("thumbsup", "positive"),
        (":heart:", "positive"),
        ("+1::skin-tone-4", "positive"),
        ("fire", "positive"),
        ("-1", "negative"),
        ("thumbsdown::skin-tone-2", "negative"),
        ("confused", "negative"),
        ("eyes", "neutral"),
        ("thinking_face", "neutral"),
        ("some_custom_emoji", "neutral"),
    ],
)
def test_default_table(name: str, expected: str) -> None:
    assert read_sentiment(name) == expected


def test_channel_override_wins() -> None:
    assert read_sentiment("eyes", {"eyes": "positive"}) == "positive"
    assert read_sentiment("+1::skin-tone-2", {"+1": "neutral"}) == "neutral"


def test_normalize() -> None:
    assert normalize_emoji(":Thumbsup::skin-tone-3:") == "thumbsup"


def test_parse_sentiment_says_what_to_type() -> None:
    assert parse_sentiment(" Positive ") == "positive"
    with pytest.raises(ValueError, match="positive, negative or neutral"):
        parse_sentiment("great")
