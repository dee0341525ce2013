"""The recommender: one channel's context -> candidates -> scores -> signals -> a verified ``Draft``.

Nothing here posts; the Slack side posts the ``Draft``. ``as_of`` replays the past: only history before it
is used. Candidates are papers published in the window the channel's fit learnt it picks from, narrowed to
the ``window_days`` before it when asked (any date when neither says).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import numpy as np
import psycopg

from socialrag import storage
from socialrag.errors import PaperPingError
from socialrag.models import Candidate, Draft, SocialSignal, Style
from socialrag.names import fold_text
from socialrag.recommender.explain.generate import GenerateConfig, build_draft
from socialrag.recommender.explain.llm import LLMClient
from socialrag.recommender.rank.calibrate import RankerModel
from socialrag.recommender.rank.coverage import RECENT_POSTS, Coverage, Interests, clustered_interests
from socialrag.recommender.rank.diversity import diversify
from socialrag.recommender.rank.engagement import ScoringConfig, channel_weights, select_signals
from socialrag.recommender.rank.features import FEATURES, features, fill_unknown
from socialrag.recommender.rank.history import build_history
from socialrag.recommender.rank.refit import load_fit
from socialrag.recommender.rank.universe import build_universe
from socialrag.recommender.retrieve.candidates import CandidateQuery, CandidateSource
from socialrag.recommender.retrieve.context import ChannelContext, load_channel_context
from socialrag.recommender.retrieve.followed import FOLLOWED
from socialrag.recommender.retrieve.present_members import for_the_channel
from socialrag.recommender.retrieve.signals import Relations, SignalInput, compute_signals
from socialrag.recommender.retrieve.topics import Steer, boosted_by, muted
from socialrag.recommender.serve.paper_text import with_body, with_section_line
from socialrag.rows import PaperInfo
from socialrag.storage.context_rows import load_paper_infos
from socialrag.storage.embeddings import load_vectors

log = logging.getLogger(__name__)
FOCUS_ID = -1  # the pseudo paper standing for a channel's focus


@dataclass(frozen=True)
class RecommendConfig:
    model: str
    style: Style = "template+tldr"
    window_days: int | None = None
    signal_window_days: int = 90
    top: int = 5
    focus: np.ndarray | None = None  # a topic members asked to lean toward (`/paperping focus`)
    focus_words: str | None = None  # its words, for the focus search
    focus_papers: frozenset[int] = frozenset()  # the papers its links point to (never candidates)
    categories: tuple[str, ...] = ()  # arXiv categories members set
    steering: tuple[Steer, ...] = ()  # topics members muted or boosted (`/paperping profile`)
    scoring: ScoringConfig = field(default_factory=ScoringConfig)
    generate: GenerateConfig = field(default_factory=GenerateConfig)
    serving: bool = (
        False  # the moment is now, not a replay (``is_serving``): a paper counts from its first possible day
    )


@dataclass(frozen=True)
class ChannelRequest:
    """One channel's recommendation asked for at one moment: where, as of when, from which candidate sources,
    and how (``RecommendConfig``)."""

    team_id: str
    channel_id: str
    as_of: datetime
    sources: Sequence[CandidateSource]
    config: RecommendConfig


@dataclass
class Recommendation:
    candidates: list[Candidate]
    draft: Draft | None
    all_signals: list[SocialSignal] = field(default_factory=list)
    context: ChannelContext | None = None
    empty_reason: str | None = None  # when there is no draft: why, in a sentence members can act on


# a moment at most this long before the clock is now (a slot claimed late, a command): older is a replay
REPLAY_AFTER = timedelta(hours=6)


def is_serving(as_of: datetime, clock: datetime) -> bool:
    """Whether a recommendation at ``as_of`` serves the channel now rather than replaying its past (``recommend
    --as-of``, an evaluation): a replay offers a catalog paper only once the month or year its date is known to
    has ended (it surely existed then); serving, one in the store from the first day its day or month allows. Pure."""
    return as_of >= clock - REPLAY_AFTER


# One recommendation asks its sources for at most this long in all (each request has its own deadline too,
# ``http.PoliteClient``); the sources not asked by then are skipped for this post, and the catalog, asked first,
# always is.
SOURCES_SECONDS = 120.0


def gather_candidates(
    conn: psycopg.Connection,
    sources: Sequence[CandidateSource],
    query: CandidateQuery,
    *,
    budget: float = SOURCES_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> dict[int, str]:
    """Candidate paper id -> the source that found it first, without anything the channel already had."""
    found: dict[int, str] = {}
    excluded = query.ctx.excluded_paper_ids | query.exclude
    started = clock()
    for source in sources:
        if clock() - started > budget:
            log.warning("candidate source %s skipped: the sources had %.0f s for this post", source.name, budget)
            continue
        so_far = sum(1 for pid in found if pid not in excluded)
        try:
            fetched = source.fetch_candidates(conn, replace(query, found_before=so_far))
        except psycopg.OperationalError:
            raise  # the database itself is away: the recommendation fails as a whole and is retried
        except PaperPingError as exc:  # a source that is down costs its candidates, not the post
            log.warning("candidate source %s failed; going on without it: %s", source.name, exc)
            continue
        except Exception:  # and so does one that fails in a way nobody foresaw (logged in full)
            log.exception("candidate source %s failed; going on without it", source.name)
            continue
        for pid in fetched:
            found.setdefault(pid, source.name)
    return {pid: src for pid, src in found.items() if pid not in excluded}


def score_candidates(
    ctx: ChannelContext,
    infos: dict[int, PaperInfo],
    vectors: dict[int, np.ndarray],
    sources: dict[int, str],
    recent: list[np.ndarray],
    config: ScoringConfig,
    ranker: RankerModel,
    focus: np.ndarray | None = None,
    steering: Sequence[Steer] = (),
    interests: Interests | None = None,
) -> list[Candidate]:
    """Every candidate with its score and the parts of it, best first (after re-ranking against the last
    posts, so successive posts differ, and toward the channel's ``interests`` its last month of posts left
    waiting, ``coverage``). ``recent`` is the last month's posts, newest first. Candidates whose scores tie keep
    paper-id order, whatever order ``infos`` came in. Pure."""
    seen_titles = {fold_text(p.info.title) for p in ctx.papers.values() if p.info.title}
    kept = sorted(
        pid for pid, info in infos.items() if pid in vectors and info.title and fold_text(info.title) not in seen_titles
    )
    if not kept:
        return []
    universe = build_universe(
        {**{pid: p.info for pid, p in ctx.papers.items()}, **{pid: infos[pid] for pid in kept}},
        {**ctx.vectors, **{pid: vectors[pid] for pid in kept}},
    )
    history = build_history(ctx, universe, config.half_life_days)
    at = ctx.as_of.timestamp()
    state, _ = history.state_at(at, focus, steering=[(s.direction, s.action == "boost") for s in steering])
    state = replace(state, taste=ranker.taste)  # the channel's model of the paper itself, when a refit learnt one
    index = universe.index
    rows = np.array([index[pid] for pid in kept], dtype=np.int64)
    x = fill_unknown(features(state, universe.candidates(rows, at), at))
    scores = ranker.serving_scores(x)
    linear = ranker.score(x)  # what the paper model's order of the blend's shortlist moved is its part of a score
    last = np.stack(recent[: config.recent_for_diversity]) if recent else None
    posted = np.stack(recent) if recent else None
    order = diversify(scores, universe.vectors[rows], 10, last, config.diversity_weight, interests, posted)
    out = []
    for i in order:
        contributions = ((name, round(float(ranker.weights[k] * x[i, k]), 4)) for k, name in enumerate(FEATURES))
        parts = {name: value for name, value in contributions if value}
        if scores[i] != linear[i]:
            parts["taste"] = round(float(scores[i] - linear[i]), 4)
        out.append(
            Candidate(kept[i], infos[kept[i]].title or "", float(scores[i]), sources.get(kept[i], "?"), parts=parts)
        )
    return out


def channel_interests(ctx: ChannelContext, weights: dict[int, float]) -> Interests:
    """The channel's interests that posts should cover: its topics as the profile clusters them (the papers it
    shared with a title and a vector), without naming them."""
    ids = [pid for pid in ctx.papers if pid in ctx.vectors and ctx.papers[pid].info.title]
    if not ids:
        return Interests(np.zeros((0, 0), dtype=np.float32), np.zeros(0), np.zeros(0))
    vectors = np.stack([ctx.vectors[pid] for pid in ids])
    return clustered_interests(vectors, np.array([weights.get(pid, 0.0) for pid in ids]))


def measure_coverage(
    ctx: ChannelContext, weights: dict[int, float], picks: Sequence[np.ndarray], named: set[str], days: int = 90
) -> Coverage:
    """How much of the group these picks (their vectors) served: the channel's topics owed posts (as of
    ``ctx``) that got one, and the members active in the last ``days`` named (``named``) as possibly interested."""
    interests = channel_interests(ctx, weights)
    got = interests.counts(np.stack(picks) if picks else None)
    since = ctx.as_of - timedelta(days=days)
    active = {
        uid
        for p in ctx.papers.values()
        for uid, at in [(s.user_id, s.at) for s in p.shares] + [(r.user_id, r.at) for r in p.replies]
        if uid in ctx.members and not ctx.members[uid].is_bot and at >= since
    }
    return Coverage(len(interests), int((got > 0).sum()), len(active), len(active & named))


def load_relations(conn: psycopg.Connection, ctx: ChannelContext, candidate_id: int) -> Relations:
    """Citation links between a candidate and the channel's papers, and members' affiliations and papers."""
    channel_ids = list(ctx.papers)
    cites: dict[int, tuple[str, ...]] = {}
    cited_by: dict[int, tuple[str, ...]] = {}
    for citing, cited, contexts in storage.citations.load_citation_links(conn, candidate_id, channel_ids):
        if citing == candidate_id:
            cites[cited] = tuple(contexts or ()) or cites.get(cited, ())
        else:
            cited_by[citing] = tuple(contexts or ()) or cited_by.get(citing, ())
    author_members: dict[int, list[str]] = defaultdict(list)
    for uid, member in ctx.members.items():
        for aid in member.author_ids:
            author_members[aid].append(uid)
    affiliations: dict[str, set[str]] = defaultdict(set)
    publications: dict[str, list[int]] = defaultdict(list)
    if author_members:
        for aid, pid, affs in storage.citations.load_authored_papers(conn, list(author_members)):
            for uid in author_members[aid]:
                affiliations[uid].update(fold_text(a) for a in affs or ())
                publications[uid].append(pid)
    vectors = load_vectors(conn, ctx.model, [p for ps in publications.values() for p in ps])
    return Relations(
        cites=cites,
        cited_by=cited_by,
        member_affiliations={u: frozenset(a) for u, a in affiliations.items()},
        member_publications={
            u: [vectors[p] for p in ps if p in vectors and p != candidate_id] for u, ps in publications.items()
        },
        followed=ctx.followed_authors,
    )


def explain_empty(ctx: ChannelContext, sources: Sequence[str], found: int, focused: bool) -> str:
    """Why a recommendation found nothing to post, and what members can do about it. Pure."""
    steer = "set a focus or a source (`/paperping focus ...`, `/paperping sources ...`)"
    if not sources:
        return f"no candidate source can be reached from here: {steer}"
    if found:
        return f"the {found} papers the sources found were all shared here before or lack a title"
    if not focused and not any(pid in ctx.vectors for pid in ctx.papers):
        if not ctx.papers:
            return f"no candidate yet: nothing has been shared here; {steer}"
        return f"no candidate yet: the papers shared here are not indexed yet; {steer}"
    return f"no candidate: {', '.join(sources)} found no new paper for this channel; {steer}"


@dataclass
class Ranked:
    """One channel's candidates, ranked, with what drafting any of them needs."""

    ctx: ChannelContext
    weights: dict[int, float]
    ranked: list[Candidate]
    infos: dict[int, PaperInfo]
    vectors: dict[int, np.ndarray]
    found: int
    sources: list[str]


def rank_channel(conn: psycopg.Connection, request: ChannelRequest, *, identified: int = 0) -> Ranked:
    """The channel's context, its candidates ranked (the first ``identified`` with their identifiers)."""
    team_id, channel_id, as_of, config = request.team_id, request.channel_id, request.as_of, request.config
    ctx = load_channel_context(conn, team_id, channel_id, as_of, config.model)
    bots = frozenset(uid for uid, m in ctx.members.items() if m.is_bot)
    weights = channel_weights(ctx.papers, as_of, config.scoring, ctx.emoji_overrides, bots)
    if config.focus is not None:
        # the focus counts as a paper the group engaged with twice as strongly as with any other
        ctx.vectors[FOCUS_ID] = config.focus
        weights[FOCUS_ID] = 2.0 * max([1.0, *weights.values()])
    ranker = load_fit(conn, team_id, channel_id, config.scoring.popularity_weight, as_of)
    # a window asked for (``recommend --window-days``) narrows the channel's own, never widens it: what is
    # ranked is what serving would offer the channel, as a replay ranks it
    window = min((w for w in (config.window_days, ranker.window_days) if w), default=None)
    query = CandidateQuery(
        ctx,
        weights,
        config.model,
        window,
        categories=config.categories,
        focus_words=config.focus_words,
        exclude=config.focus_papers,
        serving=config.serving,
    )
    found = gather_candidates(conn, request.sources, query)
    vectors = load_vectors(conn, config.model, list(found))
    dim = len(next(iter(vectors.values()))) if vectors else 0
    ranker = ranker.for_serving(config.model, dim)  # a paper model it cannot read here: the default blend
    infos = load_paper_infos(conn, list(found), as_of)
    title = lambda pid: infos[pid].title if pid in infos else None  # noqa: E731
    found = {pid: src for pid, src in found.items() if not muted(vectors.get(pid), config.steering, title(pid))}
    vectors = {pid: v for pid, v in vectors.items() if pid in found}
    infos = {pid: info for pid, info in infos.items() if pid in found}
    recent_ids = sorted(ctx.recommended, key=lambda p: ctx.recommended[p], reverse=True)
    recent_ids = recent_ids[: max(RECENT_POSTS, config.scoring.recent_for_diversity)]
    posted = load_vectors(conn, config.model, recent_ids)
    recent = [posted[pid] for pid in recent_ids if pid in posted]
    interests = channel_interests(ctx, weights)
    ranked = score_candidates(
        ctx, infos, vectors, found, recent, config.scoring, ranker, config.focus, config.steering, interests
    )
    identities = storage.papers.load_identities(conn, [c.paper_id for c in ranked[:identified]])
    ranked = [
        Candidate(c.paper_id, c.title, c.score, c.source, identities.get(c.paper_id, {}), c.parts)
        if i < identified
        else c
        for i, c in enumerate(ranked)
    ]
    # the followed authors' papers are no source a member chose: the empty-slot sentence names only those
    named = [s.name for s in request.sources if s.name != FOLLOWED]
    return Ranked(ctx, weights, ranked, infos, vectors, len(found), named)


def paper_signals(conn: psycopg.Connection, r: Ranked, paper_id: int, window_days: int) -> list[SocialSignal]:
    """Every social signal (h1..h9) of one ranked candidate that a message in the channel may state: none about a
    member who has left it (``for_the_channel``; a thread they started still counts, without their name)."""
    signal_input = SignalInput(
        r.ctx, r.infos[paper_id], r.vectors.get(paper_id), load_relations(conn, r.ctx, paper_id), window_days
    )
    return for_the_channel(compute_signals(signal_input, r.weights), r.ctx)


def empty(r: Ranked, config: RecommendConfig) -> Recommendation:
    reason = explain_empty(r.ctx, r.sources, r.found, config.focus is not None)
    return Recommendation([], None, context=r.ctx, empty_reason=reason)


def recommend(conn: psycopg.Connection, request: ChannelRequest, *, llm: LLMClient | None = None) -> Recommendation:
    """What PaperPing would post in the channel as of ``request.as_of``: ranked candidates and the draft of the
    best."""
    config = request.config
    r = rank_channel(conn, request, identified=config.top)
    if not r.ranked:
        return empty(r, config)
    # a followed author's new paper is never left out by the ranking: it goes first, the best of them if several
    best = next((c for c in r.ranked if c.source == FOLLOWED), r.ranked[0])
    all_signals = paper_signals(conn, r, best.paper_id, config.signal_window_days)
    chosen = select_signals(all_signals)
    info = with_body(conn, request.team_id, request.channel_id, r.infos[best.paper_id])  # a poor abstract's gist
    draft = build_draft(r.ctx, info, best.ids, chosen, config.style, config.generate, llm=llm, score=best.score)
    draft = with_section_line(conn, r.ctx, draft, config.generate.limit)  # a section meets a recent thread
    note = pick_note(r, best, config)
    said = note is not None and note.startswith("Picked because") and "this channel follows" in draft.explanation
    draft = replace(draft, note=None if said else note)  # the explanation said it already (h2)
    return Recommendation(r.ranked[: config.top], draft, all_signals, r.ctx)


def pick_note(r: Ranked, best: Candidate, config: RecommendConfig) -> str | None:
    """Why this pick, when the channel's own steering drove it: an author it follows, or a topic it boosted."""
    if best.source == FOLLOWED:
        names = [a.name for a in r.infos[best.paper_id].authors if a.s2_author_id in r.ctx.followed_authors]
        if names:
            return f"Picked because this channel follows {' and '.join(names[:2])}."
    label = boosted_by(r.vectors.get(best.paper_id), config.steering)
    return f"Picked for a topic this channel boosted: {label}." if label else None
