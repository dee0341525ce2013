"""Step 3 for a member's question about the channel's history: a short written answer from the retrieved items
only (``prompts/ask.v1.md``), checked before it leaves like a post is: no mention, no link, no number the items
do not hold, and no paper but the retrieved ones (named by their number, ``[2]``). Pure apart from the LLM call."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from socialrag.errors import PermanentError, SourceError
from socialrag.recommender.explain.llm import NO_ANSWER, BudgetSpent, LLMClient
from socialrag.recommender.explain.prompts import load_prompt
from socialrag.recommender.explain.verify import Allowed, check_text, loud_in, numbers_in
from socialrag.text import as_data

log = logging.getLogger(__name__)

ANSWER_LIMIT = 500  # characters of the written answer
ABSTRACT_SHOWN = 600  # characters of an abstract given to the model
PASSAGE_SHOWN = 500  # of a passage of its full text
NOT_THERE = "NOT IN THE CHANNEL"
_REFERENCE = re.compile(r"\[(\d+)\]")
# a title the answer quotes: in double quotes or guillemets, or in single quotes that open and close at a word's
# edge (an apostrophe inside a word, "Ben's" or "it's", quotes nothing)
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{12,})[\"“”«»]|(?<!\w)['‘’]([^\n'‘’]{12,})['‘’](?!\w)")


@dataclass(frozen=True)
class ItemText:
    """What the model may read of one retrieved item (all of it others' words, given as data)."""

    title: str
    shared_by: str | None  # a member's display name; None for PaperPing's own post
    shared_at: datetime
    reception: str  # "3 replies, 2 reactions, 1 save"
    abstract: str | None
    thread: tuple[str, ...]  # "name: what they said", the first few replies
    by_paperping: bool = False  # PaperPing posted it (a member's share whose name is withheld has neither)
    passage: str | None = None  # "(its section) what its full text says" that matched the question


def render_items(items: Sequence[ItemText]) -> str:
    """The numbered items as the prompt gives them."""
    lines = []
    for n, item in enumerate(items, start=1):
        who = (
            f"shared by {as_data(item.shared_by)}"  # a display name is its member's to choose: data too
            if item.shared_by
            else ("posted by PaperPing" if item.by_paperping else "shared by a member")
        )
        lines.append(f"[{n}] {as_data(item.title)} ({who} on {item.shared_at:%d %b %Y}; {item.reception})")
        if item.abstract:
            lines.append(f"    Abstract: {as_data(item.abstract)[:ABSTRACT_SHOWN]}")
        lines += [f"    In the thread: {as_data(t)[:300]}" for t in item.thread]
        if item.passage:
            lines.append(f"    In its full text: {as_data(item.passage)[:PASSAGE_SHOWN]}")
    return "\n".join(lines)


def allowed_for(items: Sequence[ItemText]) -> Allowed:
    """What an answer about these items may state: their members' names (in plain text), and the numbers their
    dates, counts, titles, abstracts, passages and threads hold. No link at all: the answer's links are PaperPing's
    own."""
    allowed = Allowed()
    for n, item in enumerate(items, start=1):
        allowed.numbers |= {str(n)} | numbers_in(item.title) | numbers_in(item.abstract) | numbers_in(item.reception)
        allowed.numbers |= numbers_in(as_data(item.passage)[:PASSAGE_SHOWN] if item.passage else None)
        allowed.numbers |= numbers_in(f"{item.shared_at:%d %b %Y}") | {str(item.shared_at.year)}
        for line in item.thread:
            allowed.numbers |= numbers_in(line)
            allowed.loud |= loud_in(line)
        for text in (item.title, item.abstract, item.passage):
            allowed.loud |= loud_in(text)
        if item.shared_by:
            allowed.member_names |= {item.shared_by, as_data(item.shared_by)}
    return allowed


def unknown_papers(text: str, items: Sequence[ItemText], other_titles: Sequence[str]) -> list[str]:
    """Every way the answer names a paper that was not retrieved: a number past the items, a quoted title that
    is none of theirs, or the title of another of the channel's papers."""
    problems = [f"refers to item [{n}], which does not exist" for n in map(int, _REFERENCE.findall(text))
                if not 1 <= n <= len(items)]  # fmt: skip
    titles = [" ".join(i.title.lower().split()) for i in items]
    for double, single in _QUOTED.findall(text):
        quoted = double or single
        said = " ".join(quoted.lower().split())
        if not any(said in t or t in said for t in titles):
            problems.append(f"names a paper that was not retrieved: {quoted[:80]!r}")
    lowered = " ".join(text.lower().split())
    for title in other_titles:
        key = " ".join(title.lower().split())
        if len(key) >= 20 and key in lowered and key not in titles:
            problems.append(f"names another of the channel's papers: {title[:80]!r}")
    return problems


def write_answer(
    llm: LLMClient, question: str, items: Sequence[ItemText], other_titles: Sequence[str]
) -> tuple[str | None, str | None]:
    """(the written answer, None), or (None, why there is none): the model said the items do not answer, every
    try failed the check, the LLM failed, or a cap on LLM calls was reached."""
    prompt = load_prompt("ask")
    values = {"question": as_data(question)[:500], "items": render_items(items), "limit": ANSWER_LIMIT}
    allowed = allowed_for(items)
    why = "the written answer could not be checked"
    for attempt in (1, 2):
        try:
            text = llm.complete(prompt, prompt.render(**values)).strip()
        except BudgetSpent as exc:
            return None, exc.detail
        except SourceError as exc:  # the member reads a fixed sentence; what the server said is for the log
            why = NO_ANSWER
            log.warning("memory answer, attempt %d: the language model failed: %s", attempt, exc)
            if isinstance(exc, PermanentError):  # refused: the same request would be refused again
                break
            continue
        if text.upper().strip(". ") == NOT_THERE:
            return None, "the items found do not answer it in so many words"
        invented = unknown_papers(text, items, other_titles)
        problems = check_text(text, allowed, limit=ANSWER_LIMIT) + invented
        if not problems:
            return text, None
        # the member reads why in general words: the model's own text is not shown, even to say what was wrong
        why = "the written answer " + ("named a paper I did not find" if invented else "said what the papers do not")
        log.warning("memory answer, attempt %d failed the check: %s", attempt, "; ".join(problems[:3]))
    return None, why
