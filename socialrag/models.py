"""Frozen data objects that flow between PaperPing's steps. No I/O here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import date, datetime
from typing import Any, Literal

Sentiment = Literal["positive", "negative", "neutral"]


@dataclass(frozen=True)
class PaperRef:
    """One paper link found in a message: a canonical identifier plus what the message showed.

    ``scheme`` is one of: arxiv, doi, acl, s2, corpus, openreview, pmid, pmcid, pii (Elsevier's publisher item
    id), oup, ieee, neurips, pmlr, cvf. ``version`` is the preprint version a bioRxiv or medRxiv link named: the
    identity is the DOI (one paper across its versions), the version is what the member saw.
    """

    scheme: str
    value: str
    url: str
    label: str | None = None
    version: int | None = None

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
    # False when the source does not say which reactions the message has (an edit event carries none):
    # the stored reactions are then kept as they are
    reactions_known: bool = True

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
    publication_date: date | None = None  # the first day of what is known of it (see ``date_precision``)
    url: str | None = None
    popularity: float | None = None
    citation_count: int | None = None
    references: tuple[PaperRef, ...] = ()
    reference_contexts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    arxiv_categories: tuple[str, ...] = ()
    # what a paper is about in other sources' words: "biorxiv:cell_biology", "openalex:T10102" (a primary topic)
    subjects: tuple[str, ...] = ()
    # earlier readings of ``popularity`` (date, value), so a replay can use what was known at the time
    popularity_history: tuple[tuple[date, float], ...] = ()
    # how far ``publication_date`` is known: "day" (the default when there is one) or "month"
    date_precision: DatePrecision | None = None
    oa_pdf_url: str | None = None  # an open-access PDF a source points to (OpenAlex), and its licence
    oa_licence: str | None = None
    claims: tuple[str, ...] = ()  # schemes of ``ids`` its authors claimed, not the source (arXiv's DOI field)


DatePrecision = Literal["day", "month", "year"]
SignalKind = Literal["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9"]
Style = Literal["tldr", "template", "template+tldr", "llm"]
STYLES: tuple[Style, ...] = ("tldr", "template", "template+tldr", "llm")
Relation = Literal["cites", "cited_by", "shared_authors", "similar"]
InterestReason = Literal["similar", "own", "author", "venue"]


# The facts of Table 2 of the Social-RAG paper, one type each. Members are Slack-style user ids.
@dataclass(frozen=True)
class MemberIsAuthor:
    """h1: a channel member wrote the candidate."""

    member: str
    author: str


@dataclass(frozen=True)
class AuthorDiscussedHere:
    """h2: an author of the candidate wrote ``count`` papers the channel discussed recently; ``followed``: the
    channel follows this author (`/paperping follow`)."""

    author: str
    count: int
    followed: bool = False


@dataclass(frozen=True)
class SharedAffiliation:
    """h3: an author of the candidate is at an institution a member is at."""

    affiliation: str
    member: str
    author: str


@dataclass(frozen=True)
class VenueEngagedWith:
    """h4: the group engaged well with ``count`` other papers of the candidate's venue recently."""

    venue: str
    count: int


@dataclass(frozen=True)
class RelatedToEarlierPaper:
    """h5: the candidate cites, is cited by, shares authors with, or is close to an earlier channel paper."""

    paper_title: str
    relation: Relation
    similarity: float
    context: str | None = None  # the citing sentence, when there is one
    shared_authors: tuple[str, ...] = ()
    sharer: str | None = None  # the member who shared the earlier paper
    posted_by_paperping: bool = False


@dataclass(frozen=True)
class EarlierReception:
    """h6: how the group received that earlier paper."""

    paper_title: str
    reactions: int
    positive_reactions: int
    replies: int
    top_emoji: tuple[str, ...] = ()
    repliers: tuple[str, ...] = ()
    first_reply_id: int | None = None  # the thread's first reply, by its stored row; never its words


@dataclass(frozen=True)
class EarlierPaperByMember:
    """h7: that earlier paper was written by a member; ``relation`` is how the candidate relates to it (h5)."""

    member: str
    paper_title: str
    relation: Relation = "similar"
    shared_authors: tuple[str, ...] = ()


@dataclass(frozen=True)
class MemberMayCare:
    """h8: the member whose engagement is closest to the candidate."""

    member: str
    similarity: float


@dataclass(frozen=True)
class WhyMemberMayCare:
    """h9: why that member: liked similar papers, papers by this author or venue, or wrote similar ones."""

    member: str
    reason: InterestReason
    count: int
    author: str | None = None
    venue: str | None = None


SignalFact = (
    MemberIsAuthor
    | AuthorDiscussedHere
    | SharedAffiliation
    | VenueEngagedWith
    | RelatedToEarlierPaper
    | EarlierReception
    | EarlierPaperByMember
    | MemberMayCare
    | WhyMemberMayCare
)
FACT_KINDS: dict[type, SignalKind] = {
    MemberIsAuthor: "h1",
    AuthorDiscussedHere: "h2",
    SharedAffiliation: "h3",
    VenueEngagedWith: "h4",
    RelatedToEarlierPaper: "h5",
    EarlierReception: "h6",
    EarlierPaperByMember: "h7",
    MemberMayCare: "h8",
    WhyMemberMayCare: "h9",
}


@dataclass(frozen=True)
class SocialSignal:
    """One social fact about a candidate, with what it rests on (Table 2 of the Social-RAG paper).

    ``fact`` holds the structured values; ``members``, ``permalinks``, ``emoji``, ``authors``, ``venues`` and
    ``counts`` are the provenance every sentence built from it may use, and nothing else.
    """

    fact: SignalFact
    strength: float
    members: tuple[str, ...] = ()
    permalinks: tuple[str, ...] = ()
    emoji: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    venues: tuple[str, ...] = ()
    counts: tuple[int, ...] = ()
    related_paper_id: int | None = None

    @property
    def kind(self) -> SignalKind:
        """The code members see in ``/paperping why`` (h1 to h9)."""
        return FACT_KINDS[type(self.fact)]

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
class NoPost:
    """A slot with nothing to post, and why in a sentence members can act on (status shows it)."""

    reason: str


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
    # why this pick, when the channel's own steering drove it (a followed author, a boosted topic, the first
    # day's ratings): plain text, shown under the explanation
    note: str | None = None


def draft_json(draft: Draft) -> dict[str, Any]:
    """A draft as JSON-ready data (stored with its recommendation row; ``signal_from_json`` reads it back)."""
    data = asdict(draft)
    data["signals"] = [{**asdict(s), "kind": s.kind, "category": s.category} for s in draft.signals]
    return data


def draft_from_json(data: dict[str, Any]) -> Draft:
    """A stored draft (``draft_json``) back as a ``Draft``, to render its post again (counts on its buttons)."""
    paper = dict(data["paper"])
    names = {f.name for f in fields(PaperMeta)}
    values: dict[str, Any] = {k: tuple(v) if k == "authors" else v for k, v in paper.items() if k in names}
    meta = PaperMeta(**values)
    return Draft(
        str(data["team_id"]),
        str(data["channel_id"]),
        meta,
        data["style"],
        str(data.get("explanation") or ""),
        tuple(signal_from_json(s) for s in data.get("signals") or ()),
        data.get("thread_link"),
        data.get("thread_title"),
        tuple(data.get("mentions") or ()),
        dict(data.get("named") or {}),
        float(data.get("score") or 0.0),
        data.get("fallback_reason"),
        data.get("note"),
    )


@dataclass(frozen=True)
class Digest:
    """A weekly digest: several papers in one post, each with its own one-line hook and buttons."""

    team_id: str
    channel_id: str
    drafts: tuple[Draft, ...]
    kind: str = "weekly"  # or "onboarding": the first day's papers to rate


def digest_json(digest: Digest) -> dict[str, Any]:
    """A digest as JSON-ready data, stored with its slot like a draft."""
    return {"digest": [draft_json(d) for d in digest.drafts], "kind": digest.kind}


def digest_from_json(data: dict[str, Any]) -> Digest | None:
    """A stored digest back (None when the stored data is a single post's draft)."""
    if not isinstance(data.get("digest"), list) or not data["digest"]:
        return None
    drafts = tuple(draft_from_json(d) for d in data["digest"])
    return Digest(drafts[0].team_id, drafts[0].channel_id, drafts, str(data.get("kind") or "weekly"))


_FACT_TYPES: dict[str, type] = {kind: cls for cls, kind in FACT_KINDS.items()}


def signal_from_json(data: dict[str, Any]) -> SocialSignal:
    """A stored signal back as a ``SocialSignal`` (drafts written before typed facts kept them as ``facts``)."""
    cls = _FACT_TYPES[str(data["kind"])]
    raw = data.get("fact") or data.get("facts") or {}
    names = {f.name for f in fields(cls)}
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items() if k in names}
    return SocialSignal(
        cls(**values),
        float(data.get("strength") or 0.0),
        members=tuple(data.get("members") or ()),
        permalinks=tuple(data.get("permalinks") or ()),
        emoji=tuple(data.get("emoji") or ()),
        authors=tuple(data.get("authors") or ()),
        venues=tuple(data.get("venues") or ()),
        counts=tuple(data.get("counts") or ()),
        related_paper_id=data.get("related_paper_id"),
    )
