"""Step 2 inside a paper: the passages of a paper's full text that best answer a question, by its words (the
memory's keyword score, ``keywords.py``, with the passages standing for papers) and, when the passages have
vectors of the service's model, by their meaning. Pure: the passages and vectors come from ``storage``, and only
those of the papers the caller passes (the asking channel's own).

A passage answers when it holds most of the question's distinctive words (``COVERAGE_FROM``, weighed by how rare
each word is among the passages searched), or when its meaning is close to the question's (``MEANING_FROM``); when
none does, the paper's text is said not to answer, rather than the nearest passage shown as if it did.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from socialrag.recommender.retrieve.keywords import (
    TermCounts,
    keyword_coverage,
    keyword_scores,
    singular,
    topic_words,
    word_forms,
)


class PassageText(Protocol):
    """A stored passage as the retriever reads it (``storage.fulltext.StoredPassage``)."""

    @property
    def paper_id(self) -> int: ...
    @property
    def n(self) -> int: ...
    @property
    def section(self) -> str: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class PassageMatch:
    """A passage found for a question: where it is, what it says, and how well it matches."""

    paper_id: int
    n: int
    section: str
    text: str
    score: float  # the words' score scaled to the best passage's, plus the meaning's
    coverage: float  # the share of the question's distinctive words it holds, 0 to 1
    meaning: float | None = None  # cosine of its vector to the question's, when both are known
    words: tuple[str, ...] = ()  # the question's words it holds, as the score compared them


COVERAGE_FROM = 0.5  # a passage holding less of the question's words (by rarity) does not answer it by its words
MEANING_FROM = 0.55  # nor one whose meaning is further from the question's than this cosine
MEANING_WEIGHT = 0.5  # the meaning's weight beside the words' (each scaled to the best passage's first)

# The words a question about a paper's body uses for what the passage says otherwise: "how big is the model?" is
# answered by its parameters, "which datasets?" by a corpus or a benchmark, "how often?" by an interval. Only
# words any paper's reader would take for the same; each read as ``word_root`` reads it.
_SAYS_ALSO = {
    "big": ("size", "parameters", "layers", "million", "billion"),
    "large": ("size", "parameters", "layers", "million", "billion"),
    "size": ("parameters", "number"),
    "dataset": ("data", "corpus", "corpora", "benchmark"),
    "data": ("dataset", "corpus", "corpora"),
    "evaluate": ("benchmark", "metric", "test"),
    "participants": ("subjects", "patients", "volunteers", "respondents"),
    "subjects": ("participants", "patients", "volunteers"),
    "code": ("github", "software", "implementation"),
    "licence": ("license",),
    "approved": ("ethics", "consent", "board", "committee"),
    "often": ("interval", "every", "frequency", "daily", "weekly", "monthly"),
    "extra": ("additional", "additionally", "further"),
    "kept": ("retained", "keep", "maintained"),
    "give": ("gave", "yielded", "resulted"),
    "wavelength": ("nm",),
}
# the frame of a question about a paper's methods ("which datasets do they *evaluate* on?"): when the paper's text
# never says it, the question's other words decide alone (a word the text never says otherwise counts against it)
_FRAME = frozenset({"evaluate", "evaluation", "use", "train", "test", "measure", "perform", "report", "apply", "run",
                    "conduct", "employ", "experiment", "assess", "study", "work", "describe"})  # fmt: skip
# words of a question about one paper that name nothing in it ("how many", "how much", "did they")
_ASKING_HERE = frozenset({"many", "much", "exactly", "main", "kind", "type", "sort", "way", "really"})
# a question asking for a quantity: a passage with a number beside one of its words answers it more surely
_QUANTITY = re.compile(
    r"\bhow (?:many|much|big|large|long|often|old)\b|\bwhat (?:size|number|percentage|concentration|dose|amount)\b"
)
QUANTITY_BONUS = 0.3

_SUFFIXES = ("ational", "ations", "ation", "ating", "ated", "ates", "ate", "ings", "ing", "ions", "ion", "ants", "ant",
             "ed", "e")  # fmt: skip
_DOUBLED = re.compile(r"([b-df-hj-km-np-tv-z])\1$")  # "tagg" (tagged), "scann" (scanning): one letter, as "tag"


def word_root(word: str) -> str:
    """A word without a plural's s and a common ending of English (evaluate, evaluated, evaluation: "evalu";
    tagged: "tag"), so that a question's word finds the passage's other form of it; a short word stays as it is."""
    root = singular(word)
    for suffix in _SUFFIXES:
        if root.endswith(suffix) and len(root) - len(suffix) >= 3:
            root = root[: -len(suffix)]
            if _DOUBLED.search(root) and not root.endswith(("ll", "ss", "zz")) and len(root) > 3:
                root = root[:-1]
            break
    while singular(root) != root:  # the coverage reads each term through ``singular``: it must be a fixed point
        root = singular(root)
    return root


_ALSO = {word_root(k): frozenset(word_root(w) for w in v) for k, v in _SAYS_ALSO.items()}
_FRAME_ROOTS = frozenset(word_root(w) for w in _FRAME)


def question_roots(question: str) -> list[str]:
    """The question's words that name what it asks about, as roots (``word_root``)."""
    words = [w for w in topic_words(question) if w not in _ASKING_HERE]
    return list(dict.fromkeys(word_root(w) for w in words))


def _roots(text: str) -> list[str]:
    return [word_root(w) for w in word_forms(text)]


def passage_counts(passages: Sequence[PassageText], roots: Sequence[str]) -> TermCounts:
    """The keyword score's counts with each passage standing for a paper (its place in ``passages``): how often it
    holds each of the question's ``roots`` (or a word that says the same, ``_ALSO``), in its section's heading and
    in its text, and its length in words."""
    wanted = {root: {root, *_ALSO.get(root, ())} for root in roots}
    counts: dict[int, dict[str, tuple[int, int]]] = {}
    lengths: dict[int, int] = {}
    for i, passage in enumerate(passages):
        heading, text = _roots(passage.section), _roots(passage.text)
        lengths[i] = len(text)
        found = {}
        for root, forms in wanted.items():
            said = (sum(1 for w in heading if w in forms), sum(1 for w in text if w in forms))
            if said != (0, 0):
                found[root] = said
        if found:
            counts[i] = found
    held = [lengths[i] for i in counts]
    mean = sum(held) / len(held) if held else 0.0
    return TermCounts(counts, {i: lengths[i] for i in counts}, mean, {}, len(passages))


def cosines_to(
    question: np.ndarray | None, passages: Sequence[PassageText], vectors: Mapping[tuple[int, int], np.ndarray]
) -> dict[tuple[int, int], float]:
    """(paper id, n) -> the cosine of each passage's vector (where ``vectors`` has one) to the question's."""
    if question is None or not vectors:
        return {}
    norm = float(np.linalg.norm(question)) or 1.0
    out = {}
    for p in passages:
        v = vectors.get((p.paper_id, p.n))
        if v is not None:
            out[(p.paper_id, p.n)] = float(np.dot(v, question) / ((float(np.linalg.norm(v)) or 1.0) * norm))
    return out


def score_passages(
    passages: Sequence[PassageText],
    question: str,
    *,
    meaning: Mapping[tuple[int, int], float] | None = None,
    among: int | None = None,
    most: int = 3,
) -> list[PassageMatch]:
    """The passages that answer ``question``, best first (at most ``most``): by the question's words, their rarity
    counted among ``among`` passages (those given when None), and by ``meaning`` ((paper id, n) -> the cosine of the
    passage's vector to the question's, ``cosines_to``) where it is known. Empty when none clears ``COVERAGE_FROM``
    or ``MEANING_FROM``."""
    roots = question_roots(question)
    counts = passage_counts(passages, roots)
    said = {w for words in counts.counts.values() for w in words}
    framing = [r for r in roots if r in _FRAME_ROOTS and r not in said]
    if framing and len(framing) < len(roots):
        roots = [r for r in roots if r not in framing]
    if among is not None:
        counts = replace(counts, papers=max(among, len(passages)))
    words = _scaled(counts)
    close_to = meaning or {}
    quantity = bool(_QUANTITY.search(" ".join(question.lower().split())))
    found = []
    for i, passage in enumerate(passages):
        held = tuple(counts.counts.get(i, {}))
        coverage = _coverage(counts, roots, i)
        close = close_to.get((passage.paper_id, passage.n))
        if coverage < COVERAGE_FROM and (close is None or close < MEANING_FROM):
            continue
        score = words.get(i, 0.0) + MEANING_WEIGHT * max(close or 0.0, 0.0)
        if quantity and _counted(passage.text, held):
            score += QUANTITY_BONUS
        found.append(
            PassageMatch(passage.paper_id, passage.n, passage.section, passage.text, score, coverage, close, held)
        )
    found.sort(key=lambda m: (-m.score, -m.coverage, m.paper_id, m.n))
    return found[:most]


_NUMBERED = re.compile(r"(?<![\w.])\d[\d,.]*%?\s+([A-Za-z][\w-]*)")


def _counted(text: str, roots: Sequence[str]) -> bool:
    """Whether a number stands right before one of the question's words in the text ("125 animals", "1440
    stimulation patterns"): a count of what the question asks about."""
    wanted = set(roots)
    return any(word_root(m.group(1).lower()) in wanted for m in _NUMBERED.finditer(text))


def _scaled(counts: TermCounts) -> dict[int, float]:
    scores = keyword_scores(counts)
    top = max(scores.values(), default=0.0)
    return {i: s / top for i, s in scores.items()} if top > 0 else {}


def _coverage(counts: TermCounts, roots: Sequence[str], i: int) -> float:
    """How much of the question's words passage ``i`` holds, weighed by their rarity among the passages."""
    if i not in counts.counts:
        return 0.0
    return keyword_coverage(counts, roots, {i: 1.0})


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def best_sentences(text: str, words: Iterable[str], limit: int = 400) -> str:
    """The sentences of a passage that hold the question's words (roots), with the one before a lone match when
    there is room; the passage's start when none does. Cut at a word with "…" past ``limit``."""
    sentences = [s for s in _SENTENCE.split(" ".join(text.split())) if s]
    wanted = set(words)
    scores = [len(wanted & set(_roots(s))) for s in sentences]
    if not sentences:
        return ""
    best = max(range(len(sentences)), key=lambda k: (scores[k], -k)) if any(scores) else 0
    chosen = [best]
    for k in (best + 1, best - 1):  # a neighbour holding the words too, then the one before, while it fits
        if 0 <= k < len(sentences) and _size(sentences, [*chosen, k]) <= limit and (scores[k] or k < best):
            chosen.append(k)
            break
    shown = " ".join(sentences[k] for k in sorted(chosen))
    return shown if len(shown) <= limit else shown[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _size(sentences: Sequence[str], chosen: Sequence[int]) -> int:
    return sum(len(sentences[k]) + 1 for k in chosen)
