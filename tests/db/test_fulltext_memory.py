"""The group's memory finds a paper by what its body says (issue 56): "where did we read about label smoothing?" finds
the channel's paper whose full text discusses it, though its title and abstract never do, and the answer shows the
passage with its section; only among the channels asked about (another channel's paper, read too, stays out); a
passage's markup reaches neither the answer nor the model."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import numpy as np

from bot.views.memory_text import MARKDOWN, render_answer
from socialrag import storage
from socialrag.db import Database
from socialrag.recommender import MemoryAnswer, ask_memory
from socialrag.recommender.explain.llm import LLMClient
from tests.support.labbase import CachedEmbedder
from tests.support.openai_standin import OpenAIStandIn
from tests.support.read_papers import REAL, save_read, share_paper, share_read

T = "T0LAB"
AT = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)
NOW = AT + timedelta(days=3)
SMOOTHING = (
    ("1 Introduction", "Sequence models are trained with cross-entropy on parallel data."),
    ("4.2 Training details", "We apply label smoothing of 0.1 to the targets <!here> and train for 40 epochs."),
)


def ts(k: int) -> str:
    return f"{(AT + timedelta(minutes=k)).timestamp():.6f}"


def build(db: Database) -> dict[str, int]:
    """C1 shared the four real papers and a translation paper whose body (only) speaks of label smoothing; C2, in
    the same workspace, shared a paper whose body speaks of dropout schedules."""
    with db.connection() as conn:
        ids = {key: share_read(conn, (T, "C1"), ts(k), AT, key, abstract="A study.") for k, key in enumerate(REAL)}
        ids["mt"] = share_paper(conn, (T, "C1"), ts(10), AT, "10.1/mt", "Faster translation models", "We translate.")
        save_read(conn, ids["mt"], SMOOTHING)
        ids["other"] = share_paper(conn, (T, "C2"), ts(11), AT, "10.1/c2", "A private paper", "About nets.")
        save_read(conn, ids["other"], [("3 Method", "Dropout schedules that anneal the rate per layer.")])
    return ids


def ask(
    db: Database,
    question: str,
    channels: tuple[str, ...] = ("C1",),
    llm: LLMClient | None = None,
    until: float | None = None,
) -> MemoryAnswer:
    embedder = CachedEmbedder()

    def encode(text: str) -> np.ndarray:
        return np.asarray(embedder.encode([text])[0])

    with db.connection() as conn:
        return ask_memory(conn, "all-MiniLM-L6-v2", encode, T, list(channels), "U1", question, llm, NOW, until=until)


def test_a_paper_is_found_by_what_its_body_says_with_the_passage(db: Database) -> None:
    ids = build(db)
    answer = ask(db, "Where did we read about label smoothing?")
    first = answer.items[0]
    assert first.paper_id == ids["mt"] and first.passage is not None
    assert first.passage.section == "4.2 Training details" and "label smoothing of 0.1" in first.passage.text
    shown = render_answer(answer, {"C1": "reading"})
    assert "> From *4.2 Training details*: “We apply label smoothing of 0.1 to the targets and train" in shown
    assert "<!here>" not in shown and "<!here>" not in render_answer(answer, {"C1": "reading"}, MARKDOWN)
    vero = ask(db, "Which papers used Vero cells for neutralization tests?")
    assert vero.items[0].paper_id == ids["rvf"] and vero.items[0].passage is not None
    assert "Vero cells" in vero.items[0].passage.text
    # a paper that only another channel shared is not found from this one, whatever its body says
    assert all(i.paper_id != ids["other"] for i in ask(db, "What did we read about dropout schedules?").items)
    assert ask(db, "What did we read about dropout schedules?", ("C2",)).items[0].paper_id == ids["other"]
    # a channel that turned full text off: found by record and thread alone
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", fulltext=False)
    assert all(
        i.passage is None and i.paper_id != ids["mt"] for i in ask(db, "Where did we read about label smoothing?").items
    )


def test_the_written_answer_reads_the_passage_as_data(db: Database) -> None:
    build(db)
    model = OpenAIStandIn(lambda prompt: "The group read about it in [1], which applies label smoothing of 0.1.")
    llm = LLMClient(model="m", base_url=model.base_url, api_key="k", timeout=10)
    try:
        answer = ask(db, "Where did we read about label smoothing?", llm=llm)
    finally:
        llm.close()
        model.stop()
    assert answer.text == "The group read about it in [1], which applies label smoothing of 0.1.", answer.note
    prompt = model.prompts[-1]
    assert "In its full text: (4.2 Training details) We apply label smoothing of 0.1" in prompt
    assert "<!here>" not in prompt


def test_bodies_are_read_only_while_the_answer_has_time_to_read(db: Database) -> None:
    """The Messages tab's answer has 25 s: once reading channels has taken its share, the papers' bodies are not
    searched (the records and threads still are), so body search never eats the writing's time."""
    ids = build(db)
    late = ask(db, "Where did we read about label smoothing?", ("C1", "C2"), until=time.monotonic() - 1)
    assert late.unsearched == 1 and all(i.passage is None and i.paper_id != ids["mt"] for i in late.items)
    on_time = ask(db, "Where did we read about label smoothing?", ("C1", "C2"), until=time.monotonic() + 600)
    assert on_time.items[0].paper_id == ids["mt"] and on_time.items[0].passage is not None
