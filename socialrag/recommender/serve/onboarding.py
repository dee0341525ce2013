"""The first day: a channel with little history (fewer than ``LITTLE_HISTORY`` papers shared by members), or one
that asked to start over (`/paperping start-over`), gets once ``SIZE`` candidates drawn wide from what it has (its
focus, its sources' terms, its few shares), each with *Relevant* / *Not for us* buttons.

The ratings are clicks on the post's items, which the ranking reads as it reads any reaction: *Relevant* as a
paper the group liked, *Not for us* as one it did not; they seed the channel's ranking as shares would. The next
post says it used them, once.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import numpy as np
import psycopg

from socialrag import storage
from socialrag.models import Candidate, Digest
from socialrag.recommender.explain.generate import build_draft
from socialrag.recommender.rank.engagement import select_signals
from socialrag.recommender.serve.digest import HOOKS, LINE_LIMIT
from socialrag.recommender.serve.pipeline import ChannelRequest, Ranked, paper_signals, rank_channel

LITTLE_HISTORY = 5
SIZE = 5
POOL = 40  # the best candidates the five are drawn from, as far apart as they can be


def onboarding_due(conn: psycopg.Connection, team_id: str, channel_id: str) -> str | None:
    """Why the channel's next slot offers papers to rate (``little history`` or ``start-over``), or None."""
    row = storage.topic_steering.load_onboarding(conn, team_id, channel_id)
    if row is not None and (row.paper_ids or row.reason == "start-over"):
        return None if row.paper_ids else row.reason  # offered already, or a start-over is due
    # never offered, or offered by a post that never went out (``release_unsent_onboarding``)
    shares = storage.topic_steering.count_member_shares(conn, team_id, channel_id)
    return "little history" if shares < LITTLE_HISTORY else None


def drawn_wide(r: Ranked, size: int = SIZE) -> list[Candidate]:
    """``size`` of the best ``POOL`` candidates, each as far as can be from those taken before it (the best
    first): a spread of what the channel's sources offer, not five of one kind."""
    pool = [c for c in r.ranked[:POOL] if c.paper_id in r.vectors]
    if not pool:
        return []
    taken = [pool[0]]
    while len(taken) < min(size, len(pool)):
        rest = [c for c in pool if c not in taken]
        nearest = [max(float(np.dot(r.vectors[c.paper_id], r.vectors[t.paper_id])) for t in taken) for c in rest]
        taken.append(rest[int(np.argmin(nearest))])
    return taken


def onboarding_digest(conn: psycopg.Connection, request: ChannelRequest, reason: str) -> Digest | None:
    """The first day's post, recorded so that it is offered once; None when there are not ``SIZE`` candidates
    yet (the slot then posts as usual) or the channel already had it."""
    r = rank_channel(conn, request, identified=POOL)
    picks = drawn_wide(r)
    if len(picks) < SIZE:
        return None
    generate = replace(request.config.generate, limit=min(request.config.generate.limit, LINE_LIMIT))
    drafts = []
    for pick in picks:
        signals = [
            s
            for s in paper_signals(conn, r, pick.paper_id, request.config.signal_window_days)
            if isinstance(s.fact, HOOKS)
        ]
        info = r.infos[pick.paper_id]
        drafts.append(build_draft(r.ctx, info, pick.ids, select_signals(signals, limit=1), "template", generate))
    ids = [p.paper_id for p in picks]
    if not storage.topic_steering.record_onboarding(
        conn, request.team_id, request.channel_id, reason, ids, request.as_of
    ):
        return None
    return Digest(request.team_id, request.channel_id, tuple(drafts), kind="onboarding")


def ratings_note(conn: psycopg.Connection, team_id: str, channel_id: str, at: datetime) -> str | None:
    """The line of the first post after the ratings: how many it used (said once)."""
    row = storage.topic_steering.load_onboarding(conn, team_id, channel_id)
    if row is None or not row.paper_ids or row.used_at is not None:
        return None
    rated = storage.topic_steering.count_ratings(conn, team_id, channel_id, row.paper_ids)
    if not rated or not storage.topic_steering.mark_onboarding_used(conn, team_id, channel_id, at):
        return None
    return f"This pick uses the {rated} rating{'s' if rated != 1 else ''} members gave the first five papers."
