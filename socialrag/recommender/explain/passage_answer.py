"""Step 3 for a question in a paper's thread answered from its full text: the LLM is given the best passages
(``prompts/answer.v2.md``) and answers from one of them, quoting it; the answer leaves only when every number, name
and quoted phrase in it is in that passage's text (or the paper's title and abstract, or the thread), and it
mentions, links and notifies no one (``verify.check_text``). Pure apart from the LLM call.

Passages, titles and threads are others' words: they reach the prompt as data (``as_data``: no markup, no fence) and
are cut to a length, so that a passage can neither notify anyone nor close the prompt's data.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from socialrag.errors import PermanentError, SourceError
from socialrag.recommender.explain.llm import NO_ANSWER, BudgetSpent, LLMClient, OutOfTime
from socialrag.recommender.explain.prompts import load_prompt
from socialrag.recommender.explain.verify import Allowed, check_text, loud_in, names_in, numbers_in, plain_words
from socialrag.text import as_data

log = logging.getLogger(__name__)

ANSWER_LIMIT = 600  # characters of the written answer
PASSAGE_CHARS = 1200  # of each passage given to the model (a stored passage is at most this long)
SECTION_CHARS = 120
NOT_THERE = "NOT IN THE PAPER"

_CHOSEN = re.compile(r"^\s*\[(\d)\]\s*")
# a quoted phrase: in curly or straight double quotes (an apostrophe inside a word quotes nothing)
_QUOTED = re.compile(r"[“\"]([^“”\"\n]{2,})[”\"]")
_ELLIPSIS = re.compile(r"…|\.\.\.")


@dataclass(frozen=True)
class GivenPassage:
    """A passage as the model reads it: its section and words, as data."""

    section: str
    text: str


@dataclass(frozen=True)
class PassageAnswer:
    """A checked answer: its text (the passage's number taken off), which passage it rests on (from 0), and the
    phrase it quotes from it."""

    text: str
    passage: int
    quote: str


def given(section: str, text: str) -> GivenPassage:
    """A stored passage as the prompt and the reply may show it: markup dropped, cut to length."""
    return GivenPassage(as_data(section)[:SECTION_CHARS], as_data(text)[:PASSAGE_CHARS])


def render_passages(passages: Sequence[GivenPassage]) -> str:
    return "\n".join(f"[{k}] ({p.section or 'before the first heading'}) {p.text}" for k, p in enumerate(passages, 1))


def check_passage_answer(text: str, passage: GivenPassage, sources: Sequence[str]) -> list[str]:
    """Every reason the answer may not be posted: what ``check_text`` finds (a mention, a link, markup, a number
    from nowhere, over ``ANSWER_LIMIT``), no quote, a quoted phrase the passage does not hold word for word, and a
    number or a name that neither the passage nor ``sources`` (the title, the abstract, the thread) holds."""
    held = " ".join([passage.text, passage.section, *sources])
    problems = check_text(text, Allowed(numbers=numbers_in(held), loud=loud_in(held)), limit=ANSWER_LIMIT)
    quotes = [q.strip() for q in _QUOTED.findall(text)]
    body = plain_words(passage.text)
    if not any(plain_words(_ELLIPSIS.sub(" ", q)) for q in quotes):  # “...” or “- -” quotes no word of it
        problems.append("quotes nothing from the passage")
    for quote in quotes:
        if not all(plain_words(part) in body for part in _ELLIPSIS.split(quote) if plain_words(part)):
            problems.append(f"quotes what the passage does not say: {quote[:60]!r}")
    words = set(plain_words(held).split())
    for name in names_in(text):
        if not set(plain_words(name).split()) <= words:
            problems.append(f"names what the passage does not: {name}")
    return problems


def parse_answer(raw: str, count: int) -> tuple[int, str] | None:
    """(the passage chosen, from 0, the answer without its number), or None when it names no passage given."""
    m = _CHOSEN.match(raw)
    if m is None or not 1 <= int(m.group(1)) <= count:
        return None
    return int(m.group(1)) - 1, raw[m.end() :].strip()


@dataclass(frozen=True)
class Asked:
    """What the model is asked from: the question, the paper's title and abstract, the thread so far (as data),
    and the passages."""

    question: str
    title: str
    abstract: str
    thread: tuple[str, ...]
    passages: tuple[GivenPassage, ...]


def write_passage_answer(llm: LLMClient, asked: Asked) -> PassageAnswer | str:
    """The checked answer, or why there is none: the model found no passage answering (``NOT_THERE``), every try
    failed the check, the LLM failed, the answer's time ran out; a cap on LLM calls reached raises
    ``BudgetSpent``."""
    prompt = load_prompt("answer", 2)
    values = {
        "title": asked.title,
        "abstract": asked.abstract or "(not known)",
        "passages": render_passages(asked.passages),
        "thread": "\n".join(f"- {t}" for t in asked.thread[-20:]) or "(no replies yet)",
        "question": as_data(asked.question)[:500],
        "limit": ANSWER_LIMIT,
    }
    sources = [asked.title, asked.abstract, *asked.thread]
    why = "the answer could not be checked against the paper's text"
    for attempt in (1, 2):
        try:
            raw = llm.complete(prompt, prompt.render(**values)).strip()
        except OutOfTime as exc:  # the answer's time is spent: no further try, and why the last one failed
            return why if attempt > 1 else exc.detail
        except BudgetSpent:
            raise
        except SourceError as exc:  # what the server said is for the log, never for the thread
            why = NO_ANSWER
            log.warning("passage answer, attempt %d: the language model failed: %s", attempt, exc)
            if isinstance(exc, PermanentError):  # refused: the same request would be refused again
                break
            continue
        if raw.upper().strip(". ") == NOT_THERE:
            return NOT_THERE
        parsed = parse_answer(raw, len(asked.passages))
        if parsed is None:
            why = "the answer named no passage it rests on"
            log.warning("passage answer, attempt %d: %s", attempt, why)
            continue
        k, text = parsed
        problems = check_passage_answer(text, asked.passages[k], sources)
        if not problems:
            quote = next(q.strip() for q in _QUOTED.findall(text) if plain_words(_ELLIPSIS.sub(" ", q)))
            return PassageAnswer(text, k, quote)
        why = "the answer said what the paper's text does not"
        log.warning("passage answer, attempt %d failed the check: %s", attempt, "; ".join(problems[:3]))
    return why
