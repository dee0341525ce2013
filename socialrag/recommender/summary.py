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
    original = split_sentences(abstract)
    if not original:
        return None
    sentences = [speak_of_the_paper(x) for x in original]  # as they will read (said of the paper)
    ranked = sorted(range(len(original)), key=lambda i: _score(original[i], i), reverse=True)
    best = ranked[0]
    if len(sentences[best]) > limit:
        # a sentence that fits whole and says nearly as much reads better than the best one cut short
        fits = [i for i in ranked if len(sentences[i]) <= limit]
        if fits and _score(original[fits[0]], fits[0]) >= _score(original[best], best) - 1.5:
            best = fits[0]
        else:
            return _clip_at_clause(sentences[best], limit)
    chosen = [best]
    for i in ranked[1:]:
        if sum(len(sentences[j]) + 1 for j in chosen) + len(sentences[i]) <= limit:
            chosen.append(i)
            break
    return " ".join(sentences[i] for i in sorted(chosen))


# "we <verb>" at the start of an abstract sentence, said of the paper instead
PAPER_VERBS = {
    "present": "presents", "propose": "proposes", "introduce": "introduces", "describe": "describes",
    "develop": "develops", "study": "studies", "investigate": "investigates", "explore": "explores",
    "address": "addresses", "release": "releases", "design": "designs", "build": "builds",
    "analyze": "analyzes", "analyse": "analyses", "examine": "examines", "evaluate": "evaluates",
    "compare": "compares", "extend": "extends", "formulate": "formulates", "collect": "collects",
    "construct": "constructs", "create": "creates", "offer": "offers", "provide": "provides",
}  # fmt: skip
_AUTHOR_VERBS = ("show", "find", "demonstrate", "observe", "argue", "report", "prove", "confirm", "conclude")
_OPENING = re.compile(
    r"^(?:(?:in|with) this (?:paper|work|study|article)\s*,?\s*|here\s*,?\s*|to this end\s*,?\s*)?"
    r"we\s+(?:also\s+|further\s+|first\s+)?([a-z]+)\b",
    re.IGNORECASE,
)
_THIS_PAPER = re.compile(r"^(?:in\s+)?this (?:paper|work|study|article)\s+", re.IGNORECASE)


def speak_of_the_paper(sentence: str) -> str:
    """An abstract sentence in the authors' voice ("We present ...", "In this paper, we show ...") said of
    the paper instead ("It presents ...", "The authors show ..."); any other sentence as it is."""
    m = _OPENING.match(sentence)
    if m:
        verb = m.group(1).lower()
        rest = sentence[m.end() :]
        if verb in PAPER_VERBS:
            return f"It {PAPER_VERBS[verb]}{rest}"
        if verb in _AUTHOR_VERBS or verb.isalpha():
            # any other "we <verb>" reads as well of the authors ("We adapt ..." -> "The authors adapt ...")
            return f"The authors {verb}{rest}"
        return sentence
    m = _THIS_PAPER.match(sentence)
    if m and not sentence.lower().startswith("in "):
        return "It " + sentence[m.end() :]
    if sentence.lower().startswith("our results "):
        return "The results " + sentence[len("our results ") :]
    return sentence


def _clip_at_clause(text: str, limit: int) -> str:
    """Cut a long sentence at its last clause boundary (a comma, a semicolon, a colon) that keeps most of the
    room, else at a word."""
    head = text[: limit - 1]
    cut = max(head.rfind(", "), head.rfind("; "), head.rfind(": "))
    if cut >= 0.6 * limit:
        return head[:cut].rstrip() + "…"
    return _clip(text, limit)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"
