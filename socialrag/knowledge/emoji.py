"""How PaperPing reads an emoji reaction: positive, negative or neutral. Pure.

The default table covers the reactions research channels use most; a channel can override any emoji
(``/paperping emoji NAME positive|negative|neutral``), and the override wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from socialrag.models import Sentiment

POSITIVE: frozenset[str] = frozenset(
    {
        "+1",
        "thumbsup",
        "heart",
        "hearts",
        "heart_eyes",
        "star",
        "star2",
        "star-struck",
        "fire",
        "tada",
        "raised_hands",
        "clap",
        "100",
        "bulb",
        "white_check_mark",
        "heavy_check_mark",
        "ballot_box_with_check",
        "pray",
        "muscle",
        "rocket",
        "sparkles",
        "smile",
        "smiley",
        "grinning",
        "slightly_smiling_face",
        "blush",
        "joy",
        "laughing",
        "ok_hand",
        "brain",
        "exploding_head",
        "mind_blown",
        "bookmark",
        "bookmark_tabs",
        "pushpin",
        "round_pushpin",
        "books",
        "green_heart",
        "blue_heart",
        "purple_heart",
        "yellow_heart",
        "orange_heart",
        "sparkling_heart",
        "trophy",
        "medal",
        "gem",
        "partying_face",
        "hugging_face",
        "nerd_face",
        "upvote",
        "thumbsup_all",
        "this",
        "plus1",
        "yes",
        "love",
        "saved",
        "heavy_plus_sign",
        "chefkiss",
        "chef_kiss",
        "star_struck",
        "awesome",
        "nice",
    }
)
NEGATIVE: frozenset[str] = frozenset(
    {
        "-1",
        "thumbsdown",
        "disappointed",
        "confused",
        "face_with_raised_eyebrow",
        "x",
        "no_entry",
        "no_entry_sign",
        "heavy_minus_sign",
        "skull",
        "rage",
        "angry",
        "unamused",
        "expressionless",
        "neutral_face",
        "face_palm",
        "facepalm",
        "man-facepalming",
        "woman-facepalming",
        "thinking_face_no",
        "downvote",
        "zzz",
        "sleeping",
        "yawning_face",
        "grimacing",
        "nauseated_face",
        "poop",
        "hankey",
        "triangular_flag_on_post",
        "warning",
        "broken_heart",
        "cry",
        "sob",
        "frowning",
        "slightly_frowning_face",
        "white_frowning_face",
        "no",
        "nope",
        "wastebasket",
        "hand",
    }
)


# Slack's emoji names: lower-case letters, digits, `_`, `-`, `+` and `'` (``+1``, ``-1``, ``woman's_hat``), no
# longer than Slack allows a custom emoji's name to be.
_EMOJI_NAME = re.compile(r"[a-z0-9_+'-]{1,100}")


def is_emoji_name(name: str) -> bool:
    """Whether ``name`` (as ``normalize_emoji`` leaves it) is an emoji name Slack could have, and nothing else:
    no markup, no spaces, no mention or link can hide in it."""
    return _EMOJI_NAME.fullmatch(name) is not None


@lru_cache(maxsize=4096)  # a refit reads every reaction of the channel; a channel uses a few dozen emoji
def normalize_emoji(name: str) -> str:
    """``:+1::skin-tone-3:`` and ``+1::skin-tone-3`` both become ``+1``."""
    name = name.strip().strip(":").lower()
    base, _, _ = name.partition("::")
    return base.strip(":")


# The buttons on PaperPing's posts, stored as reactions under names no Slack emoji can have (a colon inside), so
# that every reader of reactions (ranking, refit, report, forget-me, deletions) counts a click like one. Their
# reading is fixed: no channel override or learnt reading applies to them.
CLICKS: dict[str, str] = {"relevant": "button:relevant", "not_for_us": "button:not-for-us", "save": "button:save"}
CLICK_SENTIMENT: dict[str, Sentiment] = {
    CLICKS["relevant"]: "positive",
    CLICKS["not_for_us"]: "negative",
    CLICKS["save"]: "positive",
}
CLICK_LABELS: dict[str, str] = {
    CLICKS["relevant"]: "relevant",
    CLICKS["not_for_us"]: "not for us",
    CLICKS["save"]: "saved",
}
# a reaction that keeps a paper for later (the channel's reading list takes the first two and the button)
SAVE_EMOJI: frozenset[str] = frozenset({"bookmark", "bookmark_tabs", "pushpin", "round_pushpin", CLICKS["save"]})
READING_LIST_EMOJI: frozenset[str] = frozenset({"bookmark", "bookmark_tabs", CLICKS["save"]})


def click_counts(reactions: Mapping[str, int]) -> dict[str, int]:
    """How many members clicked each button (by kind: ``relevant``, ``not_for_us``, ``save``), from a message's
    reaction counts by name."""
    return {kind: reactions.get(name, 0) for kind, name in CLICKS.items()}


def is_click(name: str) -> bool:
    """Whether a stored reaction is a click on one of PaperPing's buttons."""
    return name in CLICK_SENTIMENT


def display_reaction(name: str) -> str:
    """How a stored reaction is shown to members: ``:+1:`` for an emoji, the button's word for a click."""
    return CLICK_LABELS.get(name) or f":{normalize_emoji(name)}:"


def read_sentiment(name: str, overrides: Mapping[str, Sentiment] | None = None) -> Sentiment:
    """The sentiment of one emoji for a channel: its own reading first, then the default table. A click on a
    button reads as the button says."""
    if name in CLICK_SENTIMENT:
        return CLICK_SENTIMENT[name]
    base = normalize_emoji(name)
    if overrides and base in overrides:
        return overrides[base]
    if base in POSITIVE:
        return "positive"
    if base in NEGATIVE:
        return "negative"
    return "neutral"


def parse_sentiment(word: str) -> Sentiment:
    """A sentiment word typed by a member; raises ValueError with what to type instead."""
    cleaned = word.strip().lower()
    if cleaned in ("positive", "negative", "neutral"):
        return cleaned  # type: ignore[return-value]
    raise ValueError(f"'{word}' is not a sentiment: use positive, negative or neutral")
