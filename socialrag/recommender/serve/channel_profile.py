"""What PaperPing believes a channel reads, in words a member can check (`/paperping profile`): its main topics
with two example threads each, the authors it follows and the venues it reads most, its focus, what its ranking
leans on, and the topics members muted or boosted. Muting or boosting a topic (by its number in the profile,
or by words) stores its direction (``storage.topic_steering``); the ranking reads it at every pick.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import psycopg

from socialrag import storage
from socialrag.knowledge.readiness import focus_active
from socialrag.models import Draft, MemberMayCare
from socialrag.recommender.rank.calibrate import describe
from socialrag.recommender.rank.coverage import Coverage
from socialrag.recommender.rank.engagement import ScoringConfig, channel_weights
from socialrag.recommender.rank.refit import load_fit
from socialrag.recommender.retrieve.candidates import search_words
from socialrag.recommender.retrieve.context import load_channel_context
from socialrag.recommender.retrieve.topics import MIN_RADIUS, Steer, Topic, channel_topics
from socialrag.recommender.serve.pipeline import measure_coverage
from socialrag.storage.topic_steering import SteerRow
from socialrag.text import ascii_digits

WORDS_RADIUS = MIN_RADIUS  # how close a paper must be to a few words a member gave to fall in their topic
MAX_STEERED = 20  # muted and boosted topics a channel keeps


@dataclass(frozen=True)
class ChannelProfile:
    papers: int
    topics: list[Topic]
    followed: list[str]
    venues: list[tuple[str, int]]
    focus: str | None
    ranking: str
    muted: list[str]
    boosted: list[str]


def build_profile(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    model: str,
    scoring: ScoringConfig,
    at: datetime | None = None,
) -> ChannelProfile:
    """The channel's profile as of ``at`` (default now)."""
    now = at or datetime.now(UTC)
    ctx = load_channel_context(conn, team_id, channel_id, now, model)
    bots = frozenset(uid for uid, m in ctx.members.items() if m.is_bot)
    weights = channel_weights(ctx.papers, now, scoring, ctx.emoji_overrides, bots)
    shared = [p for p in ctx.papers.values() if any(s.user_id not in bots for s in p.shares)]
    venues = Counter(p.info.venue for p in shared if p.info.venue)
    settings = storage.settings.load_channel_settings(conn, team_id, channel_id)
    steering = storage.topic_steering.load_steering(conn, team_id, channel_id)
    return ChannelProfile(
        papers=len(shared),
        topics=channel_topics(ctx, weights),
        followed=[f.name for f in storage.followed_authors.load_followed(conn, team_id, channel_id)],
        venues=venues.most_common(3),
        focus=settings.focus_text if focus_active(settings, now) else None,
        ranking=describe(load_fit(conn, team_id, channel_id, scoring.popularity_weight, now), evidence=False),
        muted=[s.label for s in steering if s.action == "mute"],
        boosted=[s.label for s in steering if s.action == "boost"],
    )


def steer_row(
    profile: ChannelProfile, what: str, action: str, model: str, user_id: str, encode: object
) -> SteerRow | None:
    """The topic a member named (its number in the profile, words of its name, or any words) as a row to keep;
    None when nothing usable was named. ``encode`` embeds words (``Embedder.encode``)."""
    at = datetime.now(UTC)
    text = what.strip()
    if ascii_digits(text) and len(text) < 6:
        index = int(text) - 1
        if not 0 <= index < len(profile.topics):
            return None
        topic = profile.topics[index]
        return SteerRow(topic.label, action, model, topic.direction.tolist(), topic.radius, user_id, at)
    words = search_words(text, most=6)
    if not words:
        return None
    asked = {w.lower() for w in words}
    named = tuple(w.lower() for w in words)
    for topic in profile.topics:
        if asked & set(topic.label.split(", ")):
            direction = topic.direction.tolist()
            return SteerRow(topic.label, action, model, direction, topic.radius, user_id, at, named)
    vector = np.asarray(encode([" ".join(words)])[0], dtype=np.float32)  # type: ignore[operator]
    vector = vector / (np.linalg.norm(vector) or 1.0)
    return SteerRow(" ".join(named)[:80], action, model, vector.tolist(), WORDS_RADIUS, user_id, at, named)


def keep_steer(conn: psycopg.Connection, team_id: str, channel_id: str, row: SteerRow) -> None:
    """Keep a muted or boosted topic; a channel keeps ``MAX_STEERED``, the oldest going first."""
    kept = storage.topic_steering.load_steering(conn, team_id, channel_id)
    if len(kept) >= MAX_STEERED and row.label not in {k.label for k in kept}:
        storage.topic_steering.delete_steering(conn, team_id, channel_id, [kept[0].label])
    storage.topic_steering.upsert_steering(conn, team_id, channel_id, row)


def load_steers(conn: psycopg.Connection, team_id: str, channel_id: str, model: str) -> tuple[Steer, ...]:
    """The topics members muted or boosted in the channel, for this embedding model."""
    rows = [r for r in storage.topic_steering.load_steering(conn, team_id, channel_id) if r.model == model]
    return tuple(Steer(r.label, r.action, np.asarray(r.direction, dtype=np.float32), r.radius, r.words) for r in rows)


def load_coverage(
    conn: psycopg.Connection, team_id: str, channel_id: str, model: str, at: datetime, drafts: list[Draft]
) -> Coverage:
    """How much of the group these posts served, measured against the channel as it was at ``at`` (before them):
    its topics owed posts that got one, and its active members named as possibly interested."""
    ctx = load_channel_context(conn, team_id, channel_id, at, model)
    bots = frozenset(uid for uid, m in ctx.members.items() if m.is_bot)
    weights = channel_weights(ctx.papers, at, ScoringConfig(), ctx.emoji_overrides, bots)
    vectors = storage.embeddings.load_vectors(conn, model, [d.paper.paper_id for d in drafts])
    named = {s.fact.member for d in drafts for s in d.signals if isinstance(s.fact, MemberMayCare)}
    return measure_coverage(ctx, weights, list(vectors.values()), named)
