"""Step 4 for the group's memory: a member's question about what their channels read and discussed, answered
from those channels only, with provenance (who shared each paper and when, its thread, how the group received
it), and a short written answer when an LLM is configured and the answer passes the check.

The caller (the Slack side, the CLI) decides which channels the asker may see: only channels they are a member
of now, in their own workspace, where PaperPing still is. Nothing here widens that scope.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import numpy as np
import psycopg

from socialrag import storage
from socialrag.names import fold_text
from socialrag.recommender.explain.generate import paper_url
from socialrag.recommender.explain.llm import LLMClient
from socialrag.recommender.explain.memory_answer import ItemText, write_answer
from socialrag.recommender.retrieve.body_search import search_bodies, with_bodies
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper, load_channel_context
from socialrag.recommender.retrieve.memory import (
    LIST_DEPTH,
    Found,
    Kind,
    activity_since,
    discussed_within,
    question_kind,
    search_channel,
    shared_within,
    topic_words,
    who_knows,
)
from socialrag.recommender.retrieve.passages import PassageMatch
from socialrag.recommender.retrieve.periods import Period, split_period
from socialrag.recommender.serve.fulltext_answers import Quoted, quoted_from
from socialrag.recommender.serve.paper_text import text_in_use
from socialrag.recommender.serve.schedule import zone
from socialrag.text import as_data

SHOWN = 5  # papers in an answer
MISSED_SHOWN = 8  # papers in "what did I miss"
MISSED_DEFAULT = timedelta(days=30)  # "what did I miss" for a member who never engaged: the last month
GIST_REPLIES = 2  # replies quoted for a discussion question
GIST_CHARS = 200
SEARCH_SHARE = 0.6  # of an answer's time, what reading channels may take; the rest is for writing
ON_TOPIC = 0.5  # "who knows": the papers scoring at least this share of the best one's are the topic's


@dataclass(frozen=True)
class MemoryItem:
    """One paper of a channel, as an answer shows it."""

    paper_id: int
    channel_id: str
    title: str
    ids: dict[str, str]  # the identifiers PaperPing knows (doi, arxiv, acl, s2, pmid...)
    url: str | None
    shared_by: str | None  # the member who first shared it; None when PaperPing posted it
    shared_by_name: str | None
    shared_at: datetime
    permalink: str | None  # the share's message (its thread)
    replies: int
    reactions: int
    saves: int
    posted_by_paperping: bool
    gist: tuple[str, ...] = ()  # for a discussion question: "name: what they said", quoted as data
    abstract: str | None = None
    passage: Quoted | None = None  # the passage of its full text that matches the question, when one does


@dataclass(frozen=True)
class Person:
    """A member who knows a topic, by what they did with the channel's papers on it (named, never mentioned)."""

    user_id: str
    name: str
    channel_id: str
    papers: int  # the papers on the topic they shared, replied about, saved or reacted to
    shared: int = 0  # of those, the ones they shared
    replied: int = 0  # ... the ones whose thread they replied in
    reacted: int = 0  # ... and the ones they reacted to


@dataclass(frozen=True)
class MemoryAnswer:
    question: str
    kind: Kind
    channels: tuple[str, ...]
    items: tuple[MemoryItem, ...]
    people: tuple[Person, ...] = ()
    text: str | None = None  # the written answer, checked
    note: str | None = None  # why there is no written answer
    since: datetime | None = None  # "what did I miss": since when
    words: tuple[str, ...] = field(default_factory=tuple)  # the topic words the question was searched by
    period: str | None = None  # the time the question named, as the answer says it ("last week (11 Jan to 17 Jan)")
    unsearched: int = 0  # channels asked about that were not searched in the time an answer has


Encode = Callable[[str], np.ndarray | None]


def _item(ctx: ChannelContext, pid: int, ids: dict[str, str], saves: int, gist: bool) -> MemoryItem | None:
    paper = ctx.papers.get(pid)
    if paper is None or not paper.shares:
        return None
    bots = {uid for uid, m in ctx.members.items() if m.is_bot}
    by_members = [s for s in paper.shares if s.user_id not in bots]
    first = min(by_members or paper.shares, key=lambda s: s.at)
    sharer = first.user_id if by_members else None
    return MemoryItem(
        pid,
        ctx.channel_id,
        as_data(paper.info.title) or "a paper",
        ids,
        paper_url(ids, paper.info.url) or None,
        sharer,
        ctx.display(sharer) if sharer and ctx.nameable(sharer) else None,  # else "a member": never a name withheld
        first.at,
        first.permalink,
        len(paper.replies),
        len(paper.reactions),
        saves,
        len(by_members) < len(paper.shares),
        _gist(ctx, paper) if gist else (),
        as_data(paper.info.abstract) or as_data(paper.info.tldr) or None,
    )


def _gist(ctx: ChannelContext, paper: SharedPaper) -> tuple[str, ...]:
    """The thread's first replies, quoted with their authors' names: only of members an answer may name."""
    replies = sorted((r for r in paper.replies if r.text and ctx.nameable(r.user_id)), key=lambda r: r.at)
    replies = replies[:GIST_REPLIES]
    return tuple(f"{ctx.display(r.user_id or '')}: {as_data(r.text)[:GIST_CHARS]}" for r in replies)


def _items(
    conn: psycopg.Connection, contexts: dict[str, ChannelContext], picked: Sequence[tuple[str, int]], gist: bool
) -> list[MemoryItem]:
    """The picked papers as an answer shows them, their identifiers and saves read once for them all."""
    identities = storage.papers.load_identities(conn, [pid for _, pid in picked])
    saves: Counter[tuple[str, int]] = Counter()
    for channel in dict.fromkeys(c for c, _ in picked):
        pids = [pid for c, pid in picked if c == channel]
        saves.update(
            (channel, s.paper_id)
            for s in storage.history_search.load_saves(
                conn, contexts[channel].team_id, channel, pids, contexts[channel].as_of
            )
        )
    items = [_item(contexts[c], pid, identities.get(pid, {}), saves[(c, pid)], gist) for c, pid in picked]
    return [i for i in items if i is not None]


def ask_memory(
    conn: psycopg.Connection,
    model: str,
    encode: Encode,
    team_id: str,
    channel_ids: Sequence[str],
    asker: str,
    question: str,
    llm: LLMClient | None,
    now: datetime,
    on_found: Callable[[MemoryAnswer], None] | None = None,
    until: float | None = None,
) -> MemoryAnswer:
    """Answer ``question`` from these channels of one workspace (the asker's, checked by the caller). A time the
    question names ("last week", "in March") is counted in the channel's timezone when one is asked about, in the
    asker's own over several (else the workspace's),
    and keeps the answer to what was shared (or, for a discussion, replied to) then; a question that names a
    time and no topic is answered with all of that time's papers. ``on_found`` is given the papers found before
    the LLM is asked to write about them (a streamed answer shows them meanwhile). With ``until`` (a
    ``time.monotonic()``), channels are read only while ``SEARCH_SHARE`` of the time left remains: the first
    always, the rest said as not searched; papers' bodies only while that share lasts."""
    kind = question_kind(question)
    asked = list(dict.fromkeys(channel_ids))
    contexts: dict[str, ChannelContext] = {}
    stop = until - (until - time.monotonic()) * (1 - SEARCH_SHARE) if until is not None else None
    for c in asked:
        if contexts and stop is not None and time.monotonic() > stop:
            break
        contexts[c] = load_channel_context(conn, team_id, c, now, model)
    # one channel: its days, as its schedule counts them; several: the asker's own (else the workspace's)
    first = next(iter(contexts), None)
    if len(asked) > 1:
        timezone = storage.workspaces.load_member_timezone(conn, team_id, asker)
    else:
        timezone = storage.workspaces.load_channel_timezone(conn, team_id, first) if first else None
    period, rest = split_period(question, now, zone(timezone))
    words = tuple(topic_words(rest))
    base = MemoryAnswer(
        question,
        kind,
        tuple(contexts),
        (),
        words=words,
        period=period.label if period else None,
        unsearched=len(asked) - len(contexts),
    )
    if kind == "missed":  # "what did I miss about parsing?": what happened since, on the topic when one is named
        topic = (rest, encode(rest)) if words else None
        return _missed(conn, contexts, asker, base, now, period, topic)
    if not words and (period is not None or kind == "who"):
        return _within(conn, contexts, base, period, llm, on_found)
    # a question in a script folding leaves nothing of (Chinese, emoji) has no words to match, but its meaning is
    # still searched, from the question as written; one of asking words only ("what did we read?") is not
    unreadable = bool(question.strip()) and not fold_text(question).strip()
    vector = encode(rest) if words else (encode(question) if unreadable else None)
    found: list[tuple[Found, str]] = []
    bodies: dict[tuple[str, int], PassageMatch] = {}
    for channel, ctx in contexts.items():
        hits = search_channel(conn, ctx, rest, vector, most=LIST_DEPTH if period else 10)
        # what the papers' bodies say, too, while the time to read channels lasts (the rest is the writing's)
        if words and (stop is None or time.monotonic() <= stop) and text_in_use(conn, team_id, channel):
            by_body = search_bodies(conn, ctx, rest, vector)
            hits = with_bodies(hits, by_body)
            bodies.update(((channel, pid), match) for pid, match in by_body.items())
        found += [(f, channel) for f in hits if period is None or _within_period(ctx, f.paper_id, period, kind)][:10]
    found.sort(key=lambda x: (-x[0].score, x[1], x[0].paper_id))
    if kind == "who":
        who = _who(conn, contexts, found, base)
        return replace(who, items=_with_passages(who.items, bodies))
    items = _items(conn, contexts, [(c, f.paper_id) for f, c in found[:SHOWN]], gist=kind == "discussion")
    return _written(replace(base, items=_with_passages(items, bodies)), contexts, llm, on_found)


def _with_passages(items: Sequence[MemoryItem], bodies: dict[tuple[str, int], PassageMatch]) -> tuple[MemoryItem, ...]:
    """The items, each with the passage of its body that matched the question (if one did)."""
    found = ((i, bodies.get((i.channel_id, i.paper_id))) for i in items)
    return tuple(replace(i, passage=quoted_from(m)) if m is not None else i for i, m in found)


def _within_period(ctx: ChannelContext, pid: int, period: Period, kind: Kind) -> bool:
    """Whether the paper was shared in the period (for a discussion, shared or replied to then)."""
    paper = ctx.papers.get(pid)
    if paper is None:
        return False
    moments = [s.at for s in paper.shares] + ([r.at for r in paper.replies] if kind == "discussion" else [])
    return any(period.holds(at) for at in moments)


def _within(
    conn: psycopg.Connection,
    contexts: dict[str, ChannelContext],
    base: MemoryAnswer,
    period: Period | None,
    llm: LLMClient | None,
    on_found: Callable[[MemoryAnswer], None] | None = None,
) -> MemoryAnswer:
    """A question that names no topic: the papers shared in the period (a discussion: those replied to then),
    with a written answer as for a topic, or, for "who", the members who engaged most with them (with no period,
    with all the channel's papers)."""
    held = period.holds if period is not None else (lambda _: True)
    if base.kind == "who":  # the papers shared then or replied to then; the members are ranked by what they did
        found = [
            (Found(pid, 1.0), channel)
            for channel, ctx in contexts.items()
            for pid in dict.fromkeys(p for p, _ in [*shared_within(ctx, held), *discussed_within(ctx, held)])
        ]
        return _who(conn, contexts, found, base, period.holds if period is not None else None)
    picked: list[tuple[int, str, int]] = []
    for channel, ctx in contexts.items():
        listed = discussed_within(ctx, held) if base.kind == "discussion" else shared_within(ctx, held)
        picked += [(n, channel, pid) for pid, n in listed]
    picked.sort(key=lambda x: -x[0])  # stable: each channel's own order within the same count
    shown = [(c, pid) for _, c, pid in picked[:MISSED_SHOWN]]
    items = tuple(_items(conn, contexts, shown, gist=base.kind == "discussion"))
    return _written(replace(base, items=items), contexts, llm, on_found)


def _who(
    conn: psycopg.Connection,
    contexts: dict[str, ChannelContext],
    found: list[tuple[Found, str]],
    base: MemoryAnswer,
    held: Callable[[datetime], bool] | None = None,
) -> MemoryAnswer:
    """The members who engaged most with the papers found (with ``held``, only what they did then), ranked across
    every channel asked about: the member who did most on the topic comes first, whichever channel it was in."""
    people: list[tuple[float, Person]] = []
    best = found[0][0].score if found else 0.0
    on_topic = [(f, c) for f, c in found if f.score >= ON_TOPIC * best]  # the papers squarely on it, not the rest
    for channel, ctx in contexts.items():
        mine = [f for f, c in on_topic if c == channel]
        saves = [
            (s.paper_id, s.user_id)
            for s in storage.history_search.load_saves(
                conn, ctx.team_id, channel, [f.paper_id for f in mine], ctx.as_of
            )
        ]
        people += [
            (e.weight, Person(e.user_id, ctx.display(e.user_id), channel, e.papers, e.shared, e.replied, e.reacted))
            for e in who_knows(ctx, mine, saves, held=held)
        ]
    people.sort(key=lambda x: -x[0])  # stable: equal weights keep their channel's order
    # with no topic, the people are the answer: the papers they rest on would be the whole channel
    shown = [(c, f.paper_id) for f, c in on_topic[:3]] if base.words else []
    chosen = tuple(person for _, person in people[:5])
    return replace(base, items=tuple(_items(conn, contexts, shown, gist=False)), people=chosen)


def _missed(
    conn: psycopg.Connection,
    contexts: dict[str, ChannelContext],
    asker: str,
    base: MemoryAnswer,
    now: datetime,
    period: Period | None,
    topic: tuple[str, np.ndarray | None] | None = None,
) -> MemoryAnswer:
    """What happened in each channel since the member last engaged there (or in the ``period`` asked), the most
    active papers first; with ``topic`` (the question's words and their vector), only papers on it."""
    picked: list[tuple[int, str, int]] = []
    since_all: datetime | None = None
    for channel, ctx in contexts.items():
        since = period.start if period else _last_engaged(ctx, asker) or now - MISSED_DEFAULT
        since_all = since if since_all is None else min(since_all, since)
        on_topic = _on_topic(search_channel(conn, ctx, *topic, most=LIST_DEPTH)) if topic else None
        picked += [(n, channel, pid) for pid, n in activity_since(ctx, since) if on_topic is None or pid in on_topic]
    picked.sort(key=lambda x: (-x[0], x[1], x[2]))
    items = _items(conn, contexts, [(c, pid) for _, c, pid in picked[:MISSED_SHOWN]], gist=False)
    return replace(base, items=tuple(items), since=since_all)


def _on_topic(found: Sequence[Found]) -> set[int]:
    """The papers squarely on the topic: scoring at least ``ON_TOPIC`` of the best one's."""
    best = max((f.score for f in found), default=0.0)
    return {f.paper_id for f in found if f.score >= ON_TOPIC * best}


def _last_engaged(ctx: ChannelContext, user: str) -> datetime | None:
    """When the member last shared, replied or reacted in the channel, as the channel's papers record it."""
    times = [
        at
        for paper in ctx.papers.values()
        for at in [s.at for s in paper.shares if s.user_id == user]
        + [r.at for r in paper.replies if r.user_id == user]
        + [x.at for x in paper.reactions if x.user_id == user]
    ]
    return max(times) if times else None


def _written(
    answer: MemoryAnswer,
    contexts: dict[str, ChannelContext],
    llm: LLMClient | None,
    on_found: Callable[[MemoryAnswer], None] | None = None,
) -> MemoryAnswer:
    """The answer with its written part, when an LLM is configured and its text passes the check."""
    if not answer.items:
        return answer
    if llm is None:  # the list is the answer: nothing to say of a written one
        return answer
    if on_found is not None:
        on_found(answer)
    texts = [
        ItemText(
            i.title,
            i.shared_by_name,
            i.shared_at,
            f"{i.replies} replies, {i.reactions} reactions, {i.saves} saves",
            i.abstract,
            i.gist,
            i.shared_by is None,  # PaperPing's post; a member whose name is withheld is "a member"
            f"({i.passage.section}) {i.passage.text}" if i.passage else None,
        )
        for i in answer.items
    ]
    shown = {i.paper_id for i in answer.items}
    others = [p.info.title or "" for ctx in contexts.values() for pid, p in ctx.papers.items() if pid not in shown]
    text, why = write_answer(llm, answer.question, texts, others)
    return replace(answer, text=text, note=why)
