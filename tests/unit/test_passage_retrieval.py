"""The passages of a paper that answer a question (``retrieve/passages.py``), on the four real open-access papers of
``tests/data/fulltext/`` and the questions written by hand about them: the top passage holds the answer for nearly
every question, and a question the paper does not answer finds nothing rather than the nearest passage; by meaning
too when the passages have vectors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from socialrag.knowledge.fulltext import parse_fulltext, passages
from socialrag.recommender.explain.passage_answer import check_passage_answer, given
from socialrag.recommender.retrieve.passages import (
    MEANING_FROM,
    best_sentences,
    cosines_to,
    question_roots,
    score_passages,
    word_root,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "fulltext"


@dataclass(frozen=True)
class Stored:
    paper_id: int
    n: int
    section: str
    text: str


@cache
def paper(name: str) -> tuple[Stored, ...]:
    read = parse_fulltext((DATA / name).read_bytes(), "pdf" if name.endswith(".pdf") else "jats")
    return tuple(Stored(7, n, p.section, p.text) for n, p in enumerate(passages(read)))


def test_a_word_and_its_other_forms_share_a_root() -> None:
    assert {word_root(w) for w in ("evaluate", "evaluated", "evaluation", "evaluations", "evaluating")} == {"evalu"}
    assert word_root("tagged") == word_root("tags") == "tag" and word_root("scanning") == "scan"
    assert word_root("participants") == word_root("participated") and word_root("added") == "add"
    assert word_root("analysis") == "analysis" and word_root("bias") == "bias"
    assert question_roots("How many animals did they follow in the longitudinal study?") == [
        "animal",
        "follow",
        "longitudinal",
        "study",
    ]


def test_the_top_passage_holds_the_answer_and_a_question_the_paper_does_not_answer_finds_nothing() -> None:
    questions = json.loads((DATA / "questions.json").read_text())
    held, missed = 0, []
    for q in questions:
        found = score_passages(paper(q["paper"]), q["question"])
        if q["evidence"] is None:
            assert found == [], (q["question"], found[0].text[:200])
        elif found and q["evidence"] in found[0].text:
            held += 1
        else:
            missed.append(q["question"])
    answerable = sum(1 for q in questions if q["evidence"])
    assert held >= answerable - 2, missed
    best = score_passages(paper("pntd.0002065.nxml"), "Which cells were used for the virus neutralization test?")[0]
    assert best.section == "Materials and Methods › Laboratory tests" and best.coverage == 1.0
    assert set(best.words) == {"cell", "virus", "neutraliz", "test"}


def test_a_question_asking_how_many_prefers_the_passage_that_counts_it() -> None:
    found = score_passages(paper("pntd.0002065.nxml"), "How many animals did they follow in the longitudinal study?")
    assert "125 animals" in found[0].text


def test_a_passage_is_found_by_its_meaning_only_when_it_is_close() -> None:
    pieces = (Stored(1, 0, "3 Method", "We smooth the targets of the classifier."), Stored(1, 1, "4 Data", "Corpora."))
    question = "Where did they regularise the output distribution?"
    assert score_passages(pieces, question) == []
    near = np.array([1.0, 0.0], dtype=np.float32)
    vectors = {(1, 0): np.array([0.8, 0.6], dtype=np.float32), (1, 1): np.array([0.0, 1.0], dtype=np.float32)}
    (found,) = score_passages(pieces, question, meaning=cosines_to(near, pieces, vectors))
    assert found.n == 0 and found.meaning is not None and found.meaning >= MEANING_FROM and found.coverage == 0.0
    far = np.array([-0.6, 0.8], dtype=np.float32)
    assert [m.n for m in score_passages(pieces, question, meaning=cosines_to(far, pieces, vectors))] == [1]


def test_the_sentences_shown_are_those_holding_the_words() -> None:
    text = (
        "The study was approved. Eight young healthy subjects took part in it. They wore a glove. "
        "Each session lasted an hour and ended with a questionnaire about comfort and fatigue."
    )
    shown = best_sentences(text, ["subject"], limit=80)
    assert shown == "The study was approved. Eight young healthy subjects took part in it."
    assert best_sentences(text, ["nothing"], limit=30) == "The study was approved."
    assert best_sentences("x " * 400, ["x"], limit=50).endswith("…")


def test_an_answer_whose_quote_holds_no_word_of_the_passage_quotes_nothing() -> None:
    """A quote of punctuation ("- -", "...") is no quote: the claim around it ("kidney tissue") rests on nothing the
    passage says, and the answer is refused as one quoting nothing."""
    passage = given("2 Methods", "Virus was grown in Vero cells for 48 hours.")
    for quote in ("“- -”", "“...”", '"…, …"'):
        problems = check_passage_answer(f"They grew it in kidney tissue {quote}.", passage, [])
        assert problems == ["quotes nothing from the passage"], quote
    assert check_passage_answer("They grew it “- -” in “Vero cells”.", passage, []) == []
