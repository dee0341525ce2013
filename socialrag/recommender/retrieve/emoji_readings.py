"""Each channel's own reading of its emoji, learnt from what follows a reaction. Pure.

The default table reads :+1: as "liked", but some groups use it as "seen". What a group does after a reaction
tells the two apart: a paper it liked tends to be followed up (someone replies in its thread, saves it, shares
it again, or shares another paper on its topic soon after), a paper it only saw does not. For each emoji used
on enough papers, PaperPing compares how often papers with that emoji were followed up with the same rate for
papers nobody reacted to and for papers with the channel's other positive emoji. An emoji whose papers are
followed up like the unreacted ones reads as neutral here; a neutral one whose papers are followed up like the
liked ones reads as positive. A reading set by hand (``/paperping emoji``) always wins; negative emoji are
never re-read (a reply under a :-1: is a disagreement, not a like), nor are the save emoji.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

import numpy as np

from socialrag.knowledge.emoji import SAVE_EMOJI, is_click, is_emoji_name, normalize_emoji, read_sentiment
from socialrag.models import Sentiment
from socialrag.rows import PaperInfo, ReactionEvent, Reply, Share


class SharedPaper(Protocol):
    """What this module reads of a paper shared in the channel (``context.SharedPaper`` is one)."""

    info: PaperInfo
    shares: list[Share]
    reactions: list[ReactionEvent]
    replies: list[Reply]

    @property
    def first_share(self) -> Share: ...


FOLLOW_UP_DAYS = 21  # a reply, save, re-share or share on the topic this soon after the paper counts
TOPIC_SIMILARITY = 0.7  # a later paper at least this close (cosine) is "on the topic"
MIN_PAPERS = 6  # papers with the emoji, without any reaction, and with other positive emoji, each at least
MIN_SEPARATION = 0.15  # liked papers must be followed up this much more often than unreacted ones to learn from
NEUTRAL_BELOW = 0.35  # an emoji's rate below this fraction of the way from unreacted to liked reads as neutral
POSITIVE_ABOVE = 0.65  # and above this fraction, as positive
FOLLOW_UP_CELLS = 100_000  # papers x shares whose cosines the follow-up check works on at once


@dataclass(frozen=True)
class EmojiReading:
    """What PaperPing learnt of one emoji in one channel: its default and learnt reading, and the evidence."""

    emoji: str
    default: Sentiment
    learnt: Sentiment
    followed: int  # papers with the emoji that were followed up
    papers: int  # papers with the emoji
    unreacted: tuple[int, int]  # (followed up, papers) among papers nobody reacted to
    liked: tuple[int, int]  # (followed up, papers) among papers with the channel's other positive emoji

    def describe(self) -> str:
        """One line for `status`: the learnt reading and why."""
        return (
            f":{self.emoji}: reads as {self.learnt} here, not {self.default}: {self.followed} of {self.papers} papers "
            f"with it were followed up, against {self.unreacted[0]} of {self.unreacted[1]} nobody reacted to and "
            f"{self.liked[0]} of {self.liked[1]} with other positive emoji "
            f"(`/paperping emoji {self.emoji} {self.default}` sets it back by hand)"
        )


def _follow_ups(shared: list[SharedPaper], vectors: Mapping[int, np.ndarray]) -> dict[int, tuple[bool, frozenset[str]]]:
    """For each paper: whether the group did something with it soon after it was shared (a reply by someone
    other than the sharer, a second share, another paper on its topic shared by someone else), and the save
    emoji others put on it in that time (kept apart: the emoji being judged may be one of them)."""
    out = {}
    topic: list[tuple[int, datetime, datetime, str | None, np.ndarray]] = []  # (paper, from, until, sharer, vector)
    for p in shared:
        first = p.first_share
        sharer, until = first.user_id, first.at + timedelta(days=FOLLOW_UP_DAYS)
        done = any(r.user_id != sharer and r.at <= until for r in p.replies)
        done = done or any(s.user_id not in (None, sharer) and first.at < s.at <= until for s in p.shares)
        vector = vectors.get(p.info.paper_id)
        if not done and vector is not None:
            topic.append((p.info.paper_id, first.at, until, sharer, vector))
        named = ((normalize_emoji(r.emoji), r) for r in p.reactions)
        saves = frozenset(e for e, r in named if e in SAVE_EMOJI and r.user_id != sharer and r.at <= until)
        out[p.info.paper_id] = (done, saves)
    # in time order only: two shares of one moment, one by nobody known, cannot be ordered by who shared them
    shares = sorted(((s.at, s.user_id, p.info.paper_id) for p in shared for s in p.shares), key=lambda s: s[0])
    for pid in _on_topic_later(shares, topic, vectors):
        out[pid] = (True, out[pid][1])
    return out


def _on_topic_later(
    shares: list[tuple[datetime, str | None, int]],
    papers: list[tuple[int, datetime, datetime, str | None, np.ndarray]],
    vectors: Mapping[int, np.ndarray],
) -> list[int]:
    """The ``papers`` (id, shared at, until, by, vector) after which someone else shared another paper at least
    ``TOPIC_SIMILARITY`` close, after the paper and by ``until``; ``shares`` (at, by, paper) in time order. Papers
    go through in blocks, each against the band of shares its papers' windows span (at most ``FOLLOW_UP_CELLS``
    cosines at once), so a channel's whole history is a few matrix products and memory stays bounded."""
    paper_of = np.array([pid for _, _, pid in shares], dtype=np.int64)
    has = np.array([pid in vectors for pid in paper_of.tolist()], dtype=bool)
    if not papers or not has.any():
        return []
    times = [at for at, _, _ in shares]
    people: dict[str | None, int] = {None: 0}
    by = np.array([people.setdefault(who, len(people)) for _, who, _ in shares], dtype=np.int64)
    stacked = np.stack([vectors[pid] for pid in paper_of[has].tolist()])
    matrix = np.zeros((len(shares), stacked.shape[1]), dtype=stacked.dtype)
    matrix[has] = stacked
    ids = np.array([pid for pid, _, _, _, _ in papers], dtype=np.int64)
    lo = np.array([bisect_right(times, at) for _, at, _, _, _ in papers], dtype=np.int64)
    hi = np.array([bisect_right(times, until) for _, _, until, _, _ in papers], dtype=np.int64)
    sharer = np.array([people.get(who, -1) for _, _, _, who, _ in papers], dtype=np.int64)  # None: 0, as in ``by``
    found: list[int] = []
    order = np.argsort(lo, kind="stable")
    start = 0
    while start < len(order):
        end, top = start + 1, int(hi[order[start]])  # the block grows while papers x its band stays in bounds
        while end < len(order) and (end + 1 - start) * (max(top, int(hi[order[end]])) - lo[order[start]]) <= (
            FOLLOW_UP_CELLS
        ):
            top = max(top, int(hi[order[end]]))
            end += 1
        block = order[start:end]
        band = np.arange(lo[order[start]], top)  # a window ends after it starts: ``top`` is never below
        start = end
        if not len(band):
            continue
        cos = np.stack([papers[i][4] for i in block.tolist()]) @ matrix[band].T
        other = (band >= lo[block, None]) & (band < hi[block, None]) & has[band] & (paper_of[band] != ids[block, None])
        other &= (by[band] != 0) & (by[band] != sharer[block, None])
        found.extend(ids[block][((cos >= TOPIC_SIMILARITY) & other).any(axis=1)].tolist())
    return found


def learn_emoji_readings(
    papers: Mapping[int, SharedPaper],
    vectors: Mapping[int, np.ndarray],
    manual: Mapping[str, Sentiment] | None = None,
    bots: frozenset[str] = frozenset(),
) -> list[EmojiReading]:
    """The emoji whose use in this channel differs from the default reading, with the evidence; emoji set by
    hand (``manual``) and negative ones are left as they are."""
    manual = manual or {}
    shared = [p for p in papers.values() if p.shares and any(s.user_id not in bots for s in p.shares)]
    used: dict[str, set[int]] = {}
    for p in shared:
        sharer = p.first_share.user_id
        for r in p.reactions:
            if r.user_id != sharer and r.user_id not in bots:
                used.setdefault(normalize_emoji(r.emoji), set()).add(p.info.paper_id)
    if not used:
        return []
    follow = _follow_ups(shared, vectors)
    reacted = set().union(*used.values())
    unreacted = [p.info.paper_id for p in shared if p.info.paper_id not in reacted]

    def rate(ids: Collection[int], without: str) -> tuple[int, int]:
        return sum(follow[i][0] or bool(follow[i][1] - {without}) for i in ids), len(ids)

    out = []
    for emoji, ids in sorted(used.items()):
        default = read_sentiment(emoji)
        if emoji in manual or default == "negative" or emoji in SAVE_EMOJI or is_click(emoji) or len(ids) < MIN_PAPERS:
            continue
        if not is_emoji_name(emoji):  # a name from an export file that no Slack emoji could have: not shown
            continue
        liked = set().union(*(used[e] for e in used if e != emoji and read_sentiment(e, manual) == "positive")) - ids
        if len(unreacted) < MIN_PAPERS or len(liked) < MIN_PAPERS:
            continue
        base, top, mine = rate(unreacted, emoji), rate(liked, emoji), rate(ids, emoji)
        r0, r1 = base[0] / base[1], top[0] / top[1]
        if r1 - r0 < MIN_SEPARATION:
            continue  # the channel's follow-ups do not tell liked papers from the others
        where = (mine[0] / mine[1] - r0) / (r1 - r0)
        learnt: Sentiment = default
        if default == "positive" and where < NEUTRAL_BELOW:
            learnt = "neutral"
        elif default == "neutral" and where > POSITIVE_ABOVE:
            learnt = "positive"
        if learnt != default:
            out.append(EmojiReading(emoji, default, learnt, mine[0], mine[1], base, top))
    return out


def channel_readings(learnt: list[EmojiReading], manual: Mapping[str, Sentiment]) -> dict[str, Sentiment]:
    """The channel's readings that differ from the default table: the learnt ones, then those set by hand."""
    return {**{r.emoji: r.learnt for r in learnt}, **manual}
