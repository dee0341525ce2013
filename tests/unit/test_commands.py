"""The ``/paperping`` parsers: what a member may type, and the sentence a wrong word gets."""

from __future__ import annotations

import pytest

from bot.commands import Command, UsageError, parse_author_link, parse_command


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", Command("help")),
        ("  HELP ", Command("help")),
        ("pause", Command("pause")),
        ("resume", Command("resume")),
        ("now", Command("now")),
        ("why", Command("why")),
        ("frequency Weekly", Command("frequency", ("weekly",))),
        ("frequency weekly-digest", Command("frequency", ("weekly-digest", "5"))),
        ("frequency weekly-digest 3", Command("frequency", ("weekly-digest", "3"))),
        ("context ON", Command("context", ("on",))),
        ("length short", Command("length", ("short",))),
        ("language DE", Command("language", ("de",))),
        ("for-me now", Command("for-me", ("now",))),
        ("style template+tldr", Command("style", ("template+tldr",))),
        ("mentions OFF", Command("mentions", ("off",))),
        ("forget-me", Command("forget-me")),
        ("forget-me CONFIRM", Command("forget-me", ("confirm",))),
        ("link-author 1741101", Command("link-author", ("1741101",))),
        ("focus retrieval augmented  generation", Command("focus", text="retrieval augmented  generation")),
        ("emoji :eyes: positive", Command("emoji", ("eyes", "positive"))),
        ("hours 9-17", Command("hours", ("9", "17", "", ""))),
        ("hours 10-16 America/New_York every-day", Command("hours", ("10", "16", "America/New_York", "every-day"))),
    ],
)
def test_what_members_may_type(text: str, expected: Command) -> None:
    assert parse_command(text) == expected


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("frequency hourly", "/paperping frequency daily"),
        ("frequency", "/paperping frequency daily"),
        ("frequency weekly-digest 8", "weekly-digest 5"),
        ("frequency weekly-digest two", "weekly-digest 5"),
        ("frequency weekly-digest \u00b3", "weekly-digest 5"),  # a superscript 3: a digit to str.isdigit only
        ("frequency weekly-digest " + "9" * 5000, "weekly-digest 5"),  # past int()'s most digits
        ("frequency daily 3", "/paperping frequency daily"),
        ("context maybe", "/paperping context on"),
        ("length long", "/paperping length short"),
        ("language xx", "/paperping language de"),
        ("for-me always", "/paperping for-me on"),
        ("style fancy", "/paperping style tldr"),
        ("mentions maybe", "/paperping mentions off"),
        ("link-author", "/paperping link-author 1741101"),
        ("focus", "/paperping focus"),
        ("emoji eyes", "/paperping emoji eyes positive"),
        ("emoji eyes lovely", "/paperping emoji eyes positive"),
        ("hours 17-9", "/paperping hours 9-17"),
        ("hours 9-25", "/paperping hours 9-17"),
        ("hours nine", "/paperping hours 9-17"),
        ("hours 9-17 Mars/Olympus", "is not a timezone I know"),
        ("hours 9-17 Europe/Berlin Asia/Tokyo", "/paperping hours 9-17"),
        ("dance", "I don't know `dance`"),
    ],
)
def test_a_wrong_word_gets_a_sentence_on_what_to_type(text: str, hint: str) -> None:
    with pytest.raises(UsageError, match=None) as caught:
        parse_command(text)
    assert hint in str(caught.value)


def test_an_unknown_timezone_is_repeated_as_text_only() -> None:
    """The refusal repeated what was typed as it was: a broadcast, a mention or a backtick that ends the code
    span came back as markup."""
    with pytest.raises(UsageError) as caught:
        parse_command("hours 9-17 <!channel>`<@U1>")
    told = str(caught.value)
    assert "is not a timezone I know" in told and "<!" not in told and "<@" not in told and "``" not in told, told


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1741101", {"s2_author_id": "1741101"}),
        ("https://www.semanticscholar.org/author/Graham-Neubig/1700325", {"s2_author_id": "1700325"}),
        ("<https://www.semanticscholar.org/author/1700325|profile>", {"s2_author_id": "1700325"}),
        ("0000-0002-1825-0097", {"orcid": "0000-0002-1825-0097"}),
        ("https://orcid.org/0000-0002-1825-009X", {"orcid": "0000-0002-1825-009X"}),
    ],
)
def test_author_links(value: str, expected: dict[str, str]) -> None:
    assert parse_author_link(value) == expected


@pytest.mark.parametrize("value", ["graham", "³", "٣٣٣", "1" * 5000])
def test_an_author_link_that_is_none(value: str) -> None:
    """Words, digits of other scripts (which ``int`` and Semantic Scholar refuse) and thousands of digits."""
    with pytest.raises(UsageError, match="Semantic Scholar author id"):
        parse_author_link(value)


@pytest.mark.parametrize(
    "name",
    [
        "<!channel>",
        ":<!channel>:",
        ":<https://evil.example/login|click-here>:",
        "<@U123>",
        "a|b",
        "x" * 101,
    ],
)
def test_emoji_names_carry_no_markup(name: str) -> None:
    """An emoji name is Slack's emoji syntax and nothing else, so the channel's announcement cannot notify or link."""
    with pytest.raises(UsageError, match="not an emoji name"):
        parse_command(f"emoji {name} negative")


def test_real_emoji_names_pass() -> None:
    for name in ("+1", "-1", ":thumbsup::skin-tone-3:", "woman's_hat", "white_check_mark", "e-mail"):
        assert parse_command(f"emoji {name} positive").name == "emoji"


def test_the_profile_shows_example_titles_cut_at_a_word_and_escaped_once() -> None:
    import numpy as np

    from bot.commands.profile import render_profile
    from socialrag.recommender.retrieve.topics import Topic
    from socialrag.recommender.serve.channel_profile import ChannelProfile

    long = "Sentence-Level Content Planning and Style Specification for Neural Text Generation"
    examples = (("Q&A over <!here> tables", "https://lab.slack.com/archives/C1/p1"), (long, None))
    topic = Topic("tables, qa", (1, 2), np.zeros(3), 0.5, 1.0, examples)
    text = render_profile(ChannelProfile(2, [topic], [], [], None, "Ranking: the default blend.", [], []), "arXiv.")
    assert "<https://lab.slack.com/archives/C1/p1|Q&amp;A over tables>" in text, text
    assert "&amp;amp;" not in text and "<!here>" not in text
    assert "Specification for Neural…" in text and "Neural Tex" not in text
    assert "Sources: arXiv." in text
