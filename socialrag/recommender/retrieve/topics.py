"""A channel's main topics, for its profile: clusters of the papers it shared (their vectors), each named from
its papers' titles and shown with two example threads, biggest engagement first; and the topics members muted or
boosted, as directions in the embedding space that outlive the clustering.

A muted topic drops every candidate within its radius and counts as a paper the group disliked; a boosted one
counts as a paper it liked twice as much as any other, as a focus does (both in the ranker's state,
``rank.history.ChannelHistory.state_at``), and a post picked within its radius says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from socialrag.names import fold_text
from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.recommender.retrieve.topic_words import title_words

MAX_TOPICS = 5
MIN_RADIUS, MAX_RADIUS = 0.45, 0.7  # how close to a topic's direction a paper must be to belong to it


@dataclass(frozen=True)
class Topic:
    label: str
    paper_ids: tuple[int, ...]
    direction: np.ndarray = field(repr=False)
    radius: float
    engagement: float
    examples: tuple[tuple[str, str | None], ...]  # (title, permalink of its first share) of its two most engaged


@dataclass(frozen=True)
class Steer:
    """A topic members muted or boosted."""

    label: str
    action: str  # "mute" or "boost"
    direction: np.ndarray = field(repr=False)
    radius: float
    words: tuple[str, ...] = ()  # the member's words, when they named the topic so

    def covers(self, vector: np.ndarray | None, title: str | None = None) -> bool:
        """Whether a paper is on this topic: its vector inside the topic's radius, or (for a topic named by
        words) its title carrying every word the member gave: a paper squarely on it, wherever its vector is."""
        if vector is not None and float(np.dot(vector, self.direction)) >= self.radius:
            return True
        return bool(self.words and title) and titled_with(title or "", self.words)


def titled_with(title: str, words: Sequence[str]) -> bool:
    """Whether every word is in the title, as a word or a word's start ("screen" in "screens", "crispr" in
    "CRISPR-Cas9"), accents and case aside."""
    tokens = fold_text(title).split()
    for word in words:
        key = fold_text(word)
        stem = key[: max(4, len(key) - 2)]
        if key and not any(t == key or t.startswith(stem) for t in tokens):
            return False
    return bool(words)


def _clusters(vectors: np.ndarray, k: int) -> np.ndarray:
    """Cluster labels of these unit vectors (k-means on the sphere, seeded: the same history, the same topics)."""
    if k <= 1 or len(vectors) <= k:
        return np.zeros(len(vectors), dtype=int) if k <= 1 else np.arange(len(vectors))
    from sklearn.cluster import KMeans

    return np.asarray(KMeans(n_clusters=k, n_init=5, random_state=0).fit_predict(vectors))


def topic_groups(vectors: np.ndarray, most: int = MAX_TOPICS) -> list[list[int]]:
    """The rows of each cluster of two papers or more, about one cluster per three papers' square root."""
    labels = _clusters(vectors, max(1, min(most, round((len(vectors) / 3) ** 0.5 + 0.5)))).tolist()
    groups = [[i for i, lab in enumerate(labels) if lab == label] for label in sorted(set(labels))]
    return [g for g in groups if len(g) >= 2]


def direction_and_radius(vectors: np.ndarray) -> tuple[np.ndarray, float]:
    """A topic's unit direction (its papers' mean) and the radius three quarters of its papers are within."""
    mean = vectors.mean(axis=0)
    direction = mean / (np.linalg.norm(mean) or 1.0)
    closeness = sorted((vectors @ direction).tolist())
    return direction, min(MAX_RADIUS, max(MIN_RADIUS, closeness[len(closeness) // 4]))


def distinctive_name(titles: Sequence[str], others: Sequence[str], most: int = 3, taken: set[str] | None = None) -> str:
    """Three words that these titles use more than the rest of the channel's do (none of ``taken``: a word
    that names a bigger topic does not name this one too)."""
    inside: dict[str, float] = {}
    for t in titles:
        for w in set(title_words(t)):
            inside[w] = inside.get(w, 0.0) + 1.0
    outside: dict[str, float] = {}
    for t in others:
        for w in set(title_words(t)):
            outside[w] = outside.get(w, 0.0) + 1.0
    n_in, n_out = max(len(titles), 1), max(len(others), 1)
    free = {w: c for w, c in inside.items() if w not in (taken or set())}
    shared = {w: c for w, c in free.items() if c >= min(2, n_in)} or free  # else the words of its first title
    score = {w: c / n_in - 0.5 * outside.get(w, 0.0) / n_out for w, c in shared.items()}
    if shared is free and titles:
        first = title_words(titles[0])
        score = {w: v for w, v in score.items() if w in first}
    ranked = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(w for w, _ in ranked[:most]) or "mixed papers"


def named_examples(label: str, titles: Sequence[str], most: int = 2) -> list[int]:
    """Which of a topic's titles (the most engaged first) show what its name says: those with most of the name's
    words, the most engaged first among equals."""
    words = set(label.split(", "))
    overlap = [len(words & set(title_words(t))) for t in titles]
    return sorted(range(len(titles)), key=lambda i: -overlap[i])[:most]  # stable: engagement among equals


def channel_topics(ctx: ChannelContext, weights: Mapping[int, float], most: int = MAX_TOPICS) -> list[Topic]:
    """The channel's main topics, the most engaged first (a topic needs two papers), each named by words no
    topic before it uses."""
    ids = [pid for pid in ctx.papers if pid in ctx.vectors and ctx.papers[pid].info.title]
    if len(ids) < 2:
        return []
    matrix = np.stack([ctx.vectors[pid] for pid in ids])
    groups = [[ids[i] for i in rows] for rows in topic_groups(matrix, most)]
    engagement = {id(g): sum(max(weights.get(p, 0.0), 0.0) for p in g) for g in groups}
    groups.sort(key=lambda g: (-engagement[id(g)], -len(g), min(g)))
    taken: set[str] = set()
    topics = []
    for members in groups[:most]:
        topic = _topic(ctx, weights, members, [pid for pid in ids if pid not in members], taken)
        taken.update(topic.label.split(", "))
        topics.append(topic)
    return topics


def _topic(
    ctx: ChannelContext, weights: Mapping[int, float], members: list[int], others: list[int], taken: set[str]
) -> Topic:
    direction, radius = direction_and_radius(np.stack([ctx.vectors[p] for p in members]))
    engaged = sorted(members, key=lambda p: (-max(weights.get(p, 0.0), 0.0), p))
    titles = [ctx.papers[p].info.title or "" for p in engaged]
    label = distinctive_name(titles, [ctx.papers[p].info.title or "" for p in others], taken=taken)
    chosen = [engaged[i] for i in named_examples(label, titles)]
    examples = tuple((ctx.papers[p].info.title or "", ctx.papers[p].first_share.permalink) for p in chosen)
    return Topic(
        label=label,
        paper_ids=tuple(members),
        direction=direction,
        radius=radius,
        engagement=sum(max(weights.get(p, 0.0), 0.0) for p in members),
        examples=examples,
    )


def muted(vector: np.ndarray | None, steering: Sequence[Steer], title: str | None = None) -> bool:
    return any(s.action == "mute" and s.covers(vector, title) for s in steering)


def boosted_by(vector: np.ndarray | None, steering: Sequence[Steer]) -> str | None:
    """The label of the boosted topic this paper falls in (the closest, if several), or None."""
    if vector is None:
        return None
    hits = [(float(np.dot(vector, s.direction)), s.label) for s in steering if s.action == "boost" and s.covers(vector)]
    return max(hits)[1] if hits else None
