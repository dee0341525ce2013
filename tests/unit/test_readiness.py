"""What members are told about a channel's index, and the rules of waiting and retrying around it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.commands import UsageError, parse_command
from bot.delivery.joining import history_note
from socialrag.config import Settings
from socialrag.errors import ConfigError
from socialrag.knowledge.papers.arxiv import normalize_arxiv_category
from socialrag.knowledge.readiness import READY_SHARES, assess, describe_empty, describe_index, enough_to_post
from socialrag.recommender.retrieve.candidates import search_words
from socialrag.recommender.serve.schedule import INDEX_WAIT_LIMIT, empty_retry_wait, index_wait
from socialrag.storage.queue import IndexProgress

NOW = datetime(2026, 11, 23, 10, tzinfo=UTC)


def progress(stored: int = 120, looked_up: int = 80, embedded: int = 86, waiting: int = 34, given_up: int = 0):  # type: ignore[no-untyped-def]
    return IndexProgress(stored, looked_up, embedded, waiting, given_up, max(0, stored - embedded - given_up))


def test_now_says_what_will_happen() -> None:
    few = progress(embedded=12)
    indexing = assess(few, reading_history=False, focused=False, named_terms=False)
    assert indexing.kind == "indexing"
    assert indexing.sentence == "Indexing 12 of 120 papers shared here; the post follows when it is done."
    reading = assess(few, reading_history=True, focused=False, named_terms=False)
    assert reading.kind == "indexing" and "still reading" in reading.sentence
    # the newest papers read are enough to start from: the rest of the history is read in the background
    early = assess(progress(), reading_history=True, focused=False, named_terms=False)
    assert early.kind == "ready" and "newest 86 papers" in early.sentence and "keep reading" in early.sentence
    empty = IndexProgress(0, 0, 0, 0, 0, 0)
    none = assess(empty, reading_history=False, focused=False, named_terms=False)
    assert none.kind == "none"
    assert "`/paperping focus ...`" in none.sentence and "`/paperping sources ...`" in none.sentence
    assert assess(empty, reading_history=False, focused=True, named_terms=False).kind == "ready"
    assert assess(empty, reading_history=False, focused=False, named_terms=True).kind == "ready"
    done = IndexProgress(120, 118, 120, 0, 2, 0)
    assert assess(done, reading_history=False, focused=False, named_terms=False).kind == "ready"
    small = IndexProgress(6, 6, 6, 0, 0, 0)  # a small channel, all of it indexed, is ready with six
    assert assess(small, reading_history=False, focused=False, named_terms=False).kind == "ready"
    assert enough_to_post(progress(embedded=READY_SHARES), reading_history=True)
    assert not enough_to_post(progress(embedded=READY_SHARES - 1), reading_history=True)


def test_the_index_and_an_empty_slot_are_described() -> None:
    line = describe_index(IndexProgress(120, 118, 120, 0, 2, 0))
    assert line.startswith("Index: 120 papers shared here; 118 looked up, 120 embedded, 2 given up")
    assert "waiting" not in line
    assert "34 waiting" in describe_index(progress())
    assert describe_index(IndexProgress(0, 0, 0, 0, 0, 0)) == "Index: no paper shared here yet."
    assert describe_empty(None, NOW, NOW) is None
    said = describe_empty("no candidate yet", NOW, NOW + timedelta(hours=1))
    assert said == "The last slot at Mon 23 Nov 10:00 UTC posted nothing: no candidate yet; trying again Mon 11:00 UTC."


def test_empty_slots_are_retried_within_hours_and_waits_are_bounded() -> None:
    waits = [empty_retry_wait(n) for n in range(1, 8)]
    assert waits[:4] == [timedelta(minutes=m) for m in (30, 60, 120, 240)]
    assert max(waits) == timedelta(hours=6), "never days"
    slot = NOW
    assert index_wait(NOW, slot, indexing=False) is None
    again = index_wait(NOW, slot, indexing=True)
    assert again is not None and NOW < again <= NOW + timedelta(seconds=15)
    assert index_wait(slot + INDEX_WAIT_LIMIT, slot, indexing=True) is None, "a slow source never holds a post long"


def test_sources_are_parsed_with_categories() -> None:
    none = ("--biorxiv", "--medrxiv")
    assert parse_command("sources").args == ()
    assert parse_command("sources arxiv cs.cl CS.LG").args == ("arxiv", "--", "cs.CL", "cs.LG", *none)
    assert parse_command("sources s2 catalog").args == ("catalog", "semanticscholar", "--", *none)
    assert parse_command("sources semanticscholar hep-th").args == ("semanticscholar", "arxiv", "--", "hep-th", *none)
    everything = ("catalog", "semanticscholar", "arxiv", "openalex", "biorxiv", "medrxiv", "pubmed")
    assert parse_command("sources all").args == (*everything, "--", *none)
    for bad in ("sources google", "sources <@U123>"):
        with pytest.raises(UsageError, match="neither a source nor an arXiv category"):
            parse_command(bad)
    with pytest.raises(UsageError, match=r"`hello` is not an arXiv category.*archives: astro-ph, cond-mat, cs,"):
        parse_command("sources arxiv hello")
    for bad in ("sources arxiv cs.<!channel>", "sources arxiv cs.FOO", "sources arxiv cs"):
        with pytest.raises(UsageError, match=r"not an arXiv category.* cs\.AI, cs\.AR, .*cs\.CL, "):
            parse_command(bad)


def test_sources_of_every_field_are_parsed_with_their_terms() -> None:
    parsed = parse_command(
        "sources openalex biorxiv Cell-Biology neuroscience medrxiv epidemiology pubmed mitophagy AND parkin"
    )
    assert parsed.args == (
        "openalex", "biorxiv", "medrxiv", "pubmed", "--", "--biorxiv", "cell_biology", "neuroscience",
        "--medrxiv", "epidemiology",
    )  # fmt: skip
    assert parsed.text == "mitophagy AND parkin"
    with pytest.raises(UsageError, match=r"not a biorxiv category.*cell_biology"):
        parse_command("sources biorxiv cellbio")
    with pytest.raises(UsageError, match="not a medrxiv category"):
        parse_command("sources medrxiv <!here>")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("cs.CL", "cs.CL"),
        ("cs.cl", "cs.CL"),
        ("stat.ML", "stat.ML"),
        ("q-bio.NC", "q-bio.NC"),
        ("hep-th", "hep-th"),
        ("physics.comp-ph", "physics.comp-ph"),
        ("cond-mat.stat-mech", "cond-mat.stat-mech"),
        ("Q-BIO.gn", "q-bio.GN"),
        ("physics.COMP-PH", "physics.comp-ph"),
        ("cs.FOO", None),
        ("cs", None),
        ("hello", None),
        ("retrieval-augmented", None),
        ("cs.", None),
        ("nlp", None),
        ("cs.<script>", None),
    ],
)
def test_arxiv_categories(word: str, expected: str | None) -> None:
    assert normalize_arxiv_category(word) == expected


def test_focus_words_drop_links_and_markup() -> None:
    text = "retrieval-augmented generation <https://arxiv.org/abs/2005.11401|RAG> <!channel> <@U1> for QA!"
    assert search_words(text) == ["retrieval-augmented", "generation", "for", "QA"]
    assert len(search_words("word " * 1000)) == 12


def test_the_note_after_reading_history_asks_for_a_focus_when_there_is_little() -> None:
    little = history_note(2, datetime(2026, 9, 1, tzinfo=UTC))
    assert "2 papers shared here since 01 Sep 2026" in little
    assert "90 days" in little and "`/paperping focus`" in little and "`/paperping sources arxiv cs.CL`" in little
    plenty = history_note(40, datetime(2025, 3, 1, tzinfo=UTC))
    assert "40 papers" in plenty and "focus" not in plenty
    assert "1 paper shared here." in history_note(1, None)


def test_embed_device_setting() -> None:
    assert Settings.from_env({}).embed_device == "auto"
    assert Settings.from_env({"PAPERPING_EMBED_DEVICE": "CUDA:1"}).embed_device == "cuda:1"
    with pytest.raises(ConfigError, match="PAPERPING_EMBED_DEVICE"):
        Settings.from_env({"PAPERPING_EMBED_DEVICE": "tpu"})


def test_an_empty_recommendation_says_why() -> None:
    from datetime import UTC, datetime

    import numpy as np

    from socialrag.recommender.retrieve.context import ChannelContext
    from socialrag.recommender.serve.pipeline import explain_empty

    ctx = ChannelContext("T", "C", datetime(2026, 11, 23, tzinfo=UTC), {}, {}, {}, {}, {}, model="m")
    assert explain_empty(ctx, [], 0, False).startswith("no candidate source can be reached")
    assert explain_empty(ctx, ["catalog"], 0, False).startswith("no candidate yet: nothing has been shared here")
    assert "were all shared here before" in explain_empty(ctx, ["catalog"], 12, False)
    ctx.vectors[-1] = np.ones(3, dtype=np.float32)
    said = explain_empty(ctx, ["catalog", "semanticscholar"], 0, True)
    assert said.startswith("no candidate: catalog, semanticscholar found no new paper")


def test_lookups_that_only_enrich_a_usable_paper_never_hold_a_post() -> None:
    """Semantic Scholar failing: the seventeen papers wait for a lookup, but the catalog gave each a vector. The
    answer was "Indexing 0 of 17 papers" and the slot waited up to 30 minutes; a post now waits only for papers
    with no vector."""
    failing = IndexProgress(17, 0, 17, 17, 0, 0)
    assert enough_to_post(failing, reading_history=False)
    assert assess(failing, reading_history=False, focused=False, named_terms=False).kind == "ready"
    half = IndexProgress(17, 0, 9, 17, 0, 8)
    assert not enough_to_post(half, reading_history=False)
    said = assess(half, reading_history=False, focused=False, named_terms=False).sentence
    assert said == "Indexing 9 of 17 papers shared here; the post follows when it is done."
