"""Personal picks (`/paperping for-me`): a member's own profile from what they shared, liked, clicked and saved
in the channels they are in with PaperPing, and the papers closest to it from those channels' candidates.

Only channels the member is in now are read, so nothing of a channel reaches a member outside it; the
profile is made of the member's own papers only, and a pick keeps the thread it is close to (a channel's
fact the member can see) but never who shared it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import psycopg

from socialrag import storage
from socialrag.knowledge.emoji import SAVE_EMOJI, normalize_emoji, read_sentiment
from socialrag.recommender.serve.on_demand import Like
from socialrag.storage.embeddings import as_array, load_vectors


@dataclass(frozen=True)
class Profile:
    channels: list[tuple[str, str]]  # (channel id, name) the member is in with PaperPing
    vector: np.ndarray | None  # the mean of their papers' vectors (None: nothing to go on)
    excluded: frozenset[int] = frozenset()  # their own papers and the picks already sent


@dataclass(frozen=True)
class Pick:
    channel_id: str
    like: Like


@dataclass
class Picks:
    picks: list[Pick]
    channels: list[tuple[str, str]] = field(default_factory=list)


def member_profile(conn: psycopg.Connection, model: str, team_id: str, user_id: str) -> Profile:
    """What the member engaged with well, in the channels they are in with PaperPing (as Slack said within a
    day: ``load_member_channels(current=True)``), as one vector."""
    channels = storage.workspaces.load_member_channels(conn, team_id, user_id, current=True)
    ids = [c for c, _ in channels]
    engaged = storage.picks.load_member_engagement(conn, team_id, user_id, ids) if ids else []
    liked: dict[str, set[int]] = {}
    readings = {c: storage.settings.load_emoji_overrides(conn, team_id, c) for c in {c for c, _, _ in engaged}}
    for channel_id, paper_id, how in engaged:
        if (
            how in ("share", "saved")
            or normalize_emoji(how) in SAVE_EMOJI
            or read_sentiment(how, readings[channel_id]) == "positive"
        ):
            liked.setdefault(channel_id, set()).add(paper_id)
    vectors = []
    for channel_id, papers in liked.items():
        found = load_vectors(conn, model, sorted(papers), channel=(team_id, channel_id))
        vectors += [as_array(v) for v in found.values()]
    sent = storage.picks.load_picks_sent(conn, team_id, user_id)
    excluded = frozenset({p for _, p, _ in engaged} | sent)
    if not vectors:
        return Profile(channels, None, excluded)
    mean = np.mean(np.stack(vectors), axis=0)
    return Profile(channels, np.asarray(mean / (np.linalg.norm(mean) or 1.0), dtype=np.float32), excluded)


def merge_picks(found: list[tuple[str, Like]], top: int) -> list[Pick]:
    """The ``top`` closest papers over all channels, each once (from the channel where it is closest), without
    the member who shared the thread it is near. Pure."""
    best: dict[int, tuple[str, Like]] = {}
    for channel_id, like in found:
        if like.paper_id not in best or like.closeness > best[like.paper_id][1].closeness:
            best[like.paper_id] = (channel_id, like)
    ranked = sorted(best.values(), key=lambda item: -item[1].closeness)[:top]
    return [Pick(channel_id, replace(like, shared_by=None)) for channel_id, like in ranked]
