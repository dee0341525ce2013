"""The group's top list (`/paperping top [week|month|year]`, App Home): the papers the channel engaged with most
in a period, counted from the stored engagement (shares and re-shares, thread replies, reactions, clicks and
saves), each with who engaged. A negative reaction or a *Not for us* click is not counted: the list is of what
the group found worth its time. Members who asked to be forgotten have no rows, so they never appear; members who
left the channel are counted and never named."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg

from socialrag.knowledge.emoji import READING_LIST_EMOJI, is_click, normalize_emoji, read_sentiment
from socialrag.models import Sentiment
from socialrag.recommender.explain.generate import paper_url
from socialrag.rows import PaperInfo
from socialrag.storage.context_rows import load_paper_infos
from socialrag.storage.papers import load_identities
from socialrag.storage.reports import load_reaction_emoji, load_top_engagement
from socialrag.storage.settings import load_emoji_overrides
from socialrag.storage.workspaces import load_channel_member_ids

PERIODS: dict[str, timedelta] = {"week": timedelta(days=7), "month": timedelta(days=30), "year": timedelta(days=365)}
TOP = 10


@dataclass(frozen=True)
class TopPaper:
    paper_id: int
    title: str
    url: str | None
    counts: dict[str, int]  # by kind (``storage.reports.KINDS``), in their order
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


def reaction_kind(emoji: str, readings: Mapping[str, Sentiment]) -> str | None:
    """What a reaction counts as (``reaction``, ``click`` or ``save``), or None when it does not count (a negative
    reaction, *Not for us*) by the channel's ``readings``."""
    if read_sentiment(emoji, readings) == "negative":
        return None
    if emoji in READING_LIST_EMOJI or normalize_emoji(emoji) in READING_LIST_EMOJI:
        return "save"
    return "click" if is_click(emoji) else "reaction"


def load_top_list(
    conn: psycopg.Connection, team_id: str, channel_id: str, period: str, now: datetime, limit: int = TOP
) -> TopList:
    """The channel's top list of the ``period`` (``PERIODS``) up to ``now``; nothing of another channel."""
    since = now - PERIODS[period]
    window = {"t": team_id, "c": channel_id, "since": since, "until": now}
    readings = load_emoji_overrides(conn, team_id, channel_id)
    kinds = {e: k for e in load_reaction_emoji(conn, window) if (k := reaction_kind(e, readings))}
    ranked = load_top_engagement(conn, window, kinds, limit)  # counted in the database: ``limit`` rows come back
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
