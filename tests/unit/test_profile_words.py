"""The profile's words are data: a member's words for a topic, paper titles and venue names can neither notify
nor link, and a topic is named only from title words."""

from __future__ import annotations

import numpy as np

from bot.commands.profile import render_profile
from socialrag.recommender.retrieve.topics import Topic, distinctive_name
from socialrag.recommender.serve.channel_profile import ChannelProfile, steer_row


def encode(texts: list[str]) -> np.ndarray:
    return np.ones((len(texts), 4), dtype=np.float32)


def profile(label: str = "mitophagy, parkin, pink1", title: str = "PINK1 and Parkin") -> ChannelProfile:
    topic = Topic(
        label, (1, 2), np.array([1.0, 0.0, 0.0, 0.0]), 0.6, 3.0, ((title, "https://x.slack.com/archives/C1/p1"),)
    )
    return ChannelProfile(
        5, [topic], ["<!here> Ada"], [("<@U1> Journal", 2)], None, "Ranking: the default blend.", [], []
    )


def test_a_members_words_for_a_topic_lose_their_markup() -> None:
    row = steer_row(profile(), "<!channel> <@U123> protein design", "mute", "m", "U9", encode)
    assert row is not None and row.label == "protein design" and row.action == "mute"
    assert abs(float(np.linalg.norm(row.direction)) - 1.0) < 1e-5
    assert steer_row(profile(), "<!channel>", "mute", "m", "U9", encode) is None, "nothing but markup"
    assert steer_row(profile(), "7", "boost", "m", "U9", encode) is None, "no seventh topic"


def test_a_topic_named_by_a_word_of_its_name_is_that_topic() -> None:
    row = steer_row(profile(), "parkin", "boost", "m", "U9", encode)
    assert row is not None and row.label == "mitophagy, parkin, pink1" and row.radius == 0.6
    assert row.direction == [1.0, 0.0, 0.0, 0.0]


def test_titles_and_names_in_the_profile_cannot_notify() -> None:
    shown = render_profile(profile(title="<!channel> Click <https://evil.example|here>"), "the local catalog")
    assert "<!channel>" not in shown and "<@U1>" not in shown and "<!here>" not in shown
    assert "evil.example|here" not in shown
    assert "<https://x.slack.com/archives/C1/p1|" in shown, "the example thread stays a link"


def test_topics_are_named_from_title_words_only() -> None:
    titles = ["<@U1> Mitophagy in <!here> neurons", "Mitophagy receptors in neurons", "Mitophagy and ageing"]
    name = distinctive_name(titles, ["Protein design with diffusion"])
    assert name.startswith("mitophagy") and "<" not in name and "!" not in name and "@" not in name


def test_a_title_carries_the_words_a_member_muted() -> None:
    from socialrag.recommender.retrieve.topics import titled_with

    title = "CRISPR interference screens reveal long noncoding RNAs essential for cell proliferation"
    assert titled_with(title, ["crispr", "screens"])
    assert titled_with("A CRISPR-Cas9 screen in neurons", ["crispr", "screens"]), "a word's start counts"
    assert not titled_with("Genome-wide screens for autophagy factors", ["crispr", "screens"]), "every word"
    assert not titled_with(title, []), "no words: nothing"


def test_a_topics_examples_show_what_its_name_says() -> None:
    """The demo's first topic, "answering, neural, question", was shown by a paper on text generation and one on
    coherence, its two most engaged: the examples are now the engaged papers titled with most of its words."""
    from socialrag.recommender.retrieve.topics import named_examples

    titles = [
        "Sentence-Level Content Planning and Style Specification for Neural Text Generation",
        "Multi-Task Learning for Coherence Modeling",
        "FEQA: A Question Answering Evaluation Framework for Faithfulness Assessment",
        "Multi-Task Learning for Conversational Question Answering over a Large-Scale Knowledge Base",
    ]
    assert named_examples("answering, neural, question", titles) == [2, 3]
    # no title carries a word of the name: the most engaged, as before
    assert named_examples("mixed papers", titles) == [0, 1]
