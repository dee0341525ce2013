"""A short summary of a paper without an LLM: Semantic Scholar's tldr, or sentences picked from the abstract."""

from __future__ import annotations

import re

from socialrag.text import as_data

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_CUES = (
    "we propose",
    "we present",
    "we introduce",
    "this paper",
    "in this work",
    "we show",
    "we find",
    "we develop",
    "our results",
    "we demonstrate",
    "this work",
    "here we",
    "we describe",
    "we study",
)


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def _score(sentence: str, position: int) -> float:
    lowered = sentence.lower()
    score = sum(2.0 for cue in _CUES if cue in lowered)
    score += 1.0 if re.search(r"\d", sentence) else 0.0
    score -= 0.3 * position
    if len(sentence) < 40:
        score -= 2.0
    if lowered.startswith(("however", "but ", "yet ", "moreover", "thus", "therefore", "furthermore", "in addition")):
        score -= 2.5  # a sentence that leans on the one before reads badly alone
    return score


def summarize(abstract: str | None, tldr: str | None = None, *, limit: int = 300) -> str | None:
    """The tldr when there is one; otherwise the most informative abstract sentences within ``limit``.
    Both are text written by others: their markup, links and member tokens are dropped first."""
    tldr, abstract = as_data(tldr), as_data(abstract)
    if tldr:
        return _clip(tldr, limit)
    if not abstract:
        return None
    sentences = split_sentences(abstract)
    if not sentences:
        return None
    ranked = sorted(range(len(sentences)), key=lambda i: _score(sentences[i], i), reverse=True)
    best = ranked[0]
    if len(sentences[best]) > limit:
        # the most informative sentence, shortened, beats a weaker one that happens to fit
        return _clip(sentences[best], limit)
    chosen = [best]
    for i in ranked[1:]:
        if sum(len(sentences[j]) + 1 for j in chosen) + len(sentences[i]) <= limit:
            chosen.append(i)
            break
    return " ".join(sentences[i] for i in sorted(chosen))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"
