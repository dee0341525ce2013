"""Beside the posts: context on a member's share, and answers to questions in a paper's thread.

``share_context`` says what links a paper a member just shared to the channel's history (the earlier thread
it is closest to, the authors and venues the group discussed, how the group received that thread), after the
paper's gist, in short lines verified like posts; it says nothing when nothing grounded links it. Nobody is
@-mentioned: members are named in plain text.

A question in a paper's thread is answered in steps, so that no transaction stays open while the LLM writes:
``thread_paper`` finds the paper (cheaply, before the member's cooldown is taken), ``read_question`` reads all
the answer needs, then ``write_thread_answer`` answers from the paper's full text when PaperPing has read it
(``fulltext_answers``: the passage it rests on quoted, with its section), otherwise from the paper's title,
abstract and tldr and the thread so far, with the LLM when one is configured, verified like posts (no member, no
link but the paper's own, no number the paper and the thread do not hold). Without an LLM, or when the answer
fails the check, it says so and shows the abstract and the related threads of the channel.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np
import psycopg

from socialrag import storage
from socialrag.errors import PermanentError, SourceError
from socialrag.models import AuthorDiscussedHere, EarlierReception, RelatedToEarlierPaper, VenueEngagedWith
from socialrag.recommender.explain.generate import build_allowed, paper_url, thread_of
from socialrag.recommender.explain.llm import NO_ANSWER, BudgetSpent, LLMClient, OutOfTime
from socialrag.recommender.explain.prompts import load_prompt
from socialrag.recommender.explain.summary import summarize
from socialrag.recommender.explain.verify import Allowed, check_text, numbers_in, plain_words
from socialrag.recommender.explain.wording import MEMBER_TOKEN, render_signals
from socialrag.recommender.rank.engagement import ScoringConfig, channel_weights, select_signals
from socialrag.recommender.retrieve.context import ChannelContext, load_channel_context
from socialrag.recommender.retrieve.passages import PassageMatch
from socialrag.recommender.retrieve.present_members import for_the_channel
from socialrag.recommender.retrieve.signals import SignalInput, compute_signals
from socialrag.recommender.serve.fulltext_answers import Encode, Quoted, answer_from_text, find_passages
from socialrag.recommender.serve.on_demand import RELATED_FROM
from socialrag.recommender.serve.paper_text import text_in_use, with_body
from socialrag.recommender.serve.pipeline import load_relations
from socialrag.rows import PaperInfo
from socialrag.storage.embeddings import as_array, load_vectors
from socialrag.text import as_data

log = logging.getLogger(__name__)

CONTEXT_FACTS = (RelatedToEarlierPaper, AuthorDiscussedHere, VenueEngagedWith, EarlierReception)
CONTEXT_LIMIT = 480  # characters of a context reply
GIST_LIMIT = 240
ANSWER_LIMIT = 600
RELATED_SHOWN = 3


@dataclass(frozen=True)
class ShareContext:
    paper_id: int
    lines: tuple[str, ...]  # the gist, then what links it here (members named, never mentioned)
    thread_link: str | None = None
    thread_title: str | None = None


def _named(text: str, ctx: ChannelContext) -> str:
    return MEMBER_TOKEN.sub(lambda m: ctx.display(m.group(1)), text)


def share_context(
    conn: psycopg.Connection,
    model: str,
    team_id: str,
    channel_id: str,
    ts: str,
    *,
    window_days: int = 90,
    scoring: ScoringConfig | None = None,
) -> ShareContext | str:
    """What to reply to the member's share at ``ts``, or why PaperPing stays silent (``scoring``: the process's
    half-life of engagement; the default without it)."""
    stored = storage.messages.load_message(conn, team_id, channel_id, ts)
    if stored is None:
        return "the message is no longer kept"
    at = stored[1]
    paper_ids = storage.messages.load_message_paper_ids(conn, team_id, channel_id, ts)
    ctx = load_channel_context(conn, team_id, channel_id, at, model)
    for pid in paper_ids:  # a paper shared before is linked to its own earlier thread, not to itself
        ctx.vectors.pop(pid, None)
    infos = storage.context_rows.load_paper_infos(conn, paper_ids, at)
    vectors = load_vectors(conn, model, paper_ids, channel=(team_id, channel_id))
    bots = frozenset(uid for uid, m in ctx.members.items() if m.is_bot)
    weights = channel_weights(ctx.papers, at, scoring or ScoringConfig(), ctx.emoji_overrides, bots)
    for pid in paper_ids:
        info = infos.get(pid)
        if info is None or not info.title:
            continue
        vector = as_array(vectors[pid]) if pid in vectors else None
        signals = compute_signals(SignalInput(ctx, info, vector, load_relations(conn, ctx, pid), window_days), weights)
        signals = for_the_channel(signals, ctx)  # a member who left is not named (their thread still counts)
        usable = [s for s in signals if isinstance(s.fact, CONTEXT_FACTS) and s.related_paper_id not in set(paper_ids)]
        if not any(not isinstance(s.fact, EarlierReception) for s in usable):
            continue
        chosen = select_signals(usable, limit=2)
        info = with_body(conn, team_id, channel_id, info)  # a poor abstract's gist from the paper's text
        allowed = build_allowed(ctx, info, chosen)
        social = render_signals(chosen)
        gist = summarize(info.abstract, info.tldr, limit=GIST_LIMIT, body=info.body)
        for lines in ((f"Gist: {gist}" if gist else None, social), (social,)):
            kept = tuple(x for x in lines if x)
            if kept and not check_text("\n".join(kept), allowed, limit=CONTEXT_LIMIT):
                link, title = thread_of(chosen)
                return ShareContext(pid, tuple(_named(x, ctx) for x in kept), link, title)
    if not any(pid in infos and infos[pid].title for pid in paper_ids):
        return "the shared paper could not be looked up"
    return "nothing grounded links it to this channel's history"


@dataclass(frozen=True)
class Related:
    title: str
    link: str


LIMIT_REACHED = "limit: "  # an ``Answer.why_not`` that starts so: a cap on LLM calls said no (the rest says which)


@dataclass(frozen=True)
class Answer:
    paper_title: str
    paper_url: str
    text: str | None  # the LLM's verified answer (None: none could be given)
    why_not: str | None = None  # why there is no answer from the LLM
    abstract: str | None = None
    related: tuple[Related, ...] = field(default_factory=tuple)
    quoted: Quoted | None = None  # the passage of the paper's full text the answer rests on, or the closest one
    from_text: bool = False  # the paper's full text was searched (``why_not`` then speaks of its text)


def _pick_paper(infos: dict[int, PaperInfo], question: str) -> PaperInfo | None:
    """The paper of the thread the question is about: the only one, or (a digest) the one whose title shares
    most words with the question."""
    papers = [i for i in infos.values() if i.title]
    if not papers:
        return None
    words = set(as_data(question).lower().split())
    return max(papers, key=lambda p: len(words & set((p.title or "").lower().split())))


def related_threads(ctx: ChannelContext, vector: np.ndarray | None, exclude: Sequence[int]) -> tuple[Related, ...]:
    """The channel's earlier threads closest to a paper (cosine from ``RELATED_FROM``), closest first."""
    if vector is None:
        return ()
    near = []
    for pid, v in ctx.vectors.items():
        paper = ctx.papers.get(pid)
        if paper is None or pid in exclude or not paper.first_share.permalink:
            continue
        closeness = float(v @ vector)
        if closeness >= RELATED_FROM:
            near.append(
                (closeness, Related(as_data(paper.info.title) or "an earlier paper", paper.first_share.permalink))
            )
    return tuple(r for _, r in sorted(near, key=lambda x: -x[0])[:RELATED_SHOWN])


@dataclass(frozen=True)
class ThreadQuestion:
    """A question in a paper's thread with all it is answered from, read before the LLM is asked: the answer
    without its written text, the question, the thread so far (as data), the passages its full text gives (None:
    the text was not read, or is off here) and what an answer from the abstract may state."""

    base: Answer
    question: str
    tldr: str
    thread: tuple[str, ...]
    found: tuple[PassageMatch, ...] | None
    allowed: Allowed


@dataclass(frozen=True)
class ThreadPaper:
    """The paper a question in a thread is about, and every paper shared at the thread's start."""

    info: PaperInfo
    paper_ids: tuple[int, ...]


def thread_paper(
    conn: psycopg.Connection, team_id: str, channel_id: str, thread_ts: str, question: str
) -> ThreadPaper | None:
    """The paper a question in the thread at ``thread_ts`` is about; None when no paper with a title is shared
    there. Reads only the thread's own papers, so that it can be asked before the member's cooldown is taken."""
    paper_ids = storage.messages.load_message_paper_ids(conn, team_id, channel_id, thread_ts)
    info = _pick_paper(storage.context_rows.load_paper_infos(conn, paper_ids), question)
    return None if info is None else ThreadPaper(info, tuple(paper_ids))


def read_question(
    conn: psycopg.Connection,
    model: str,
    team_id: str,
    channel_id: str,
    thread_ts: str,
    paper: ThreadPaper,
    question: str,
    asked_at: datetime,
    encode: Encode | None = None,
) -> ThreadQuestion:
    """What the question asked in the thread at ``thread_ts`` about its ``paper`` is answered from (the paper's
    full text searched by meaning too, with ``encode`` and the passages' vectors). Only reads: the caller lets the
    connection go before ``write_thread_answer`` asks the LLM."""
    info, paper_ids = paper.info, list(paper.paper_ids)
    identities = storage.papers.load_identities(conn, [info.paper_id])
    url = paper_url(identities.get(info.paper_id, {}), info.url)
    ctx = load_channel_context(conn, team_id, channel_id, asked_at, model)
    vectors = load_vectors(conn, model, [info.paper_id], channel=(team_id, channel_id))
    vector = as_array(vectors[info.paper_id]) if info.paper_id in vectors else None
    related = related_threads(ctx, vector, paper_ids)
    thread = [as_data(t)[:400] for t in storage.messages.load_thread_texts(conn, team_id, channel_id, thread_ts)]
    abstract = as_data(info.abstract) or as_data(info.tldr) or None
    base = Answer(as_data(info.title), url, None, "no LLM is configured here", abstract, related)
    passages = storage.fulltext.load_passages(conn, info.paper_id) if text_in_use(conn, team_id, channel_id) else []
    found = tuple(find_passages(conn, model, passages, question, encode)) if passages else None
    allowed = build_allowed(ctx, info, [])
    allowed.urls.add(url)
    for text in thread:
        allowed.numbers |= numbers_in(text)
    if allowed.words is not None:  # a name the thread writes may be repeated as it says it; a member's, never
        members = {w for m in ctx.members.values() for w in plain_words(m.display_name or "").split()}
        allowed.words |= {w for text in thread for w in plain_words(text).split()} - members
    return ThreadQuestion(base, question, as_data(info.tldr), tuple(thread), found, allowed)


def write_thread_answer(asked: ThreadQuestion, llm: LLMClient | None) -> Answer:
    """The answer to a question read by ``read_question``: from the passages found in the paper's full text when
    it was read, else from its abstract; written by ``llm`` and checked, or the abstract or passage alone. Needs
    no database: the LLM's calls are counted and recorded by ``llm`` itself."""
    base = asked.base
    if asked.found is not None:
        said = answer_from_text(asked.found, asked.question, base.paper_title, base.abstract or "", asked.thread, llm)
        why = f"{LIMIT_REACHED}{said.capped}" if said.capped else said.why_not
        return replace(base, text=said.text, why_not=why, quoted=said.quoted, from_text=True)
    if llm is None:
        return base
    prompt = load_prompt("answer", 1)  # from the abstract (``answer.v2`` answers from passages)
    values = {
        "title": base.paper_title,
        "abstract": base.abstract or "(not known)",
        "tldr": asked.tldr or "(none)",
        "thread": "\n".join(f"- {t}" for t in asked.thread[-20:]) or "(no replies yet)",
        "question": as_data(asked.question)[:500],
        "limit": ANSWER_LIMIT,
    }
    why = "the answer could not be checked against the paper"
    for attempt in (1, 2):
        try:
            text = llm.complete(prompt, prompt.render(**values)).strip()
        except OutOfTime as exc:  # the answer's time is spent: no further try, and why the last one failed
            why = why if attempt > 1 else exc.detail
            break
        except BudgetSpent as exc:  # a cap on LLM calls: said to the member, and not tried again
            return replace(base, why_not=f"{LIMIT_REACHED}{exc.detail}")
        except SourceError as exc:  # what the server said is for the log, never for the thread
            why = NO_ANSWER
            log.warning("thread answer, attempt %d: the language model failed: %s", attempt, exc)
            if isinstance(exc, PermanentError):  # refused: the same request would be refused again
                break
            continue
        if text.upper().strip(". ") == "NOT IN THE PAPER":  # as the other answers take it: "Not in the paper."
            return replace(base, why_not="the paper's abstract does not say")
        problems = check_text(text, asked.allowed, limit=ANSWER_LIMIT)
        if not problems:
            return replace(base, text=text, why_not=None)
        why = "the answer failed verification: " + "; ".join(problems[:3])
        log.warning("thread answer, attempt %d: %s", attempt, why)
    return replace(base, why_not=why)


def answer_question(
    conn: psycopg.Connection,
    model: str,
    team_id: str,
    channel_id: str,
    thread_ts: str,
    question: str,
    llm: LLMClient | None,
    asked_at: datetime,
    encode: Encode | None = None,
) -> Answer | str:
    """``read_question`` then ``write_thread_answer`` on one connection, for callers with no slow LLM to wait on
    (the demo, replays); the service reads, lets its connection go, then asks the LLM."""
    paper = thread_paper(conn, team_id, channel_id, thread_ts, question)
    if paper is None:
        return "no paper"
    return write_thread_answer(
        read_question(conn, model, team_id, channel_id, thread_ts, paper, question, asked_at, encode), llm
    )
