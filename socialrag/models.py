"""Frozen data objects that flow between PaperPing's steps. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal

Sentiment = Literal["positive", "negative", "neutral"]


@dataclass(frozen=True)
class PaperRef:
    """One paper link found in a message: a canonical identifier plus what the message showed.

    ``scheme`` is one of: arxiv, doi, acl, s2, corpus, openreview, pmid, pmcid, ieee, neurips, pmlr, cvf.
    """

    scheme: str
    value: str
    url: str
    label: str | None = None

    @property
    def key(self) -> str:
        return f"{self.scheme}:{self.value}"


@dataclass(frozen=True)
class Member:
    team_id: str
    user_id: str
    display_name: str
    real_name: str | None = None
    is_bot: bool = False
    deleted: bool = False
    timezone: str | None = None


@dataclass(frozen=True)
class Channel:
    team_id: str
    channel_id: str
    name: str
    member_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reaction:
    user_id: str
    emoji: str
    reacted_at: datetime | None = None


@dataclass(frozen=True)
class Message:
    """A message of a group space as PaperPing keeps it (a share with paper links, or a reply to one)."""

    team_id: str
    channel_id: str
    ts: str
    user_id: str | None
    text: str
    posted_at: datetime
    thread_ts: str | None = None
    subtype: str | None = None
    permalink: str | None = None
    edited_at: datetime | None = None
    reply_count: int = 0
    papers: tuple[PaperRef, ...] = ()
    reactions: tuple[Reaction, ...] = ()

    @property
    def is_reply(self) -> bool:
        return self.thread_ts is not None and self.thread_ts != self.ts


@dataclass(frozen=True)
class Author:
    name: str
    s2_author_id: str | None = None
    affiliations: tuple[str, ...] = ()
    orcid: str | None = None


@dataclass(frozen=True)
class Paper:
    """Metadata of one paper from one source. ``ids`` maps scheme to value (see ``PaperRef``)."""

    ids: dict[str, str]
    source: str
    title: str | None = None
    abstract: str | None = None
    tldr: str | None = None
    authors: tuple[Author, ...] = ()
    venue: str | None = None
    year: int | None = None
    publication_date: date | None = None
    url: str | None = None
    popularity: float | None = None
    citation_count: int | None = None
    references: tuple[PaperRef, ...] = ()
    reference_contexts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    arxiv_categories: tuple[str, ...] = ()


SignalKind = Literal["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9"]
Style = Literal["tldr", "template", "template+tldr", "llm"]
STYLES: tuple[Style, ...] = ("tldr", "template", "template+tldr", "llm")


@dataclass(frozen=True)
class SocialSignal:
    """One social fact about a candidate, with what it rests on (Table 2 of the Social-RAG paper).

    ``facts`` holds the structured values (names, counts, titles); ``members``, ``permalinks``, ``emoji``,
    ``authors`` and ``venues`` are the provenance every sentence built from it may use, and nothing else.
    """

    kind: SignalKind
    strength: float
    facts: dict[str, object]
    members: tuple[str, ...] = ()
    permalinks: tuple[str, ...] = ()
    emoji: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    venues: tuple[str, ...] = ()
    counts: tuple[int, ...] = ()
    related_paper_id: int | None = None

    @property
    def category(self) -> str:
        """I: the paper itself, II: its connection to an earlier paper, III: a member it may interest."""
        return {"h1": "I", "h2": "I", "h3": "I", "h4": "I", "h5": "II", "h6": "II", "h7": "II"}.get(self.kind, "III")


@dataclass(frozen=True)
class Candidate:
    """A paper that could be recommended, with its score and where it came from."""

    paper_id: int
    title: str
    score: float
    source: str
    ids: dict[str, str] = field(default_factory=dict)
    parts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PaperMeta:
    """What the metadata block of a post shows: linked title, first authors, venue, year, summary."""

    paper_id: int
    title: str
    url: str
    authors: tuple[str, ...]
    venue: str | None
    year: int | None
    summary: str | None
    ids: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Draft:
    """Everything a post needs, kept apart: the explanation, the metadata, the thread link, the mentions."""

    team_id: str
    channel_id: str
    paper: PaperMeta
    style: Style
    explanation: str
    signals: tuple[SocialSignal, ...]
    thread_link: str | None = None
    thread_title: str | None = None
    mentions: tuple[str, ...] = ()
    named: dict[str, str] = field(default_factory=dict)
    score: float = 0.0
    fallback_reason: str | None = None
