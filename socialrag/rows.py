"""One channel's knowledge as the steps read it back from storage: papers with their authors, the messages
that shared them, their reactions and replies, and the channel's members with their own settings. Frozen
data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, NamedTuple


@dataclass(frozen=True)
class AuthorRef:
    author_id: int
    name: str
    normalized: str
    affiliations: tuple[str, ...] = ()
    s2_author_id: str | None = None


@dataclass(frozen=True)
class PaperInfo:
    paper_id: int
    title: str | None
    venue_id: int | None
    venue: str | None
    year: int | None
    authors: tuple[AuthorRef, ...]
    popularity: float | None = None
    abstract: str | None = None
    tldr: str | None = None
    url: str | None = None
    publication_date: date | None = None  # the first day of what is known of it
    date_precision: str | None = None  # "day", "month", "year" (None: nothing known)
    # its full text's introduction and conclusion (section, text), loaded only where a poor abstract's gist needs them
    body: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Share:
    message_id: int
    ts: str
    user_id: str | None
    at: datetime
    permalink: str | None
    label: str | None


@dataclass(frozen=True)
class ReactionEvent:
    message_id: int
    user_id: str
    emoji: str
    at: datetime


@dataclass(frozen=True)
class Reply:
    message_id: int
    root_message_id: int
    user_id: str | None
    at: datetime
    text: str
    permalink: str | None


@dataclass(frozen=True)
class MemberInfo:
    user_id: str
    display_name: str
    is_bot: bool = False
    mentions_enabled: bool = True
    s2_author_id: str | None = None
    orcid: str | None = None
    confirmed_names: tuple[str, ...] = ()
    author_ids: frozenset[int] = frozenset()
    in_channel: bool = True  # False for someone seen in the channel's rows who is no longer a member


class Readings(NamedTuple):
    """Popularity readings of many papers as arrays, in no particular order (``rank.universe`` sorts them by
    paper, then time): the paper of each reading, when it was read (epoch seconds) and its value."""

    paper_ids: Any  # (n,) int64
    at: Any  # (n,) float64
    values: Any  # (n,) float64


class PaperArrays(NamedTuple):
    """Many papers as arrays, as a ranking reads them: each paper's id, venue id (-1: unknown), year (0:
    unknown), the first day of its publication date (epoch seconds, NaN: unknown) and how far that date is known
    (0 the day, 1 the month, 2 the year); and every authorship, in order of paper and position."""

    paper_ids: Any  # (n,) int64
    venue_ids: Any  # (n,) int64
    years: Any  # (n,) int64
    dates: Any  # (n,) float64
    precision: Any  # (n,) int64
    author_paper: Any  # (k,) int64: the paper of each authorship
    author_ids: Any  # (k,) int64
