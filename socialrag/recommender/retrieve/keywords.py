"""The group's memory, by the question's words: BM25 over the channel's papers' titles and abstracts (each word as
written, a plural's s aside), with the words that name a paper's authors, venue or year. Pure: the counts come
from ``retrieve/memory.py`` (the channel's papers) and ``storage/history_search.py`` (which papers hold a word)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from socialrag.names import fold_text

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class TermCounts:
    """What a keyword score needs of one channel's papers for a question: how often each of the question's words
    is in each paper's title and abstract, each paper's length in words, the papers' mean length, and the
    question's words that name a paper's author, its venue or its year."""

    counts: dict[int, dict[str, tuple[int, int]]]  # paper -> word -> (in the title, in the abstract)
    lengths: dict[int, int]  # paper -> words in its title and abstract (only papers holding a word)
    mean_length: float  # over the papers holding a word
    named: dict[int, set[str]]  # paper -> the question's terms that name one of its authors
    papers: int  # how many papers were asked about
    fields: dict[int, set[str]] = field(default_factory=dict)  # paper -> the terms naming its venue or its year
    # paper -> term -> how often its authors' names say it ("yang" twice for Yang Yang); 1 when not given
    named_counts: dict[int, dict[str, int]] = field(default_factory=dict)


BM25_K1 = 1.2  # how fast more of one word stops counting more
BM25_B = 0.75  # how much a long abstract's words count less
TITLE_COUNTS = 1.0  # a word in the title counts as this many in the abstract
# a word naming one of a paper's authors counts as this many of its title's words, one naming its venue or its year
# as FIELD_COUNTS. Three for the venue and year found more papers of "EMNLP 2019" and lost more papers asked of by
# their abstract's words, whose words a workshop's name holds too (docs/benchmarks.md)
NAMED_COUNTS = 1.0
FIELD_COUNTS = 1.0


# letters Unicode does not decompose into a plain one and an accent, written as a reader would type them
_PLAIN_LETTERS = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "đ": "d",
                                "Đ": "D", "ð": "d", "ł": "l", "Ł": "L", "þ": "th", "ı": "i"})  # fmt: skip


def fold_words(text: str) -> str:
    """``fold_text`` for matching words: "Grießhaber" is "griesshaber", "Vulić" is "vulic"."""
    return fold_text(text.translate(_PLAIN_LETTERS))


def word_forms(text: str) -> list[str]:
    """The words of a text as the keyword score compares them: folded (lower case, accents aside), letters and
    digits, a plural's final s taken off ("tables" is "table"; "analysis", "corpus" and "bias" stay)."""
    return [singular(w) for w in _WORD.findall(fold_words(text))]


_NOT_PLURAL = frozenset({"news", "series", "species", "means", "lens"})  # an s that is not a plural's


def singular(word: str) -> str:
    """The word without a plural's final s ("tables": "table"); "analysis", "corpus", "bias" and "news" stay."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is", "ias")) or word in _NOT_PLURAL:
        return word
    return word[:-1]


# Words of asking, not of the topic: they would make the full-text search match every abstract that says "we".
_ASKING = """
    a about above after again all also am an and any anyone anybody are as at be been before being but by can
    could did do does done for from get got had has have having he her here him his how i if in into is it its
    just know knows knew last like me month months more most my need of on or our ours out over paper papers
    people person read reading reads said say says share shared sharing shares should since so some someone
    somebody tell than that the their them then there these they think thought this those through to told
    up us was we week weeks were what when where which while who whom why will with would year years you your
    discuss discussed discussion discussions talk talked missed miss whats anything
    something work works worked expert experts familiar group channel thread threads ones one did article
    articles find found look looked show list any lately recently recent ago catch away
    use uses used using
"""
ASKING_WORDS = frozenset(_ASKING.split())


# "who was most active", "the top sharers": asking who, not about a topic ("active learning" stays a topic)
_RANKING_WORDS = re.compile(r"\b(?:most|more|least)\s+(?:active|engaged)\b|\btop\s+(?:sharers?|posters?|members?)\b")


def topic_words(question: str, most: int = 12) -> list[str]:
    """The words of a question that name its topic: letters and digits, accents and case aside, without the
    words of asking. Each is safe to put in a ``to_tsquery`` (nothing but ``[a-z0-9]``)."""
    text = _RANKING_WORDS.sub(" ", fold_words(question))
    words = [w for w in _WORD.findall(text) if w not in ASKING_WORDS and len(w) > 1]
    return list(dict.fromkeys(words))[:most]


def rarity(papers: int, holding: int) -> float:
    """How rare a word is among ``papers`` papers when ``holding`` of them hold it (BM25's inverse document
    frequency): a word every paper has says little."""
    return math.log(1.0 + (max(papers, 1) - holding + 0.5) / (holding + 0.5))


def keyword_coverage(found: TermCounts, terms: Sequence[str], scores: dict[int, float]) -> float:
    """How much of the question the best keyword match holds, 0 to 1: the rarity of the question's words it
    holds (as written, or naming its author, venue or year) over the rarity of all of them (a
    word no paper holds counts as the rarest)."""
    if not scores or not terms:
        return 0.0
    best = max(scores, key=lambda pid: (scores[pid], -pid))
    holders = document_counts(found)
    wanted = {singular(t) for t in terms}
    named = found.named.get(best, set()) | found.fields.get(best, set())
    held = set(found.counts.get(best, {})) | {singular(t) for t in named}
    total = sum(rarity(found.papers, holders.get(w, 0)) for w in wanted)
    return sum(rarity(found.papers, holders.get(w, 0)) for w in wanted if w in held) / total if total > 0 else 0.0


def keyword_scores(found: TermCounts) -> dict[int, float]:
    """Each paper's keyword score (BM25): each of the question's words it holds, weighed by how rare the word is
    among the channel's papers and by how often the paper says it (more of it counts less and less), in a paper
    of its length. A paper holding more of the question's distinctive words comes first, common words included;
    one matching a single word of its title does not beat one whose abstract holds them all (a title word counting
    twice lost to a plain BM25 on the real histories: ``TITLE_COUNTS`` is 1). A word naming one of its
    authors counts as ``NAMED_COUNTS`` of them, and one naming its venue or its year as ``FIELD_COUNTS``."""
    holders = document_counts(found)

    def saturated(tf: float, length: float) -> float:
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / found.mean_length) if found.mean_length > 0 else BM25_K1
        return tf * (BM25_K1 + 1.0) / (tf + norm)

    # each word's count in each paper's whole record: title, abstract, authors' names, venue and year, then
    # saturated once, as BM25 over the record counts it (a word in the abstract and the venue is not two words)
    said: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for pid, words in found.counts.items():
        for word, (title, abstract) in words.items():
            said[pid][word] += TITLE_COUNTS * title + abstract
    for pid, terms in found.named.items():
        for term in terms:
            said[pid][singular(term)] += NAMED_COUNTS * found.named_counts.get(pid, {}).get(term, 1)
    for pid, terms in found.fields.items():
        for term in terms:
            said[pid][singular(term)] += FIELD_COUNTS
    score: dict[int, float] = {}
    for pid, told in said.items():
        length = float(found.lengths.get(pid, found.mean_length))
        score[pid] = sum(rarity(found.papers, holders[w]) * saturated(tf, length) for w, tf in told.items())
    return score


def document_counts(found: TermCounts) -> dict[str, int]:
    """How many papers hold each of the question's words anywhere a paper's record says it: its title, abstract,
    authors, venue or year (one count, as a keyword search over the whole record counts it: "2018" in an abstract
    is as common as the year 2018)."""
    holding: dict[str, set[int]] = defaultdict(set)
    for pid, words in found.counts.items():
        for word in words:
            holding[word].add(pid)
    for by_field in (found.named, found.fields):
        for pid, terms in by_field.items():
            for term in terms:
                holding[singular(term)].add(pid)
    return {word: len(pids) for word, pids in holding.items()}
