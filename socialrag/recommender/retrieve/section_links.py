"""Step 2 for a post's section line (issue 56): which part of the recommended paper's full text meets what the group
discussed recently, e.g. its section *4.2 Training details* and the label smoothing a member raised in a thread
last week. Pure: the passages, the channel's context and the vectors come from the caller.

A section meets a recent thread when one of its passages shares distinctive words with a member's recent replies
there (words rare among the paper's passages, ``LINK_FROM`` of their rarity at least), with the closeness of the
passage's vector to the thread's paper's as a bonus where both are known. The member is one whose replies the
channel keeps and who may be named; the words are shown as the passage writes them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.recommender.retrieve.keywords import rarity, topic_words
from socialrag.recommender.retrieve.passages import PassageText, word_root

RECENT_DAYS = 14  # a thread replied to in these days before the post is "recent"
LINK_FROM = 5.0  # the rarity of the shared words, summed, at least (about two words few passages hold)
MEANING_BONUS = 4.0  # times the passage's cosine to the thread's paper above MEANING_BASE
MEANING_BASE = 0.3
PHRASES_SHOWN = 2
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_JOINS = re.compile(r"[ -]+")  # what joins two words of one phrase


@dataclass(frozen=True)
class RecentReply:
    """What one member said in a recent thread: all their replies there in the window, joined."""

    paper_id: int  # the thread's paper
    title: str
    permalink: str | None
    user_id: str
    at: datetime  # their latest reply there
    text: str


@dataclass(frozen=True)
class SectionLink:
    """A passage of the recommended paper that meets a member's recent replies in a thread of the channel."""

    n: int
    section: str
    passage: str
    phrases: tuple[str, ...]  # the shared words, as the passage writes them
    reply: RecentReply
    score: float


def recent_replies(ctx: ChannelContext, days: int = RECENT_DAYS) -> list[RecentReply]:
    """Each nameable member's replies in each thread of the channel in the ``days`` before ``ctx.as_of``."""
    since = ctx.as_of - timedelta(days=days)
    out = []
    for pid, paper in ctx.papers.items():
        said: dict[str, list[tuple[datetime, str]]] = defaultdict(list)
        for r in paper.replies:
            if r.user_id and r.text and since <= r.at <= ctx.as_of and ctx.nameable(r.user_id):
                said[r.user_id].append((r.at, r.text))
        link = paper.first_share.permalink if paper.shares else None
        for uid, replies in said.items():
            text = " ".join(t for _, t in sorted(replies))
            out.append(RecentReply(pid, paper.info.title or "", link, uid, max(at for at, _ in replies), text))
    return sorted(out, key=lambda r: (r.at, r.paper_id, r.user_id), reverse=True)


def phrases_in(text: str, shared: set[str], most: int = PHRASES_SHOWN) -> tuple[str, ...]:
    """The runs of the passage's words whose roots are ``shared`` ("label smoothing", "beam search"), as the
    passage writes them, the longest first; a run whose words a longer one already holds is not said again
    ("label-smoothing" after "Label smoothing")."""
    runs: list[tuple[int, int, int]] = []  # (start, end, words)
    for m in _TOKEN.finditer(text):
        if word_root(m.group(0).lower()) not in shared:
            continue
        if runs and _JOINS.fullmatch(text[runs[-1][1] : m.start()]):
            start, _, words = runs[-1]
            runs[-1] = (start, m.end(), words + 1)
        else:
            runs.append((m.start(), m.end(), 1))
    kept: list[tuple[str, set[str]]] = []
    for start, end, _ in sorted(runs, key=lambda r: -r[2]):
        roots = {word_root(w.lower()) for w in _TOKEN.findall(text[start:end])}
        if not any(roots <= other for _, other in kept):  # "virus neutralization" after "Virus neutralization test"
            kept.append((text[start:end], roots))
    return tuple(phrase for phrase, _ in kept[:most])


def link_section(
    passages: Sequence[PassageText],
    replies: Sequence[RecentReply],
    *,
    vectors: Mapping[tuple[int, int], np.ndarray] | None = None,
    thread_vectors: Mapping[int, np.ndarray] | None = None,
) -> SectionLink | None:
    """The passage of the paper that best meets one of the recent ``replies``, if one clears ``LINK_FROM``."""
    if not passages or not replies:
        return None
    roots = [{word_root(w) for w in topic_words(p.text, most=10_000)} for p in passages]
    holders: dict[str, int] = defaultdict(int)
    for held in roots:
        for root in held:
            holders[root] += 1
    best: SectionLink | None = None
    for reply in replies:
        asked = {word_root(w) for w in topic_words(reply.text, most=60)}
        for k, p in enumerate(passages):
            shared = {r for r in asked & roots[k] if not r.isdigit()}
            score = sum(rarity(len(passages), holders[r]) for r in shared)
            score += _closeness(p, reply, vectors, thread_vectors)
            if len(shared) >= 2 and score >= LINK_FROM and (best is None or score > best.score):
                best = SectionLink(p.n, p.section, p.text, phrases_in(p.text, shared), reply, score)
    return best


def _closeness(
    p: PassageText,
    reply: RecentReply,
    vectors: Mapping[tuple[int, int], np.ndarray] | None,
    thread_vectors: Mapping[int, np.ndarray] | None,
) -> float:
    v = (vectors or {}).get((p.paper_id, p.n))
    w = (thread_vectors or {}).get(reply.paper_id)
    if v is None or w is None:
        return 0.0
    cosine = float(np.dot(v, w) / ((float(np.linalg.norm(v)) or 1.0) * (float(np.linalg.norm(w)) or 1.0)))
    return MEANING_BONUS * max(0.0, cosine - MEANING_BASE)
