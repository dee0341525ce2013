"""The words a group's papers are about, from their titles: what names a topic of the channel's profile
(``topics.distinctive_name``), and what the `openalex` and `pubmed` sources search for when members named no
query.

A word scores by how many of the papers use it (weighted), against how common it is in titles at large (a
short list of words every title uses is left out). Only letters, digits and inner hyphens: nothing of a title's
markup reaches a search or a message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# fmt: off
_COMMON_TEXT = """
a an and are as at be by for from in into is it its of on or the to with via using use used toward towards
based new study analysis approach method methods model models novel role roles effect effects impact between
during under over through across within without after before than not no their our we how what which when
two one three large small high low case data evidence results human cells cell protein proteins mechanism
mechanisms system systems function functions functional regulation regulates regulated regulating dependent
mediated induced review insights reveals reveal revealed identification identifies identify toward learning
task tasks paper towards improving improved better understanding can does do via beyond multiple single
"""
# fmt: on
_COMMON = frozenset(_COMMON_TEXT.split())


def title_words(title: str) -> list[str]:
    """A title's words as search terms (lower case), common title words left out."""
    return [w.lower() for w in _WORD.findall(title) if len(w) > 2 and w.lower() not in _COMMON]


def top_words(titles: Iterable[tuple[str, float]], most: int = 3) -> list[str]:
    """The ``most`` words that best name these (title, weight) pairs: used by several papers, weighted."""
    counts: dict[str, float] = {}
    for title, weight in titles:
        for word in set(title_words(title)):
            counts[word] = counts.get(word, 0.0) + max(weight, 0.1)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [w for w, _ in ranked[:most]]
