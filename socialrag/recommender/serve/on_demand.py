"""Papers on demand (`/paperping like LINK-OR-WORDS`, the "Papers like this" shortcut): the papers closest to
what a member named that the channel has not shared and PaperPing has not posted there, found by the same
candidate sources and ranking as posts, each with one line of why from the channel's own history (the earlier
thread it is closest to, and the member who shared it unless they left). The answer is the asker's alone: nothing
of it is stored as the channel's feedback. Pure apart from ``Like``'s inputs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from socialrag.models import Candidate
from socialrag.recommender.retrieve.context import ChannelContext

SHORTLIST = 50  # the ranking's best, re-ordered by closeness to what was named
RELATED_FROM = 0.4  # cosine from which an earlier paper of the channel is named as related


@dataclass(frozen=True)
class Like:
    paper_id: int
    title: str
    url: str
    closeness: float
    related_title: str | None = None  # the channel's earlier paper it is closest to
    related_link: str | None = None  # that paper's thread
    shared_by: str | None = None  # the member who shared it, when in the channel now (a member id)


def closest(
    candidates: list[Candidate],
    vectors: dict[int, np.ndarray],
    target: np.ndarray,
    ctx: ChannelContext,
    urls: dict[int, str],
    top: int = 5,
) -> list[Like]:
    """The ``top`` candidates closest to ``target`` among the ranking's shortlist, each with its why."""
    shortlist = [c for c in candidates[:SHORTLIST] if c.paper_id in vectors]
    scored = sorted(shortlist, key=lambda c: -float(vectors[c.paper_id] @ target))[:top]
    own = [(pid, v) for pid, v in ctx.vectors.items() if pid in ctx.papers]
    out = []
    for c in scored:
        v = vectors[c.paper_id]
        like = Like(c.paper_id, c.title, urls.get(c.paper_id, ""), float(v @ target))
        if own:
            pid, best = max(own, key=lambda item: float(item[1] @ v))
            if float(best @ v) >= RELATED_FROM:
                paper = ctx.papers[pid]
                share = paper.first_share
                member = share.user_id if ctx.present(share.user_id) else None  # never one who left, nor a bot
                like = Like(
                    like.paper_id, like.title, like.url, like.closeness, paper.info.title, share.permalink, member
                )
        out.append(like)
    return out
