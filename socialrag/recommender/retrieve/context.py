"""One channel's social knowledge, loaded once per recommendation and scoped to (team, channel, as_of).

Everything a recommendation may say about the group comes from a ``ChannelContext``: the papers the
channel shared with who shared, reacted and replied and when, the members and their own settings, and
what PaperPing already recommended there. Nothing from another channel is loaded.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from socialrag.models import Sentiment
from socialrag.recommender.retrieve.emoji_readings import EmojiReading, channel_readings, learn_emoji_readings
from socialrag.rows import MemberInfo, PaperInfo, ReactionEvent, Reply, Share

if TYPE_CHECKING:
    import psycopg

RECENT_DAYS = 14  # how far back PaperPing's own posts count for spreading threads and names


@dataclass
class SharedPaper:
    info: PaperInfo
    shares: list[Share] = field(default_factory=list)
    reactions: list[ReactionEvent] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)

    @property
    def first_share(self) -> Share:
        return min(self.shares, key=lambda s: s.at)

    @property
    def last_activity(self) -> datetime:
        times = [s.at for s in self.shares] + [r.at for r in self.reactions] + [r.at for r in self.replies]
        return max(times)


@dataclass
class ChannelContext:
    team_id: str
    channel_id: str
    as_of: datetime
    papers: dict[int, SharedPaper]
    members: dict[str, MemberInfo]
    emoji_overrides: dict[str, Sentiment]
    recommended: dict[int, datetime]
    last_mentioned: dict[str, datetime]
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    # what PaperPing's recent posts leaned on, so the next one leans elsewhere: earlier papers (h5) and the
    # members it named as possibly interested (h8), with when
    recent_threads: dict[int, datetime] = field(default_factory=dict)
    recent_interested: dict[str, datetime] = field(default_factory=dict)
    model: str = "all-MiniLM-L6-v2"
    # the emoji this channel uses its own way: learnt from what follows a reaction (``emoji_overrides`` holds
    # these and the ones members set by hand, which win)
    emoji_learnt: list[EmojiReading] = field(default_factory=list)
    followed_authors: frozenset[str] = frozenset()  # Semantic Scholar ids of the authors it follows (`follow`)

    def display(self, user_id: str) -> str:
        member = self.members.get(user_id)
        return member.display_name if member else user_id

    def present(self, user_id: str | None) -> bool:
        """Whether a message in the channel may name this member in plain text: a person in the channel now (one who
        left, a deactivated account or a bot is not)."""
        member = self.members.get(user_id or "")
        return member is not None and not member.is_bot and member.in_channel

    def nameable(self, user_id: str | None) -> bool:
        """Whether an answer may name this member or quote them: a person in the channel now who keeps mentions on
        (one who left, turned mentions off or is a bot is never named)."""
        member = self.members.get(user_id or "")
        return member is not None and not member.is_bot and member.in_channel and member.mentions_enabled

    @property
    def excluded_paper_ids(self) -> set[int]:
        return set(self.papers) | set(self.recommended)


def load_emoji_readings(conn: psycopg.Connection, team_id: str, channel_id: str, model: str) -> list[EmojiReading]:
    """The emoji this channel reads its own way as of now, learnt from its history (for `status`)."""
    return load_channel_context(conn, team_id, channel_id, datetime.now(UTC), model).emoji_learnt


def load_channel_context(
    conn: psycopg.Connection, team_id: str, channel_id: str, as_of: datetime, model: str
) -> ChannelContext:
    """Everything the recommender may use about one channel, as it was before ``as_of``."""
    # storage is imported here, not above: the context's types stay usable without the database driver
    from socialrag.storage.context_rows import (
        load_last_mentions,
        load_members,
        load_paper_infos,
        load_reactions,
        load_recent_posts,
        load_recommended,
        load_replies,
        load_shares,
    )
    from socialrag.storage.embeddings import load_vectors
    from socialrag.storage.followed_authors import load_followed
    from socialrag.storage.settings import load_emoji_overrides

    shares = load_shares(conn, team_id, channel_id, as_of)
    infos = load_paper_infos(conn, list(shares), as_of)
    roots = {s.ts: s.message_id for ss in shares.values() for s in ss}
    papers = {pid: SharedPaper(infos[pid], shares[pid]) for pid in shares if pid in infos}
    by_message: dict[int, list[SharedPaper]] = defaultdict(list)
    for paper in papers.values():
        for s in paper.shares:
            by_message[s.message_id].append(paper)
    for r in load_reactions(conn, list(by_message), as_of):
        for paper in by_message[r.message_id]:
            paper.reactions.append(r)
    for reply in load_replies(conn, team_id, channel_id, roots, as_of):
        for paper in by_message[reply.root_message_id]:
            paper.replies.append(reply)
    threads, interested = load_recent_posts(conn, team_id, channel_id, as_of, as_of - timedelta(days=RECENT_DAYS))
    ctx = ChannelContext(
        recent_threads=threads,
        recent_interested=interested,
        team_id=team_id,
        channel_id=channel_id,
        as_of=as_of,
        papers=papers,
        members=load_members(conn, team_id, channel_id),
        emoji_overrides=load_emoji_overrides(conn, team_id, channel_id),
        recommended=load_recommended(conn, team_id, channel_id, as_of),
        last_mentioned=load_last_mentions(conn, team_id, channel_id, as_of),
        vectors=load_vectors(conn, model, list(papers), channel=(team_id, channel_id)),
        model=model,
        followed_authors=frozenset(f.s2_author_id for f in load_followed(conn, team_id, channel_id)),
    )
    bots = frozenset(uid for uid, m in ctx.members.items() if m.is_bot)
    ctx.emoji_learnt = learn_emoji_readings(ctx.papers, ctx.vectors, ctx.emoji_overrides, bots)
    ctx.emoji_overrides = channel_readings(ctx.emoji_learnt, ctx.emoji_overrides)
    return ctx
