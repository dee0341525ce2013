"""Step 1 of Social-RAG: messages of a group space into the social knowledge base.

Adapters (a Slack export, the Web API, live events) produce ``Message`` objects and decide nothing; the
rule of what is kept lives here: messages that share a paper link, the replies in their threads, and the
reactions on both. Everything else of the channel is never written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import psycopg

from socialrag import storage
from socialrag.models import Message
from socialrag.storage.papers import ensure_papers

MAX_PAPERS_PER_MESSAGE = 20  # a message linking more (a reading list, a pasted bibliography) keeps its first 20


@dataclass
class ThreadTracker:
    """Which threads of one channel PaperPing follows: those opened by a message that shares a paper."""

    roots: set[str] = field(default_factory=set)
    opened: set[str] = field(default_factory=set)  # the roots kept in this reading, not stored before it

    def keep(self, message: Message) -> bool:
        """Whether ``message`` belongs in the knowledge base; remembers the threads it opens."""
        if message.papers and not message.is_reply and message.ts not in self.roots:
            self.roots.add(message.ts)
            self.opened.add(message.ts)
        return self.follows(message)

    def follows(self, message: Message) -> bool:
        """Whether ``message`` is kept by what the tracker knows now (a reply read before its thread was dropped)."""
        return is_kept(message, root_kept=message.thread_ts in self.roots)

    def drop(self, ts: str) -> None:
        """A newer copy of the first message of a thread this reading opened shares no paper: the thread is not
        followed. A thread stored before the reading stays: whether the stored copy goes is for the newer copy
        and ``record_unshared_copies`` to say."""
        if ts in self.opened:
            self.opened.discard(ts)
            self.roots.discard(ts)


def is_kept(message: Message, *, root_kept: bool) -> bool:
    """The rule of what the knowledge base keeps, for history and live events alike: a message that shares a
    paper, or a reply in the thread of one (``root_kept``: that thread's first message is kept)."""
    return bool(message.papers) or (message.is_reply and root_kept)


@dataclass
class IndexStats:
    messages: int = 0
    replies: int = 0
    reactions: int = 0
    paper_links: int = 0

    def add(self, other: IndexStats) -> None:
        self.messages += other.messages
        self.replies += other.replies
        self.reactions += other.reactions
        self.paper_links += other.paper_links


def _not_deleted(
    conn: psycopg.Connection, messages: Sequence[Message], read_at: datetime | None
) -> tuple[list[Message], list[tuple[str, str, str]]]:
    """``messages`` without those Slack said were deleted (or whose thread was), without the copies older than an
    edit that took the message's last paper link out (nor the replies in its thread, unless a newer copy of its
    first message is among them), and without the reactions Slack said were taken off: an event heard out of
    order, a history read again or an older export brings none back. Slack's history read at ``read_at`` is newer
    than a removal before then: a reaction it shows was added again. Also returns the keys of messages whose copy
    here is newer than such an edit: it is stored, and the edit no longer the newest."""
    keys = [(m.team_id, m.channel_id, _base_ts(m.ts)) for m in messages]
    threads = [(m.team_id, m.channel_id, m.thread_ts) for m in messages if m.thread_ts]
    gone = storage.deletions.load_gone(conn, [*keys, *threads])
    unshared = {key: at for key, at in gone.items() if at is not None}
    newer = {key for m, key in zip(messages, keys, strict=True) if key in unshared and _edited_since(m, unshared[key])}
    kept = [
        m
        for m, key in zip(messages, keys, strict=True)
        if _stands(gone, newer, key)
        and (m.thread_ts is None or _stands(gone, newer, (m.team_id, m.channel_id, m.thread_ts)))
    ]
    stored = sorted(newer & {(m.team_id, m.channel_id, _base_ts(m.ts)) for m in kept})
    removed = storage.deletions.load_removed_reactions(
        conn, [(m.team_id, m.channel_id, _base_ts(m.ts)) for m in kept if m.reactions]
    )
    if read_at is not None:
        removed = {key: at for key, at in removed.items() if at >= read_at}
    if not removed:
        return kept, stored
    return [
        replace(
            m,
            reactions=tuple(
                r for r in m.reactions if (m.team_id, m.channel_id, _base_ts(m.ts), r.user_id, r.emoji) not in removed
            ),
        )
        for m in kept
    ], stored


def _edited_since(message: Message, at: datetime) -> bool:
    """Whether this copy of a message is newer than an edit made ``at`` (the same edit is not older either)."""
    return message.edited_at is not None and message.edited_at >= at


def _stands(
    gone: dict[tuple[str, str, str], datetime | None], newer: set[tuple[str, str, str]], key: tuple[str, str, str]
) -> bool:
    """Whether the message ``key`` (a copy of it, or the first message of a reply's thread) may be stored: it was
    neither deleted nor left with no paper link by an edit, unless a copy of it newer than that edit came along."""
    return key not in gone or key in newer


def _newest_copies(messages: Sequence[Message]) -> list[Message]:
    """One copy of each message (a page read twice, an export listing a message twice): the one edited last."""
    newest: dict[tuple[str, str, str], Message] = {}
    for m in messages:
        key = (m.team_id, m.channel_id, m.ts)
        seen = newest.get(key)
        if seen is None or (m.edited_at or m.posted_at) >= (seen.edited_at or seen.posted_at):
            newest[key] = m
    return list(newest.values())


def _base_ts(ts: str) -> str:
    """The Slack message a stored key stands for (a digest's paper is kept under ``ts/paper``)."""
    return ts.partition("/")[0]


def _paper_links(
    conn: psycopg.Connection, messages: Sequence[tuple[Message, int]]
) -> list[tuple[int, int, str, str, str, str | None]]:
    """The paper links of these (message, id): one row a message and paper, the first link's url and label."""
    paper_ids = ensure_papers(conn, [(r.scheme, r.value) for m, _ in messages for r in m.papers])
    links = []
    for m, mid in messages:
        seen: set[int] = set()
        for ref in m.papers:
            pid = paper_ids[(ref.scheme, ref.value)]
            if pid not in seen:
                seen.add(pid)
                links.append((mid, pid, m.team_id, m.channel_id, ref.url, ref.label))
    return links


def index_messages(
    conn: psycopg.Connection,
    messages: Sequence[Message],
    *,
    read_at: datetime | None = None,
    taken_after: datetime | None = None,
) -> IndexStats:
    """Write kept messages with their paper links and reactions; repeated calls change nothing. ``read_at``:
    when Slack gave them, for a history read (not for an export, an older snapshot). ``taken_after``: an export's
    newest message time; a stored reaction later than it is newer than the export, not missing from it, and stays."""
    if not messages:
        return IndexStats()
    forgotten = storage.privacy.load_forgotten(conn, sorted({m.team_id for m in messages}))
    if forgotten:  # members who asked to be forgotten: nothing of theirs is stored again
        messages = [
            replace(m, reactions=tuple(r for r in m.reactions if (m.team_id, r.user_id) not in forgotten))
            for m in messages
            if (m.team_id, m.user_id or "") not in forgotten
        ]
    messages, newer = _not_deleted(conn, messages, read_at)
    if not messages:
        return IndexStats()
    storage.deletions.forget_unshared(conn, newer)
    messages = _newest_copies(
        [
            replace(m, papers=m.papers[:MAX_PAPERS_PER_MESSAGE]) if len(m.papers) > MAX_PAPERS_PER_MESSAGE else m
            for m in messages
        ]
    )
    ids, older = storage.messages.upsert_messages(conn, messages)
    message_ids = [ids[(m.team_id, m.channel_id, m.ts)] for m in messages]
    # an older copy (an export or a history page taken before an edit stored since) leaves the newer one's papers
    stale = {ids[key] for key in older}
    fresh = [(m, mid) for m, mid in zip(messages, message_ids, strict=True) if mid not in stale]
    links = _paper_links(conn, fresh)
    reactions = [
        (mid, m.team_id, m.channel_id, r.user_id, r.emoji, r.reacted_at or m.posted_at)
        for m, mid in zip(messages, message_ids, strict=True)
        for r in {(r.user_id, r.emoji): r for r in m.reactions}.values()
    ]
    storage.messages.replace_message_papers(conn, [mid for _, mid in fresh], links)
    # a channel's own vector of a paper no source knows is made from its words, which these messages change
    storage.embeddings.mark_channel_texts_changed(conn, sorted({(link[2], link[3], link[1]) for link in links}))
    # every paper a share links to is looked up and embedded in the background (``socialrag.knowledge.queue_worker``)
    storage.queue.enqueue_papers(conn, sorted({link[1] for link in links}))
    known = {mid for m, mid in zip(messages, message_ids, strict=True) if m.reactions_known}
    storage.messages.replace_reactions(
        conn, [mid for mid in message_ids if mid in known], [r for r in reactions if r[0] in known], taken_after
    )
    return IndexStats(
        messages=sum(1 for m in messages if not m.is_reply),
        replies=sum(1 for m in messages if m.is_reply),
        reactions=len(reactions),
        paper_links=len(links),
    )
