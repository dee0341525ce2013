"""A question in a paper's thread answered from the paper's full text (issue 56), when PaperPing has read it: the
passages that best answer it (``retrieve.passages``), then, with an LLM, an answer quoting one of them and checked
against it (``explain.passage_answer``); without one, or when the check fails, the passage itself with its section;
and when no passage clears the retriever's threshold, that the paper's text does not say. Never a fact the paper's
text, title, abstract or thread does not hold.

Only the thread's own paper is read, and only in a channel and workspace that keep full text on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import psycopg

from socialrag import storage
from socialrag.recommender.explain.llm import BudgetSpent, LLMClient
from socialrag.recommender.explain.passage_answer import NOT_THERE, Asked, given, write_passage_answer
from socialrag.recommender.retrieve.passages import (
    PassageMatch,
    best_sentences,
    cosines_to,
    score_passages,
)
from socialrag.storage.fulltext import StoredPassage
from socialrag.text import as_data

QUOTE_LIMIT = 400  # characters of a passage shown in a reply
TEXT_SILENT = "the paper's text does not say"

Encode = Callable[[str], np.ndarray | None]


@dataclass(frozen=True)
class Quoted:
    """A passage as a reply shows it: its section's heading and its words (both as data, cut to length)."""

    section: str
    text: str


def find_passages(
    conn: psycopg.Connection, model: str, passages: Sequence[StoredPassage], question: str, encode: Encode | None
) -> list[PassageMatch]:
    """The paper's passages that answer the question, best first; by meaning too when they have vectors."""
    paper_ids = sorted({p.paper_id for p in passages})
    vectors = storage.fulltext.load_passage_vectors(conn, model, paper_ids) if encode is not None else {}
    asked = encode(as_data(question)[:500]) if vectors and encode is not None else None
    return score_passages(passages, question, meaning=cosines_to(asked, passages, vectors))


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def around(text: str, quote: str, limit: int = QUOTE_LIMIT) -> str:
    """The sentences of ``text`` that hold ``quote`` (compared as words), cut to ``limit``; ``text``'s start when
    none does."""
    plain = " ".join(quote.lower().split())
    sentences = [s for s in _SENTENCE.split(" ".join(text.split())) if s]
    held = [s for s in sentences if plain and plain[:40] in s.lower()]
    shown = held[0] if held else (sentences[0] if sentences else "")
    return shown if len(shown) <= limit else shown[: limit - 1].rsplit(" ", 1)[0] + "…"


def quoted_from(match: PassageMatch, quote: str | None = None) -> Quoted:
    text = as_data(match.text)
    shown = around(text, quote) if quote else best_sentences(text, match.words, QUOTE_LIMIT)
    return Quoted(as_data(match.section)[:120], shown)


@dataclass(frozen=True)
class TextAnswer:
    """What the paper's text gives: the checked written answer (None without), the passage shown, why there is
    no written answer (None when there is one), and the sentence of a cap on LLM calls that stopped it."""

    text: str | None
    quoted: Quoted | None
    why_not: str | None
    capped: str | None = None


def answer_from_text(
    found: Sequence[PassageMatch],
    question: str,
    title: str,
    abstract: str,
    thread: Sequence[str],
    llm: LLMClient | None,
) -> TextAnswer:
    """The answer from the passages ``found`` (best first): written and checked with ``llm``, else the best
    passage itself; ``TEXT_SILENT`` when none was found or the model finds none answers. A cap on LLM calls
    reached is said in ``capped``, with the best passage."""
    if not found:
        return TextAnswer(None, None, TEXT_SILENT)
    best = quoted_from(found[0])
    if llm is None:
        return TextAnswer(None, best, "no LLM is configured here")
    asked = Asked(question, title, abstract, tuple(thread), tuple(given(m.section, m.text) for m in found))
    try:
        result = write_passage_answer(llm, asked)
    except BudgetSpent as exc:
        return TextAnswer(None, best, "a cap on LLM calls was reached", exc.detail)
    if result == NOT_THERE:
        return TextAnswer(None, None, TEXT_SILENT)
    if isinstance(result, str):
        return TextAnswer(None, best, result)
    return TextAnswer(result.text, quoted_from(found[result.passage], result.quote), None)
