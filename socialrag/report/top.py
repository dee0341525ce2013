"""The group's top list (`/paperping top [week|month|year]`, App Home): the papers the channel engaged with most
in a period, counted from the stored engagement (shares and re-shares, thread replies, reactions, clicks and
saves), each with who engaged. A negative reaction or a *Not for us* click is not counted: the list is of what
the group found worth its time. Members who asked to be forgotten have no rows, so they never appear; members who
left the channel are counted and never named."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg

from socialrag.knowledge.emoji import READING_LIST_EMOJI, is_click, normalize_emoji, read_sentiment
from socialrag.models import Sentiment
from socialrag.recommender.explain.generate import paper_url
from socialrag.rows import PaperInfo
from socialrag.storage.context_rows import load_paper_infos
from socialrag.storage.papers import load_identities
from socialrag.storage.reports import EngagementEvent, load_engagement_events, load_report_channel_facts
from socialrag.storage.settings import load_emoji_overrides
from socialrag.storage.workspaces import load_channel_member_ids

PERIODS: dict[str, timedelta] = {"week": timedelta(days=7), "month": timedelta(days=30), "year": timedelta(days=365)}
KINDS = ("share", "reply", "reaction", "click", "save")  # in the order a line names them
TOP = 10


@dataclass(frozen=True)
class TopPaper:
    paper_id: int
    title: str
    url: str | None
    counts: dict[str, int]  # by kind (``KINDS``)
    members: tuple[str, ...]  # who engaged and is still in the channel (member ids), the most engaged first
    unnamed: int = 0  # who engaged and has left the channel since: counted, never named

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class TopList:
    period: str
    since: datetime
    papers: list[TopPaper] = field(default_factory=list)


def kind_of(event: EngagementEvent, readings: Mapping[str, Sentiment]) -> str | None:
    """What an engagement counts as, or None when it does not count (a negative reaction, *Not for us*)."""
    if event.kind != "reaction" or event.emoji is None:
        return event.kind
    if read_sentiment(event.emoji, readings) == "negative":
        return None
    if event.emoji in READING_LIST_EMOJI or normalize_emoji(event.emoji) in READING_LIST_EMOJI:
        return "save"
    return "click" if is_click(event.emoji) else "reaction"


def rank_top(
    events: Sequence[EngagementEvent], readings: Mapping[str, Sentiment], bots: set[str], limit: int = TOP
) -> list[tuple[int, dict[str, int], list[str]]]:
    """(paper, counts by kind, members by how much they engaged, then by id) of the papers engaged with most, the
    most first (ties: more members, then the lower paper id). Pure."""
    counts: dict[int, Counter[str]] = {}
    people: dict[int, Counter[str]] = {}
    for event in events:
        kind = kind_of(event, readings)
        if kind is None or event.user_id in bots:
            continue
        counts.setdefault(event.paper_id, Counter())[kind] += 1
        people.setdefault(event.paper_id, Counter())[event.user_id] += 1
    order = sorted(counts, key=lambda p: (-sum(counts[p].values()), -len(people[p]), p))
    return [(p, {k: counts[p][k] for k in KINDS if counts[p][k]}, sorted(people[p], key=lambda u: (-people[p][u], u)))
            for p in order[:limit]]  # fmt: skip


def load_top_list(
    conn: psycopg.Connection, team_id: str, channel_id: str, period: str, now: datetime, limit: int = TOP
) -> TopList:
    """The channel's top list of the ``period`` (``PERIODS``) up to ``now``; nothing of another channel."""
    since = now - PERIODS[period]
    window = {"t": team_id, "c": channel_id, "since": since, "until": now}
    _, _, _, bots = load_report_channel_facts(conn, window)
    readings = load_emoji_overrides(conn, team_id, channel_id)
    ranked = rank_top(load_engagement_events(conn, window), readings, bots, limit)
    ids = [p for p, _, _ in ranked]
    infos, identities = load_paper_infos(conn, ids), load_identities(conn, ids)
    current = load_channel_member_ids(conn, team_id, channel_id)  # none known yet: everyone counts as in
    papers = [
        TopPaper(
            p,
            _title(infos.get(p)),
            paper_url(identities.get(p, {}), infos[p].url if p in infos else None) or None,
            counts,
            tuple(u for u in who if not current or u in current),
            sum(1 for u in who if current and u not in current),
        )
        for p, counts, who in ranked
    ]
    return TopList(period, since, papers)


def _title(info: PaperInfo | None) -> str:
    return (info.title if info and info.title else None) or "a paper without a known title"
