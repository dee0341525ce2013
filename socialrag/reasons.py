"""A stored post's reasons (its draft's signals, as JSON) and the channel's messages they rest on. Pure.

A reason points at messages by their permalinks, and an earlier reception (h6) at the thread's first reply by its
stored row. Once those messages are deleted (in Slack, or by a member's forget-me), the reason no longer stands:
``keep_standing`` leaves it out, so that neither ``/paperping why`` nor the stored draft goes on describing what
its writer took back.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

# what a post says beyond its paper: emptied when the post itself is deleted in Slack
_SPOKEN: dict[str, Any] = {
    "explanation": "",
    "signals": [],
    "thread_link": None,
    "thread_title": None,
    "mentions": [],
    "named": {},
    "note": None,
}


def _drafts(draft: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A single post's draft, or each paper's draft of a digest."""
    items = draft.get("digest")
    if isinstance(items, list):
        return [d for d in items if isinstance(d, Mapping)]
    return [draft]


def _signals(draft: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for one in _drafts(draft):
        yield from (s for s in one.get("signals") or () if isinstance(s, Mapping))


def draft_links(draft: Mapping[str, Any]) -> set[str]:
    """Every permalink a draft's reasons and its earlier thread point at."""
    links = {str(link) for s in _signals(draft) for link in s.get("permalinks") or () if link}
    return links | {str(d["thread_link"]) for d in _drafts(draft) if d.get("thread_link")}


def members_named(draft: Mapping[str, Any]) -> list[str]:
    """The member ids a post's draft (or each paper's draft of a digest) @-mentions or names."""
    found: set[str] = set()
    for one in _drafts(draft):
        found.update(str(u) for u in one.get("mentions") or ())
        found.update(str(u) for u in one.get("named") or {})
    return sorted(found)


def first_reply_ids(draft: Mapping[str, Any]) -> set[int]:
    """The stored rows of the first replies the draft's earlier receptions point at."""
    ids = set()
    for s in _signals(draft):
        fact = s.get("fact")
        if isinstance(fact, Mapping) and isinstance(fact.get("first_reply_id"), int):
            ids.add(int(fact["first_reply_id"]))
    return ids


def _standing(signals: list[Any], kept: set[str]) -> tuple[list[Any], int]:
    """The reasons that still rest on a kept message, with only their kept links; and how many were left out. A
    reason that never pointed at a message (an author, a venue, a member's interests) stands."""
    standing, gone = [], 0
    for s in signals:
        links = list(s.get("permalinks") or ()) if isinstance(s, Mapping) else []
        if not links:
            standing.append(s)
            continue
        alive = [link for link in links if link in kept]
        if alive:
            standing.append({**s, "permalinks": alive})
        else:
            gone += 1
    return standing, gone


def keep_standing(draft: Mapping[str, Any], kept: set[str]) -> tuple[dict[str, Any], int]:
    """The draft with only the reasons whose messages are still ``kept`` (permalinks), and with no earlier thread
    whose first message is gone; and how many reasons were left out."""
    out = copy.deepcopy(dict(draft))
    gone = 0
    for one in _drafts(out):
        assert isinstance(one, dict)
        one["signals"], n = _standing(list(one.get("signals") or ()), kept)
        gone += n
        if one.get("thread_link") and one["thread_link"] not in kept:
            one["thread_link"] = one["thread_title"] = None
    return out, gone


def blank_draft(draft: Mapping[str, Any]) -> dict[str, Any]:
    """What is kept of a post deleted in Slack: its paper, style and score (so that it is not posted again), not
    what it said, whom it named or the messages it pointed at."""
    out = copy.deepcopy(dict(draft))
    for one in _drafts(out):
        assert isinstance(one, dict)
        one.update(copy.deepcopy(_SPOKEN))
    return out
