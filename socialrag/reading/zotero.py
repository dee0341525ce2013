"""The reading list sent to a Zotero group library through Zotero's Web API (with pyzotero, at
``ZOTERO_API_URL``): each saved paper once, as an item in the channel's collection. A paper Zotero refused
or could not take now is kept with why, and tried again later (an hour, doubling, up to a day); a missing
key, a wrong group or a refused write is said in `status`, never lost.

Each item carries its own key, derived from the group, the channel and the paper, with version 0 ("create only"):
when Zotero stored a batch but its answer was lost, the retry meets items that are already there, which Zotero
refuses one by one with a 412, and that refusal counts as sent. So a retry never makes a second item, and an item
a member moved to the trash stays there. (Only an item a member purged from the trash between a lost answer and its
retry comes back, once: Zotero lets a deleted key be created again. A paper recorded as sent is never written again,
so a member's deletion after that stands.)"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections import deque
from datetime import datetime, timedelta
from typing import Any

import httpx2
import psycopg
from pyzotero import zotero, zotero_errors

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.deadline import DeadlineTransport
from socialrag.reading.library import load_references
from socialrag.reading.references import Reference, exact, named, split_name
from socialrag.setting import zotero_allow_list, zotero_group_allowed, zotero_group_id

log = logging.getLogger(__name__)

BATCH = 50  # items Zotero takes in one write
RETRY = timedelta(hours=1)
RETRY_LIMIT = timedelta(days=1)
PUSH_LOCK = 0x50505A54  # advisory lock of the Zotero push
KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"  # the characters of Zotero's object keys
EXISTS = 412  # Zotero's per-item code for an item already stored under a version-0 key
ZOTERO = "zotero"  # its name in the pace of outside sources that every process shares
PUSH_READS = 3  # the push's share of a scheduler tick, in HTTP timeouts: no write starts after it
LONGEST_WAIT = 3600.0  # the longest wait Zotero may ask for (a Backoff or Retry-After) that the push honours
NOT_AUTHORISED = "the Zotero key may not write to this group library"
NO_GROUP = "Zotero knows no such group library"
MALFORMED = "Zotero did not answer as expected"
MOST_ANSWER_BYTES = 4_000_000  # Zotero's answer to a write of 50 items is some hundred kilobytes: more is a failure


def build_item_key(group: str, team: str, channel: str, paper_id: int) -> str:
    """The Zotero key of one paper of one channel in one group library: eight characters, the same at each try."""
    number = int.from_bytes(hashlib.sha256(f"{group}/{team}/{channel}/{paper_id}".encode()).digest()[:8])
    chars = []
    for _ in range(8):
        number, digit = divmod(number, len(KEY_ALPHABET))
        chars.append(KEY_ALPHABET[digit])
    return "".join(chars)


def zotero_item(ref: Reference, collection: str | None, key: str | None = None) -> dict[str, Any]:
    """A reference as a Zotero item: a conference paper when its venue is known, else a preprint. With ``key``,
    the item is created under that key only if no item has it yet (version 0)."""
    kind = "conferencePaper" if ref.venue and not (ref.arxiv and "arxiv" in ref.venue.lower()) else "preprint"
    item: dict[str, Any] = {
        "itemType": kind,
        "title": exact(ref.title),
        "creators": [
            {"creatorType": "author", "lastName": family, "firstName": given}
            for family, given in (split_name(a) for a in named(ref.authors))
        ],
        "tags": [{"tag": "paperping"}],
        "collections": [collection] if collection else [],
    }
    if ref.year:
        item["date"] = str(ref.year)
    if kind == "conferencePaper" and ref.venue:
        item["proceedingsTitle"] = exact(ref.venue, 300)
    if ref.doi:
        item["DOI"] = ref.doi
    if ref.link:
        item["url"] = ref.link
    if ref.arxiv:
        item["extra"] = f"arXiv: {ref.arxiv}"
    if key:
        item.update(key=key, version=0)
    return item


def client_for(settings: Settings, group_id: str, http: httpx2.Client) -> zotero.Zotero:
    """A Zotero client of one group library, over ``http`` (the caller closes it)."""
    if not settings.zotero_api_key:
        raise ValueError("ZOTERO_API_KEY is not set")
    zot = zotero.Zotero(group_id, "group", settings.zotero_api_key, client=http)
    zot.endpoint = settings.zotero_api_url.rstrip("/")
    return zot


def push_due(db: Database, settings: Settings, now: datetime) -> int:
    """Send what each channel saved since and is not in its library yet; how many papers went. It runs in the
    scheduler's tick, so it starts no write after ``PUSH_READS`` HTTP timeouts, nor while Zotero asked to wait."""
    if not settings.zotero_api_key or settings.offline:
        return 0
    until = time.monotonic() + PUSH_READS * settings.http_timeout
    with db.connection(autocommit=True) as lock:  # one process at a time, so that no paper goes twice
        if not storage.locks.try_session_lock(lock, PUSH_LOCK):
            return 0
        try:
            with db.connection() as conn:
                channels = storage.reading_list.load_zotero_channels(conn)
            # bound before the operator's list gave it to another workspace, or written oddly: nothing goes there
            return _push_round(db, settings, [c for c in channels if listed(settings, c[0], c[2])], now, until)
        finally:
            storage.locks.release_session_lock(lock, PUSH_LOCK)


def _push_round(
    db: Database, settings: Settings, channels: list[tuple[str, str, str, str | None]], now: datetime, until: float
) -> int:
    """One batch of each channel in turn, so that a long list (or a library that answers slowly) never holds the
    other channels back: what the round's time leaves waits for the next tick."""
    sent = 0
    waiting = deque(channels)
    todo: dict[tuple[str, str, str, str | None], list[Reference]] = {}
    # one HTTP client for the round, and one pyzotero client a channel, kept to the end (dropping one closes the other)
    clients: dict[tuple[str, str, str, str | None], zotero.Zotero] = {}
    deadline = DeadlineTransport(3 * settings.http_timeout, most_bytes=MOST_ANSWER_BYTES)  # three reads' time in all
    with httpx2.Client(timeout=settings.http_timeout, transport=deadline) as http:
        while waiting and may_write(db, until):
            target = waiting.popleft()
            team, channel, group, _ = target
            try:
                if target not in todo:  # the channel's first turn: what it has to send
                    with db.connection() as conn:
                        done = storage.reading_list.load_zotero_done(conn, team, channel, group, now)
                        todo[target] = load_references(conn, team, channel, leave_out=done)  # what went: not read
                    clients[target] = client_for(settings, group, http)
                went, more = _push_batch(db, clients[target], target, todo[target], now)
            except Exception:  # one channel's library never stops the others'
                log.exception("#%s: sending the reading list to Zotero failed", channel)
                continue
            sent += went
            if went:
                log.info("#%s: %d saved papers sent to Zotero group %s", channel, went, group)
            if more:
                todo[target] = todo[target][BATCH:]
                waiting.append(target)
    return sent


def listed(settings: Settings, team: str, group: str) -> bool:
    """Whether the operator's list (``PAPERPING_ZOTERO_GROUPS``) lets the workspace send to ``group``, written as
    Zotero reads it (migration 0044 rewrote the bindings stored with leading zeros; any other form is sent
    nothing)."""
    allowed = zotero_allow_list(settings.zotero_groups)
    return zotero_group_id(group) == group and zotero_group_allowed(allowed, team, group)


def sends_to(conn: psycopg.Connection, settings: Settings, team: str, group: str) -> bool:
    """Whether the push sends the workspace's channels' saved papers to ``group`` (for `status`): the workspace holds
    it, and the operator's list lets it."""
    return listed(settings, team, group) and storage.reading_list.load_zotero_group_owner(conn, group) == team


def may_write(db: Database, until: float) -> bool:
    """Whether a write may start now: within the push's time, and not while Zotero asked every client to wait."""
    if time.monotonic() > until:
        return False
    with db.connection() as conn:
        return storage.source_pace.reserve_turn(conn, ZOTERO, 0.0, within=0.0) <= 0


def _push_batch(
    db: Database,
    zot: zotero.Zotero,
    target: tuple[str, str, str, str | None],
    refs: list[Reference],
    now: datetime,
) -> tuple[int, bool]:
    """Send the first batch of ``refs``: how many went, and whether the rest is still to send (not when the whole
    library refused this one: it would refuse the rest, which waits as this batch does, unasked)."""
    if not refs:
        return 0, False
    team, channel, group, collection = target
    batch = refs[:BATCH]
    keys = [build_item_key(group, team, channel, r.paper_id) for r in batch]
    results = _write(zot, [zotero_item(r, collection, k) for r, k in zip(batch, keys, strict=True)])
    _hold_if_asked(db, zot)
    refused = {results.get(i, (None, None)) for i in range(len(batch))}
    if refused <= {(None, NOT_AUTHORISED), (None, NO_GROUP)}:
        return _record(db, target, refs, dict.fromkeys(range(len(refs)), refused.pop()), now), False
    return _record(db, target, batch, results, now), len(refs) > BATCH


def _record(
    db: Database,
    target: tuple[str, str, str, str | None],
    refs: list[Reference],
    results: dict[int, tuple[str | None, str | None]],
    now: datetime,
) -> int:
    """Store what became of each of ``refs`` (``results`` by its index); how many were sent. A refused one waits an
    hour, then twice as long after each refusal in a row, a day at most."""
    team, channel, group, _ = target
    sent = 0
    with db.connection() as conn:
        failures = storage.reading_list.load_zotero_failures(conn, team, channel, group)
        for i, ref in enumerate(refs):
            key, error = results.get(i, (None, "Zotero gave no answer for this item"))
            wait = RETRY * 2 ** min(failures.get(ref.paper_id, 0), 10)  # 2**10 hours: past the day already
            storage.reading_list.record_zotero_result(
                conn,
                team,
                channel,
                group,
                ref.paper_id,
                item_key=key,
                error=error,
                now=now,
                retry_at=None if key else now + min(wait, RETRY_LIMIT),
            )
            sent += key is not None
    return sent


def _hold_if_asked(db: Database, zot: zotero.Zotero) -> None:
    """Zotero asked every client to wait (``Backoff``, or a 429's ``Retry-After``): pyzotero would sleep that long
    before its next write, in the tick; instead no process writes to Zotero until then (an hour at most)."""
    wait = zot.backoff_until - time.time()
    if wait > 0:  # false for a NaN
        with db.connection() as conn:
            storage.source_pace.hold_off(conn, ZOTERO, min(wait, LONGEST_WAIT))


def _write(zot: zotero.Zotero, items: list[dict[str, Any]]) -> dict[int, tuple[str | None, str | None]]:
    """Per item of the batch: (its key, None) or (None, why it was not taken)."""
    try:
        answer = zot.create_items(items)
    except zotero_errors.UserNotAuthorisedError:
        return dict.fromkeys(range(len(items)), (None, NOT_AUTHORISED))
    except zotero_errors.ResourceNotFoundError:
        return dict.fromkeys(range(len(items)), (None, NO_GROUP))
    except zotero_errors.PyZoteroError as exc:  # its text holds the address and the answer's words: not for status
        code = re.search(r"^Code: (\d{3})$", str(exc), re.MULTILINE)
        kind = f"HTTP {code[1]}" if code else type(exc).__name__
        return dict.fromkeys(range(len(items)), (None, f"{MALFORMED} ({kind})"))
    except (httpx2.HTTPError, ValueError) as exc:
        return dict.fromkeys(range(len(items)), (None, f"{MALFORMED}: {str(exc)[:200]}"))
    if not isinstance(answer, dict) or "success" not in answer:  # a 429 with a wait: pyzotero returns its body
        return dict.fromkeys(range(len(items)), (None, "Zotero asked to wait"))
    try:
        return _per_item(answer, items)
    except (AttributeError, TypeError, ValueError):  # not maps of item indexes: as good as no answer
        return dict.fromkeys(range(len(items)), (None, f"{MALFORMED}: its answer did not say what became of each item"))


def _per_item(answer: dict[str, Any], items: list[dict[str, Any]]) -> dict[int, tuple[str | None, str | None]]:
    """Zotero's answer to a write, per index of the batch (those outside it left out)."""
    out: dict[int, tuple[str | None, str | None]] = {}
    for index, key in (answer.get("success") or {}).items():
        out[int(index)] = (str(key)[:32], None)
    for index, unchanged in (answer.get("unchanged") or {}).items():
        out[int(index)] = (str(unchanged)[:32], None)
    for index, failed in (answer.get("failed") or {}).items():
        key = items[int(index)].get("key") if 0 <= int(index) < len(items) else None
        if key and isinstance(failed, dict) and failed.get("code") == EXISTS:
            out[int(index)] = (str(key), None)  # there already: an earlier try was stored, its answer lost
            continue
        message = failed.get("message") if isinstance(failed, dict) else failed
        out[int(index)] = (None, f"Zotero refused it: {str(message)[:200]}")
    return {i: result for i, result in out.items() if 0 <= i < len(items)}
