"""A weekly digest: the channel's best few candidates in one post, one line each with its hook to the group.

The papers are the ranking's best, in order; the variety rule of single posts holds across the papers of one
digest: no two lines hang on the same earlier thread (nor on the same author, member or venue), and a member
is @-mentioned at most once (later lines name them). A candidate with nothing left to connect it to the group
is skipped while others have a hook. Each line is one or two hooks (``HOOKS``).
"""

from __future__ import annotations

from dataclasses import replace

import psycopg

from socialrag.models import (
    AuthorDiscussedHere,
    Digest,
    Draft,
    EarlierPaperByMember,
    MemberIsAuthor,
    RelatedToEarlierPaper,
    SocialSignal,
    VenueEngagedWith,
)
from socialrag.recommender.explain.generate import build_draft
from socialrag.recommender.rank.engagement import select_signals
from socialrag.recommender.retrieve.followed import FOLLOWED
from socialrag.recommender.serve.pipeline import ChannelRequest, empty, paper_signals, rank_channel

# what a line may hang a paper on: the group's earlier thread, its authors and venues, a member who wrote it
# (who may care, and how an earlier thread was received, are for single posts: five of them would crowd a digest)
HOOKS = (RelatedToEarlierPaper, EarlierPaperByMember, MemberIsAuthor, AuthorDiscussedHere, VenueEngagedWith)
LINE_LIMIT = 220  # characters of one paper's hook in a digest
LOOK_AT = 4  # candidates looked at per paper of the digest, to find ones with a hook


def hook_key(signal: SocialSignal) -> tuple[str, object]:
    """What a line hangs on: an earlier thread, an author, a member who wrote it, or a venue. Two lines of one
    digest never hang on the same."""
    f = signal.fact
    if isinstance(f, AuthorDiscussedHere):
        return ("author", f.author)
    if isinstance(f, MemberIsAuthor):
        return ("member", f.member)
    if isinstance(f, VenueEngagedWith):
        return ("venue", f.venue)
    return ("thread", signal.related_paper_id)


def recommend_digest(conn: psycopg.Connection, request: ChannelRequest, size: int) -> Digest | str:
    """The digest of ``size`` papers, or why there is none (a sentence members can act on). Its lines are
    written from the signals alone (the template), verified like posts."""
    r = rank_channel(conn, request, identified=size * LOOK_AT)
    config = request.config
    if not r.ranked:
        return empty(r, config).empty_reason or "no candidate was found"
    used: set[tuple[str, object]] = set()
    followed: list[Draft] = []  # a followed author's new paper is in the digest, with a hook or without one
    hooked: list[Draft] = []
    bare: list[Draft] = []
    generate = replace(config.generate, limit=min(config.generate.limit, LINE_LIMIT))
    # a followed author's new papers first (as many as the digest holds): the ranking never leaves them out
    first = [c for c in r.ranked if c.source == FOLLOWED][:size]
    for candidate in first + [c for c in r.ranked[: size * LOOK_AT] if c.source != FOLLOWED]:
        if len(followed) + len(hooked) >= size:
            break
        signals = [
            s
            for s in paper_signals(conn, r, candidate.paper_id, config.signal_window_days)
            if isinstance(s.fact, HOOKS) and hook_key(s) not in used
        ]
        chosen = select_signals(signals, limit=2)
        info = r.infos[candidate.paper_id]
        draft = build_draft(r.ctx, info, candidate.ids, chosen, "template", generate, score=candidate.score)
        if not chosen and candidate.source != FOLLOWED:
            bare.append(draft)
            continue
        used.update(hook_key(s) for s in chosen)
        for uid in draft.mentions:  # notified once: later lines of this digest name them
            r.ctx.last_mentioned[uid] = request.as_of
        (followed if candidate.source == FOLLOWED else hooked).append(draft)
    drafts = (followed + hooked + bare)[:size]
    return Digest(request.team_id, request.channel_id, tuple(drafts))
