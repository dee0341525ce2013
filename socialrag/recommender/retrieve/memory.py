"""Step 2 turned around: a member asks what the channel read and discussed, and PaperPing retrieves from the
channel's own knowledge base (its shared papers, its threads, its own posts and their reception).

Retrieval is hybrid: Postgres full-text search over the papers' titles and abstracts and over the threads'
messages, and pgvector's cosine over the papers' vectors, each scaled to the channel's best and added
(``combine``), so that a question finds a paper by its words ("the DPO paper") as well as by its meaning
("aligning models with preferences"). A word counts by how rare it is among the channel's papers. This module
reads one channel at a time, scoped by its ``ChannelContext``; which channels an asker may see is decided
before it is called (``serve.ask``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np
import psycopg

from socialrag import storage
from socialrag.names import fold_text
from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.recommender.retrieve.keywords import ASKING_WORDS as ASKING_WORDS
from socialrag.recommender.retrieve.keywords import (
    TermCounts,
    keyword_coverage,
    keyword_scores,
    singular,
    topic_words,
    word_forms,
)

Kind = Literal["papers", "discussion", "who", "missed"]


_WORD = re.compile(r"[a-z0-9]+")
_WHO = re.compile(r"\bwho\b.{0,40}\b(know|knows|knew|expert|familiar|work|works|worked|read|reads|ask)\b")
_MISSED = re.compile(r"\b(what did i miss|what have i missed|did i miss|i missed|catch me up|since i was away)\b")
_DISCUSSION = re.compile(r"\b(discuss|discussed|discussion|talk|talked|think|thought|said|say|opinion|debate)")

# what the meaning and the thread weigh beside the words (1), each scaled to the channel's best first; chosen on
# ``bench/bench_ask.py``'s real histories (0.5 to 1.0 give the same hit@3 there; 0.7 the best MRR)
# the meaning's weight beside the words: from MEANING_WEIGHT when the best keyword match holds none of the question's
# distinctive words, down to MEANING_WEIGHT_MATCHED when it holds them all (``Scores.coverage``), with the square of
# what is left unmatched (chosen on three real histories by MRR, confirmed on the other two: docs/benchmarks.md)
MEANING_WEIGHT = 0.9
MEANING_WEIGHT_MATCHED = 0.1
THREAD_WEIGHT = 0.7
MIN_SIMILARITY = 0.25  # below this cosine, a paper found only by its meaning is not an answer
LIST_DEPTH = 50  # how far down each list is read


def question_kind(question: str) -> Kind:
    """What a member asks: who knows a topic, what they missed, where a topic was discussed, or (by default)
    which papers the channel read about it."""
    text = " ".join(fold_text(question).split())
    if _MISSED.search(text):
        return "missed"
    if _WHO.search(text) or text.startswith("who "):
        return "who"
    if _DISCUSSION.search(text):
        return "discussion"
    return "papers"


def tsquery_text(words: Sequence[str]) -> str:
    """Any of the words (``w1 | w2``), for Postgres' ``to_tsquery``: a paper matching more of them ranks higher."""
    return " | ".join(w for w in words if _WORD.fullmatch(w))


def term_counts(
    ctx: ChannelContext,
    held: dict[int, set[str]],
    terms: Sequence[str],
    named: dict[int, set[str]],
    fields: dict[int, set[str]],
) -> TermCounts:
    """``TermCounts`` of the channel's papers ``held`` (each with the question's ``terms`` it holds in some form,
    as Postgres' index found them), with the terms ``named`` by their authors and by their venue or year
    (``fields``): each word counted as written (``word_forms``), so that a rare word matches only itself. A paper
    holding a word only in another form ("evaluation" for "evaluate") is left to
    the meaning: counted, those forms made the keyword score lose to a plain BM25 (docs/benchmarks.md)."""
    counts: dict[int, dict[str, tuple[int, int]]] = {}
    lengths: dict[int, int] = {}
    asked = set(terms)
    for pid, forms in held.items():
        paper = ctx.papers.get(pid)
        if paper is None:
            continue
        title, abstract = word_forms(paper.info.title or ""), word_forms(paper.info.abstract or "")
        lengths[pid] = len(title) + len(abstract)
        found = {}
        for term in forms & asked:
            word = singular(term)
            exact = (title.count(word), abstract.count(word))
            if exact != (0, 0):
                found[word] = exact
        counts[pid] = found
    mean = sum(lengths.values()) / len(lengths) if lengths else 0.0
    # the terms naming an author, read from the papers' own author names folded as the question is ("Vulić" is
    # "vulic"), with how often the names say each ("Yang Yang": twice); Postgres' ``named`` besides
    said: dict[int, dict[str, int]] = {}
    by_author: dict[int, set[str]] = {pid: set(terms) for pid, terms in named.items()}
    for pid, paper in ctx.papers.items():
        names = [w for a in paper.info.authors for w in word_forms(a.name)]
        naming = {t for t in asked if singular(t) in names} | by_author.get(pid, set())
        if naming:
            by_author[pid] = naming
            said[pid] = {term: max(1, names.count(singular(term))) for term in naming}
    return TermCounts(counts, lengths, mean, by_author, len(ctx.papers), fields, said)


@dataclass(frozen=True)
class Scores:
    """One channel's papers scored three ways for a question, before they are combined."""

    words: dict[int, float]  # keywords of the title and abstract, authors, venue and year (``keyword_scores``)
    threads: dict[int, float]  # full text of the thread: the share's own words and the replies
    meaning: dict[int, float]  # cosine of the paper's vector to the question's, every paper with a vector
    coverage: float = 0.0  # how much of the question's words (weighed by rarity) the best keyword match holds


def ranked(scores: dict[int, float]) -> list[int]:
    """Paper ids by score, best first (ties by id, so that an answer is the same each time)."""
    return [pid for pid, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]


def combine(scores: Scores) -> dict[int, float]:
    """The hybrid score: each of the three scaled to the channel's best (the vectors' from their lowest to their
    highest), then added, the threads at ``THREAD_WEIGHT`` of the words and the meaning at a weight that falls as
    the words match: a member who remembers a paper's own words finds it by them, a paraphrase by its meaning."""
    out: dict[int, float] = defaultdict(float)
    for part, weight in ((scores.words, 1.0), (scores.threads, THREAD_WEIGHT)):
        top = max(part.values(), default=0.0)
        for pid, value in part.items():
            out[pid] += weight * value / top if top > 0 else 0.0
    # falling faster as more of the question's words match: half of them matched leaves the meaning a third
    meaning_weight = MEANING_WEIGHT_MATCHED + (MEANING_WEIGHT - MEANING_WEIGHT_MATCHED) * (1 - scores.coverage) ** 2
    if scores.meaning:
        low, high = min(scores.meaning.values()), max(scores.meaning.values())
        for pid, value in scores.meaning.items():
            out[pid] += meaning_weight * ((value - low) / (high - low) if high > low else 0.0)
    return dict(out)


@dataclass(frozen=True)
class Found:
    """A paper of the channel that answers the question, with its hybrid score."""

    paper_id: int
    score: float


def search_scores(conn: psycopg.Connection, ctx: ChannelContext, question: str, vector: np.ndarray | None) -> Scores:
    """The channel's papers scored by Postgres full-text search of their title and abstract and of their threads,
    and by pgvector's cosine of their vector to the question's."""
    ids = sorted(ctx.papers)
    terms = topic_words(question)
    held, named, fields = storage.history_search.load_keyword_candidates(conn, ids, terms)
    counts = term_counts(ctx, held, terms, named, fields)
    words = keyword_scores(counts)
    roots: dict[str, list[int]] = defaultdict(list)
    for pid, paper in ctx.papers.items():
        for share in paper.shares:
            roots[share.ts].append(pid)
    threads: dict[int, float] = {}
    for root, rank in storage.history_search.load_thread_matches(
        conn, ctx.team_id, ctx.channel_id, tsquery_text(terms), LIST_DEPTH, ctx.as_of
    ):
        for pid in roots.get(root, ()):
            threads[pid] = max(threads.get(pid, 0.0), rank)
    meaning: dict[int, float] = {}
    if vector is not None:
        meaning = dict(
            storage.history_search.load_vector_matches(conn, ctx.team_id, ctx.channel_id, ctx.model, ids, vector)
        )
    return Scores(words, threads, meaning, keyword_coverage(counts, terms, words))


def search_channel(
    conn: psycopg.Connection, ctx: ChannelContext, question: str, vector: np.ndarray | None, *, most: int = 5
) -> list[Found]:
    """The channel's papers that answer the question, best first (at most ``most``): those its words or its
    thread match, or whose meaning is at least ``MIN_SIMILARITY`` close."""
    scores = search_scores(conn, ctx, question, vector)
    close = {pid for pid, s in scores.meaning.items() if s >= MIN_SIMILARITY}
    combined = combine(scores)
    found = [pid for pid in ranked(combined) if pid in scores.words or pid in scores.threads or pid in close]
    return [Found(pid, combined[pid]) for pid in found[:most]]


def activity_since(ctx: ChannelContext, since: datetime) -> list[tuple[int, int]]:
    """(paper id, how many shares, replies and reactions it drew since ``since``) of the channel's papers with
    any, the most engaged first: what a member who was away missed."""
    counts: list[tuple[int, int]] = []
    for pid, paper in ctx.papers.items():
        events = [s.at for s in paper.shares] + [r.at for r in paper.replies] + [r.at for r in paper.reactions]
        n = sum(1 for at in events if at >= since)
        if n:
            counts.append((pid, n))
    return sorted(counts, key=lambda x: (-x[1], -x[0]))


def shared_within(ctx: ChannelContext, held: Callable[[datetime], bool]) -> list[tuple[int, int]]:
    """(paper id, its replies and reactions) of the channel's papers shared within a period (``held`` says which
    moments are in it), the most engaged first, then the latest: what the channel read then."""
    out = []
    for pid, paper in ctx.papers.items():
        shared = [s.at for s in paper.shares if held(s.at)]
        if shared:
            out.append((pid, len(paper.replies) + len(paper.reactions), max(shared)))
    return [(pid, n) for pid, n, _ in sorted(out, key=lambda x: (-x[1], -x[2].timestamp(), x[0]))]


def discussed_within(ctx: ChannelContext, held: Callable[[datetime], bool]) -> list[tuple[int, int]]:
    """(paper id, its replies within a period) of the channel's papers replied to then, the most replied first."""
    counts = [(pid, sum(1 for r in paper.replies if held(r.at))) for pid, paper in ctx.papers.items()]
    return sorted(((pid, n) for pid, n in counts if n), key=lambda x: (-x[1], -x[0]))


# what each kind of engagement with a paper on the topic says of a member's knowing it
SHARE_WEIGHT, REPLY_WEIGHT, SAVE_WEIGHT, REACTION_WEIGHT = 3.0, 2.0, 1.0, 0.5


@dataclass(frozen=True)
class Engaged:
    """A member who engaged with the papers found: their weight, and how many of the papers they engaged with in
    all, shared, replied about and reacted to."""

    user_id: str
    weight: float
    papers: int
    shared: int
    replied: int
    reacted: int


def who_knows(
    ctx: ChannelContext,
    found: Sequence[Found],
    saves: Sequence[tuple[int, str]],
    most: int = 5,
    held: Callable[[datetime], bool] | None = None,
) -> list[Engaged]:
    """The channel's members who shared, replied about, saved or reacted to the papers found (only what they did
    at moments ``held`` says, when given), weighted by each paper's fused score, the heaviest first. Only current
    members who keep mentions on count (a member who turned them off is not named), and never a bot."""
    weight: dict[str, float] = defaultdict(float)
    did: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    score = {f.paper_id: f.score for f in found}

    def add(user: str | None, pid: int, w: float, kind: str, at: datetime | None = None) -> None:
        if user is None or not ctx.nameable(user):
            return
        if held is not None and at is not None and not held(at):
            return
        weight[user] += w * score[pid]
        did[user][kind].add(pid)

    for pid in score:
        paper = ctx.papers.get(pid)
        if paper is None:
            continue
        for s in paper.shares:
            add(s.user_id, pid, SHARE_WEIGHT, "shared", s.at)
        for r in paper.replies:
            add(r.user_id, pid, REPLY_WEIGHT, "replied", r.at)
        for x in paper.reactions:
            add(x.user_id, pid, REACTION_WEIGHT, "reacted", x.at)
    for pid, user in saves:
        if pid in score:
            add(user, pid, SAVE_WEIGHT, "saved")
    ranked = sorted(weight.items(), key=lambda x: (-x[1], x[0]))[:most]
    return [
        Engaged(
            uid,
            w,
            len(set().union(*did[uid].values())),
            len(did[uid]["shared"]),
            len(did[uid]["replied"]),
            len(did[uid]["reacted"]),
        )
        for uid, w in ranked
    ]
