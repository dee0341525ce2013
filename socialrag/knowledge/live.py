"""Step 1 as it happens: a new message, an edit, a deletion or a reaction in a channel, each taken into the
social knowledge base by the same rule as history (``index.is_kept``). The Slack side only turns a payload
into these calls, on the connection (and so in the transaction) in which it records the event as handled.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from itertools import count

import psycopg

from socialrag import storage
from socialrag.knowledge.emoji import CLICKS, click_counts
from socialrag.knowledge.intake import index_messages, is_kept
from socialrag.models import Message, PaperMeta, PaperRef


def _root_kept(conn: psycopg.Connection, message: Message) -> bool:
    root = message.thread_ts or ""
    return storage.messages.load_message_id(conn, message.team_id, message.channel_id, root) is not None


def record_message(conn: psycopg.Connection, message: Message, *, by_member: bool) -> bool:
    """A new message: kept when it shares a paper or answers in a kept thread; any member's message also
    marks the channel active (only its time is kept, for the quiet period before a post). True if kept."""
    kept = is_kept(message, root_kept=message.is_reply and _root_kept(conn, message))
    # written before the channel's row is touched: the forget list is read (and held, ``load_forgotten``) while
    # this transaction holds no row a forget-me waiting for it would need
    stats = index_messages(conn, [message]) if kept else None  # nothing, when Slack already said it was deleted
    if by_member:
        storage.posts.record_activity(conn, message.team_id, message.channel_id, message.posted_at)
    return stats is not None and stats.messages + stats.replies > 0


def record_edit(conn: psycopg.Connection, message: Message, *, was_share: bool | None = None) -> None:
    """An edited message. An edit carries no reactions, so the stored ones stay; losing its paper link takes
    a share and its thread out of the base, gaining one makes a message a share. An edit older than the stored
    copy changes nothing. An edit that took a message's link out is remembered (``storage.deletions``): a copy
    of it older than the edit (an export, a history page, the message event heard late) is not stored.
    ``was_share`` is whether it linked a paper before the edit (None: unknown); an edit of a message that never
    linked one is not remembered, so chatter edited in a channel leaves no row."""
    message = replace(message, reactions_known=False)
    team, channel, ts = message.team_id, message.channel_id, message.ts
    if storage.messages.newer_copy_stored(conn, team, channel, ts, message.edited_at):
        return  # an edit heard after a later one (Slack resends events): the later one stands
    if is_kept(message, root_kept=message.is_reply and _root_kept(conn, message)):
        index_messages(conn, [message])
        return
    _take_out(conn, message, remember=message.edited_at is not None and was_share is not False)


EDIT_SKEW = timedelta(minutes=5)  # how far a copy's edit time may run ahead of this host's clock


def unshared_copy(message: Message) -> Message | None:
    """What a reader keeps of a copy it does not store, for ``record_unshared_copies``: one edited with no paper
    link, as only which message it is and when it was edited (no words, no reactions); None for any other."""
    if message.edited_at is None or message.papers:
        return None
    return replace(message, text="", reactions=())


def _believable(message: Message, latest: datetime) -> bool:
    """Whether a copy's edit time (its posting time, unedited) is one it can have: not before its posting, nor
    after ``latest`` (now and ``EDIT_SKEW``)."""
    return message.posted_at <= (message.edited_at or message.posted_at) <= latest


@dataclass
class LatestCopies:
    """The copies one reading of a channel's export holds to write (``kept``) or to take stored shares out with
    (``edited``, for ``record_unshared_copies``), one a message: an export can list a message twice, and the copy
    edited last stands (an unedited one counts as edited when posted; on a tie, the one read last), as an edit heard
    after a later one changes nothing. An older copy of a message met after a newer one is neither (``older``); a
    newer one takes the older one's place if it is not written yet. A copy stands for another only with its
    author and a believable edit time, as ``record_unshared_copies`` asks; any other copy is held beside them.
    The times are kept for the whole reading, but only of the copies held, never of every message read."""

    kept: dict[tuple[str, str | None] | int, Message] = field(default_factory=dict)
    edited: dict[tuple[str, str | None] | int, Message] = field(default_factory=dict)
    times: dict[tuple[str, str | None], datetime] = field(default_factory=dict)
    latest: datetime = field(default_factory=lambda: datetime.now(UTC) + EDIT_SKEW)
    others: Iterator[int] = field(default_factory=count)

    def __len__(self) -> int:
        return len(self.kept) + len(self.edited)

    def older(self, message: Message) -> bool:
        """Whether a newer copy of ``message`` was held in this reading."""
        at = self.times.get((message.ts, message.user_id))
        return at is not None and _believable(message, self.latest) and (message.edited_at or message.posted_at) < at

    def hold(self, message: Message, *, kept: bool) -> bool:
        """Hold a copy no newer copy of which was held; True when it takes an older copy's place."""
        if not _believable(message, self.latest):
            (self.kept if kept else self.edited)[next(self.others)] = message
            return False
        key = (message.ts, message.user_id)
        newer = key in self.times
        self.times[key] = message.edited_at or message.posted_at
        self.kept.pop(key, None)
        self.edited.pop(key, None)
        (self.kept if kept else self.edited)[key] = message
        return newer

    def take(self) -> tuple[list[Message], list[Message]]:
        """The copies held since the last take: to write, and edited with no link."""
        held = list(self.kept.values()), list(self.edited.values())
        self.kept, self.edited = {}, {}
        return held


def record_unshared_copies(conn: psycopg.Connection, messages: Sequence[Message]) -> int:
    """Copies of messages a history page or an export shows that ``is_kept`` does not keep (the reader's
    ``ThreadTracker`` said so): one edited with no paper link that is stored as a share, edited before this copy
    or never, is taken out as ``record_edit`` takes out an edit that took the link out (the share and its thread
    leave, and the edit is remembered), for the edit event may never have come. The stored shares are found in one
    query; nothing is written of a message not stored, nor of an unedited copy, nor of PaperPing's own posts.
    An export is a file of unknown origin: a copy is an edit of the stored share only when it has the share's
    author (only they can edit it) and an edit time between its posting and now (``EDIT_SKEW`` ahead at most; an
    edit dated in 2099 would outrank every real one). Returns how many stored messages went."""
    latest = datetime.now(UTC) + EDIT_SKEW
    seen = sorted(
        (m for m in messages if m.edited_at is not None and not m.papers and _believable(m, latest)),
        key=lambda m: m.edited_at or m.posted_at,
    )
    edited = {(m.team_id, m.channel_id, m.ts): m for m in seen}  # a message seen twice: its latest copy
    copies = [(*key, m.edited_at, m.user_id) for key, m in edited.items() if m.edited_at is not None]
    return sum(
        _take_out(conn, edited[key], remember=False)
        for key in sorted(storage.deletions.load_outdated_shares(conn, copies))
    )


def _take_out(conn: psycopg.Connection, message: Message, *, remember: bool) -> int:
    """A message an edit left with no paper link: it (and, a thread's first message, its thread) leaves the base,
    and the edit is remembered when anything went or ``remember`` says the edit took a link out. Returns how many
    stored messages went."""
    team, channel, ts = message.team_id, message.channel_id, message.ts
    if message.is_reply:
        removed = storage.messages.delete_messages(conn, team, channel, [ts])
    else:
        removed = storage.messages.delete_thread(conn, team, channel, ts)
    if removed or remember:  # a link taken out
        storage.deletions.record_unshared_message(conn, team, channel, ts, message.edited_at or message.posted_at)
    storage.post_sources.record_message_deleted(conn, team, channel, ts, removed=removed)
    return removed


def record_deletion(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> int:
    """A deleted message (or the tombstone left of a thread's first message): it and its thread leave the
    base, with what PaperPing's stored posts and LLM logs held of them, and the deletion is remembered
    (``storage.deletions``) so that the message, an edit of it or a reply in its thread heard later is not
    stored. Returns how many messages were removed."""
    return record_deletions(conn, team_id, channel_id, [ts])


def record_deletions(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    ts_list: Sequence[str],
    at: Sequence[datetime | None] | None = None,
    edited: Sequence[datetime | None] | None = None,
) -> int:
    """``record_deletion`` of each of these messages (those a history read again no longer found, or deletions a
    restore carries over, made at ``at``), the channel's stored posts and LLM logs settled once for them all. A
    message with a time in ``edited`` was not deleted: an edit made then left it with no paper link (a restore
    carries that over too), and a stored copy older than the edit goes as ``record_edit`` takes it out."""
    removed, posts = 0, False
    times = list(at) if at is not None else [None] * len(ts_list)
    edits = list(edited) if edited is not None else [None] * len(ts_list)
    for ts, when, edit in zip(ts_list, times, edits, strict=True):
        if not ts:
            continue
        if edit is None:
            storage.deletions.record_deleted_message(conn, team_id, channel_id, ts, when)
        elif storage.messages.newer_copy_stored(conn, team_id, channel_id, ts, edit):
            continue  # a link put back since that edit: the stored copy is the newer one
        else:
            storage.deletions.record_unshared_message(conn, team_id, channel_id, ts, edit, when)
        removed += storage.messages.delete_thread(conn, team_id, channel_id, ts)
        # PaperPing's own post of that ts is marked deleted
        posts = storage.post_sources.record_post_deleted(conn, team_id, channel_id, ts) or posts
    if removed or posts:
        storage.post_sources.drop_what_rested_on_deleted(conn, team_id, channel_id)
    return removed


def record_reaction(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    ts: str,
    user_id: str,
    emoji: str,
    *,
    added: bool,
    at: datetime,
) -> bool:
    """A reaction added or removed on a message; only reactions on kept messages count. True if recorded. A
    removal is remembered, kept message or not: an add made before it and heard after it is not stored."""
    if not added:
        storage.deletions.record_removed_reaction(conn, team_id, channel_id, ts, user_id, emoji, at)
    elif storage.deletions.removal_stands(conn, team_id, channel_id, ts, user_id, emoji, at):
        return False
    message_id = storage.messages.load_message_id(conn, team_id, channel_id, ts)
    if message_id is None:
        return False
    if added:
        storage.messages.add_reaction(conn, message_id, team_id, channel_id, user_id, emoji, at)
    else:
        storage.messages.remove_reaction(conn, message_id, user_id, emoji, at)
    return True


def record_click(
    conn: psycopg.Connection, team_id: str, channel_id: str, ts: str, user_id: str, kind: str, at: datetime
) -> tuple[bool, dict[str, int]] | None:
    """A member clicked one of the buttons (``CLICKS``) on a kept message: a second click of the same member
    undoes the first. Returns whether the member's click is on afterwards and the message's click counts by
    kind, None when the message is not kept (deleted, or never stored)."""
    message_id = storage.messages.load_message_id(conn, team_id, channel_id, ts)
    if message_id is None:
        return None
    on = storage.messages.toggle_reaction(conn, message_id, team_id, channel_id, user_id, CLICKS[kind], at)
    return on, click_counts(storage.messages.load_reaction_counts(conn, message_id))


def load_click_counts(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> dict[str, int]:
    """The counts of a kept message's buttons by kind (none for a message not kept)."""
    message_id = storage.messages.load_message_id(conn, team_id, channel_id, ts)
    return click_counts(storage.messages.load_reaction_counts(conn, message_id)) if message_id is not None else {}


def digest_item_ts(ts: str, paper_id: int) -> str:
    """The key under which one paper of a digest keeps its own clicks: the digest's ts and the paper's id. No
    Slack message has such a ts, and a deleted digest takes its papers' keys with it."""
    return f"{ts}/{paper_id}"


def record_own_digest(conn: psycopg.Connection, message: Message, papers: Sequence[PaperMeta]) -> int:
    """PaperPing's digest, kept as a share of each paper it lists (reactions and replies to it count for them
    all), and each paper under its own key (``digest_item_ts``) for the clicks on its buttons. Returns how many
    papers were kept (those with an identifier)."""
    refs = []
    for paper in papers:
        identity = storage.papers.best_identity(paper.ids)
        if identity is not None:
            refs.append((paper, PaperRef(identity[0], identity[1], paper.url, paper.title)))
    if not refs:
        return 0
    items = [
        replace(message, ts=digest_item_ts(message.ts, paper.paper_id), thread_ts=None, reply_count=0, papers=(ref,))
        for paper, ref in refs
    ]
    index_messages(conn, [replace(message, papers=tuple(ref for _, ref in refs)), *items])
    return len(refs)


def record_own_post(conn: psycopg.Connection, message: Message, paper: PaperMeta) -> bool:
    """PaperPing's own post, kept as a share of the paper it recommends, so that reactions and replies to it
    feed back (step 4). False when the paper has no identifier to link it by."""
    identity = storage.papers.best_identity(paper.ids)
    if identity is None:
        return False
    ref = PaperRef(identity[0], identity[1], paper.url, paper.title)
    index_messages(conn, [replace(message, papers=(ref,))])
    return True
