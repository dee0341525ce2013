"""Step 2: the social signals h1 to h9 of a candidate paper for one channel, each with its provenance. Pure.

Every signal is computed from a ``ChannelContext`` (one channel, before ``as_of``) and public paper data,
within a look-back window (default three months). The provenance on each signal (members, permalinks,
emoji, authors, venues, counts) is what the explanation may state; the verifier holds it to that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta

import numpy as np

from socialrag.knowledge.emoji import is_click, normalize_emoji, read_sentiment
from socialrag.models import (
    AuthorDiscussedHere,
    EarlierPaperByMember,
    EarlierReception,
    MemberIsAuthor,
    MemberMayCare,
    RelatedToEarlierPaper,
    Relation,
    SharedAffiliation,
    SocialSignal,
    VenueEngagedWith,
    WhyMemberMayCare,
)
from socialrag.names import fold_text
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper
from socialrag.rows import PaperInfo

SIMILAR = 0.5  # cosine at which two papers count as "similar"
MEMBER_INTEREST = 0.35  # cosine at which a member's interests count as close to a paper
RECENT_THREAD_PENALTY = 0.25  # what pointing at an earlier paper a recent post pointed at costs (h5)
RECENT_MEMBER_PENALTY = 0.1  # what naming a member a recent post named costs (h8)
MEMBER_NEAREST = 3  # h8: a member's closeness is the mean cosine of their closest few papers, not of all


FOLLOWED_STRENGTH = 10.0  # a followed author's h2 comes before any other author's


@dataclass(frozen=True)
class Relations:
    """Public links between the candidate and the channel's papers, loaded by the caller."""

    cites: Mapping[int, tuple[str, ...]] = field(default_factory=dict)  # channel paper id -> citing sentences
    cited_by: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    member_affiliations: Mapping[str, frozenset[str]] = field(default_factory=dict)
    member_publications: Mapping[str, Sequence[np.ndarray]] = field(default_factory=dict)
    followed: frozenset[str] = frozenset()  # the Semantic Scholar ids of the authors the channel follows


@dataclass(frozen=True)
class SignalInput:
    ctx: ChannelContext
    candidate: PaperInfo
    vector: np.ndarray | None
    relations: Relations
    window_days: int = 90


def _recent(inp: SignalInput) -> list[SharedPaper]:
    since = inp.ctx.as_of - timedelta(days=inp.window_days)
    return [p for p in inp.ctx.papers.values() if p.last_activity >= since]


def _author_keys(info: PaperInfo) -> set[object]:
    return {a.author_id for a in info.authors} | {a.normalized for a in info.authors}


def _positive_engagers(paper: SharedPaper, ctx: ChannelContext) -> set[str]:
    users = {s.user_id for s in paper.shares if s.user_id} | {r.user_id for r in paper.replies if r.user_id}
    users |= {r.user_id for r in paper.reactions if read_sentiment(r.emoji, ctx.emoji_overrides) == "positive"}
    return {u for u in users if u in ctx.members and not ctx.members[u].is_bot}


def signal_h1(inp: SignalInput) -> list[SocialSignal]:
    """An author of the candidate is a channel member (linked S2 author id, ORCID or a confirmed name)."""
    out = []
    for member in inp.ctx.members.values():
        if member.is_bot:
            continue
        for a in inp.candidate.authors:
            linked = a.author_id in member.author_ids or (member.s2_author_id and a.s2_author_id == member.s2_author_id)
            if linked or a.normalized in member.confirmed_names:
                out.append(
                    SocialSignal(
                        MemberIsAuthor(member.user_id, a.name),
                        1.0,
                        members=(member.user_id,),
                        authors=(a.name,),
                    )
                )
                break
    return out


def signal_h2(inp: SignalInput) -> list[SocialSignal]:
    """An author of the candidate wrote papers the channel discussed recently (how many), or is an author the
    channel follows (`/paperping follow`), which comes first."""
    out = []
    recent = _recent(inp)
    for a in inp.candidate.authors:
        hits = [p for p in recent if a.author_id in _author_keys(p.info) or a.normalized in _author_keys(p.info)]
        followed = bool(a.s2_author_id) and a.s2_author_id in inp.relations.followed
        if hits or followed:
            links = tuple(p.first_share.permalink for p in hits if p.first_share.permalink)
            out.append(
                SocialSignal(
                    AuthorDiscussedHere(a.name, len(hits), followed=followed),
                    float(len(hits)) + (FOLLOWED_STRENGTH if followed else 0.0),
                    permalinks=links,
                    authors=(a.name,),
                    counts=(len(hits),),
                )
            )
    return sorted(out, key=lambda s: s.strength, reverse=True)[:1]


def signal_h3(inp: SignalInput) -> list[SocialSignal]:
    """An author's affiliation is one a member shares."""
    for a in inp.candidate.authors:
        for aff in a.affiliations:
            key = fold_text(aff)
            for uid, affs in inp.relations.member_affiliations.items():
                if key and key in affs and uid in inp.ctx.members:
                    return [
                        SocialSignal(
                            SharedAffiliation(aff, uid, a.name),
                            1.0,
                            members=(uid,),
                            authors=(a.name,),
                        )
                    ]
    return []


def signal_h4(inp: SignalInput, weights: Mapping[int, float]) -> list[SocialSignal]:
    """The candidate's venue recurs among the papers the group engaged with positively, recently."""
    venue = inp.candidate.venue_id
    if venue is None or not inp.candidate.venue:
        return []
    hits = [p for p in _recent(inp) if p.info.venue_id == venue and weights.get(p.info.paper_id, 0.0) > 0]
    if not hits:
        return []
    links = tuple(p.first_share.permalink for p in hits if p.first_share.permalink)
    return [
        SocialSignal(
            VenueEngagedWith(inp.candidate.venue, len(hits)),
            float(len(hits)),
            permalinks=links,
            venues=(inp.candidate.venue,),
            counts=(len(hits),),
        )
    ]


def _relation(inp: SignalInput, p: SharedPaper) -> tuple[float, RelatedToEarlierPaper] | None:
    pid = p.info.paper_id
    shared = tuple(
        a.name
        for a in inp.candidate.authors
        if a.author_id in {b.author_id for b in p.info.authors}
        or a.normalized in {b.normalized for b in p.info.authors}
    )
    sim = float(inp.ctx.vectors[pid] @ inp.vector) if inp.vector is not None and pid in inp.ctx.vectors else 0.0
    relation: Relation
    context: str | None = None
    strength = sim
    if pid in inp.relations.cites:
        relation, context = "cites", next(iter(inp.relations.cites[pid]), None)
        strength += 3.0
    elif pid in inp.relations.cited_by:
        relation, context = "cited_by", next(iter(inp.relations.cited_by[pid]), None)
        strength += 3.0
    elif shared:
        relation = "shared_authors"
        strength += 1.0 + 0.1 * len(shared)
    elif sim >= SIMILAR:
        relation = "similar"
    else:
        return None
    fact = RelatedToEarlierPaper(p.info.title or "", relation, round(sim, 3), context, shared)
    return strength, fact


def signal_h5(inp: SignalInput) -> list[SocialSignal]:
    """The candidate's relation to an earlier channel paper: cites it, is cited by it, shares authors,
    or is semantically close; the strongest such paper is kept."""
    best: tuple[float, SharedPaper, RelatedToEarlierPaper] | None = None
    bots = {uid for uid, m in inp.ctx.members.items() if m.is_bot}
    for p in _recent(inp):
        by_people = any(s.user_id not in bots for s in p.shares)
        if not p.info.title or (not by_people and not p.reactions and not p.replies):
            continue  # PaperPing's own post that nobody answered is no thread to point the group to
        rel = _relation(inp, p)
        if rel and not by_people:
            rel = (rel[0] - 0.3, rel[1])  # a thread members started says more than one PaperPing started
        if rel and p.info.paper_id in inp.ctx.recent_threads:
            rel = (rel[0] - RECENT_THREAD_PENALTY, rel[1])  # a recent post already pointed there
        if rel and (best is None or rel[0] > best[0]):
            best = (rel[0], p, rel[1])
    if best is None:
        return []
    strength, p, fact = best
    human = next((s for s in sorted(p.shares, key=lambda s: s.at) if s.user_id and s.user_id not in bots), None)
    share = human or p.first_share
    fact = replace(fact, sharer=human.user_id if human else None, posted_by_paperping=human is None)
    members = (share.user_id,) if human and share.user_id in inp.ctx.members else ()
    return [
        SocialSignal(
            fact,
            strength,
            members=members,
            permalinks=(share.permalink,) if share.permalink else (),
            authors=fact.shared_authors,
            related_paper_id=p.info.paper_id,
        )
    ]


def signal_h6(inp: SignalInput, related: SharedPaper) -> list[SocialSignal]:
    """How members reacted and replied to that earlier paper."""
    if not related.reactions and not related.replies:
        return []
    emoji = Counter(normalize_emoji(r.emoji) for r in related.reactions if not is_click(r.emoji))
    positive = sum(1 for r in related.reactions if read_sentiment(r.emoji, inp.ctx.emoji_overrides) == "positive")
    repliers = tuple(dict.fromkeys(r.user_id for r in sorted(related.replies, key=lambda r: r.at) if r.user_id))
    first = min(related.replies, key=lambda r: r.at) if related.replies else None
    fact = EarlierReception(
        paper_title=related.info.title or "",
        reactions=len(related.reactions),
        positive_reactions=positive,
        replies=len(related.replies),
        top_emoji=tuple(e for e, _ in emoji.most_common(3)),
        repliers=repliers,
        first_reply_id=first.message_id if first else None,
    )
    members = tuple(m for m in repliers if m in inp.ctx.members)
    links = tuple(r.permalink for r in related.replies if r.permalink)[:1] or (
        (related.first_share.permalink,) if related.first_share.permalink else ()
    )
    strength = positive + 0.7 * len(related.replies) - (len(related.reactions) - positive)
    return [
        SocialSignal(
            fact,
            strength,
            members=members,
            permalinks=links,
            emoji=tuple(emoji),
            counts=(len(related.reactions), positive, len(related.replies)),
            related_paper_id=related.info.paper_id,
        )
    ]


def signal_h7(inp: SignalInput, related: SharedPaper, h5: RelatedToEarlierPaper | None = None) -> list[SocialSignal]:
    """That earlier paper was written by a member, with how the candidate relates to it (its ``h5``)."""
    ids = {a.author_id for a in related.info.authors}
    for member in inp.ctx.members.values():
        if member.is_bot:
            continue
        names = set(member.confirmed_names)
        if member.author_ids & ids or names & {a.normalized for a in related.info.authors}:
            link = related.first_share.permalink
            return [
                SocialSignal(
                    EarlierPaperByMember(
                        member.user_id,
                        related.info.title or "",
                        relation=h5.relation if h5 else "similar",
                        shared_authors=h5.shared_authors if h5 else (),
                    ),
                    1.0,
                    members=(member.user_id,),
                    permalinks=(link,) if link else (),
                    related_paper_id=related.info.paper_id,
                )
            ]
    return []


def member_profiles(inp: SignalInput) -> dict[str, list[SharedPaper]]:
    """The recent papers each human member engaged with positively (shared, replied, liked)."""
    profiles: dict[str, list[SharedPaper]] = {}
    for p in _recent(inp):
        for uid in _positive_engagers(p, inp.ctx):
            profiles.setdefault(uid, []).append(p)
    return profiles


def member_shares(inp: SignalInput) -> dict[str, list[SharedPaper]]:
    """The recent papers each member shared themselves (``signal_h8`` asks only of human members)."""
    out: dict[str, list[SharedPaper]] = {}
    for p in _recent(inp):
        for uid in {s.user_id or "" for s in p.shares} - {""}:
            out.setdefault(uid, []).append(p)
    return out


def signal_h8(inp: SignalInput, exclude: frozenset[str] = frozenset()) -> list[SocialSignal]:
    """The member whose own shares (else other positive engagement) are closest to the candidate, other than
    ``exclude`` (e.g. the member already named as the one who shared the related paper)."""
    if inp.vector is None:
        return []
    best: tuple[float, str, int, float] | None = None
    own = member_shares(inp)
    for uid, engaged in member_profiles(inp).items():
        if uid in exclude or not inp.ctx.members[uid].in_channel:  # one who left is no one to tell the channel of
            continue
        papers = own.get(uid) or engaged
        vecs = [inp.ctx.vectors[p.info.paper_id] for p in papers if p.info.paper_id in inp.ctx.vectors]
        if not vecs:
            continue
        sim = float(np.sort(np.stack(vecs) @ inp.vector)[::-1][:MEMBER_NEAREST].mean())
        # a member a recent post already named comes after the others who may care as much
        rank = sim - (RECENT_MEMBER_PENALTY if uid in inp.ctx.recent_interested else 0.0)
        if sim >= MEMBER_INTEREST and (best is None or rank > best[0]):
            best = (rank, uid, len(vecs), sim)
    if best is None:
        return []
    return [SocialSignal(MemberMayCare(best[1], round(best[3], 3)), best[3], members=(best[1],))]


def signal_h9(inp: SignalInput, member: str) -> list[SocialSignal]:
    """Why that member: liked similar papers, this author's papers, this venue, or wrote similar papers."""
    liked = member_profiles(inp).get(member, [])
    reasons: list[SocialSignal] = []
    if inp.vector is not None:
        similar = [
            p
            for p in liked
            if p.info.paper_id in inp.ctx.vectors and float(inp.ctx.vectors[p.info.paper_id] @ inp.vector) >= SIMILAR
        ]
        if similar:
            reasons.append(
                SocialSignal(
                    WhyMemberMayCare(member, "similar", len(similar)),
                    1.0 + len(similar),
                    members=(member,),
                    counts=(len(similar),),
                )
            )
        own = [v for v in inp.relations.member_publications.get(member, ()) if float(v @ inp.vector) >= SIMILAR]
        if own:
            reasons.append(
                SocialSignal(
                    WhyMemberMayCare(member, "own", len(own)),
                    1.5 + len(own),
                    members=(member,),
                    counts=(len(own),),
                )
            )
    for a in inp.candidate.authors:
        by_author = [p for p in liked if a.author_id in _author_keys(p.info) or a.normalized in _author_keys(p.info)]
        if by_author:
            reasons.append(
                SocialSignal(
                    WhyMemberMayCare(member, "author", len(by_author), author=a.name),
                    2.0 + len(by_author),
                    members=(member,),
                    authors=(a.name,),
                    counts=(len(by_author),),
                )
            )
            break
    if inp.candidate.venue_id is not None and inp.candidate.venue:
        at_venue = [p for p in liked if p.info.venue_id == inp.candidate.venue_id]
        if len(at_venue) >= 2:
            reasons.append(
                SocialSignal(
                    WhyMemberMayCare(member, "venue", len(at_venue), venue=inp.candidate.venue),
                    0.5 + len(at_venue),
                    members=(member,),
                    venues=(inp.candidate.venue,),
                    counts=(len(at_venue),),
                )
            )
    return sorted(reasons, key=lambda s: s.strength, reverse=True)[:1]


def compute_signals(inp: SignalInput, weights: Mapping[int, float]) -> list[SocialSignal]:
    """All of h1 to h9 that hold for the candidate in this channel."""
    signals = signal_h1(inp) + signal_h2(inp) + signal_h3(inp) + signal_h4(inp, weights)
    h5 = signal_h5(inp)
    signals += h5
    if h5 and h5[0].related_paper_id in inp.ctx.papers:
        related = inp.ctx.papers[h5[0].related_paper_id]
        link = h5[0].fact if isinstance(h5[0].fact, RelatedToEarlierPaper) else None
        signals += signal_h6(inp, related) + signal_h7(inp, related, link)
    # a member already named, or an author of the paper (h1: never offered their own paper as someone else's)
    named = frozenset(m for s in signals if s.kind in ("h1", "h5", "h7") for m in s.members)
    h8 = signal_h8(inp, exclude=named)
    signals += h8
    if h8:
        signals += signal_h9(inp, h8[0].members[0])
    return signals
