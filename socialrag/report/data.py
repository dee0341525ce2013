"""What a channel report shows, loaded from the knowledge base for one channel and period (nothing from
another channel). ``socialrag.report.page`` draws it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import psycopg

from socialrag.models import Sentiment
from socialrag.recommender.retrieve.context import load_channel_context
from socialrag.rows import PaperInfo
from socialrag.storage.context_rows import load_paper_infos
from socialrag.storage.embeddings import load_vectors
from socialrag.storage.reports import (
    EventRow,
    PostRow,
    ShareRow,
    load_report_channel_facts,
    load_report_posts,
    load_report_reactions,
    load_report_replies,
    load_report_shares,
)
from socialrag.storage.workspaces import load_member_names


@dataclass
class ReportData:
    team_id: str
    channel_id: str
    channel_name: str
    since: datetime | None
    until: datetime
    shares: list[ShareRow]
    replies: list[EventRow]
    reactions: list[EventRow]
    posts: list[PostRow]
    papers: dict[int, PaperInfo]
    vectors: dict[int, np.ndarray]
    names: dict[str, str]
    overrides: dict[str, Sentiment]  # the channel's own readings: set by hand, or learnt (``learnt``)
    frequency: str = "every-other-day"
    step_down_reason: str | None = None
    bots: set[str] = field(default_factory=set)
    learnt: set[str] = field(default_factory=set)  # the emoji in ``overrides`` learnt, not set by hand

    @property
    def member_shares(self) -> list[ShareRow]:
        return [s for s in self.shares if not s.by_paperping]


def load_report_data(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    model: str = "all-MiniLM-L6-v2",
) -> ReportData:
    """Everything the report shows about one channel in ``[since, until)`` (nothing of another channel)."""
    until = until or datetime.now(UTC)
    window = {"t": team_id, "c": channel_id, "since": since, "until": until}
    name, frequency, reason, bots = load_report_channel_facts(conn, window)
    shares = load_report_shares(conn, window, bots)
    paper_ids = sorted({s.paper_id for s in shares})
    # the readings in force now: set by hand, or learnt from the channel (which the context already merges)
    now = load_channel_context(conn, team_id, channel_id, datetime.now(UTC), model)
    return ReportData(
        team_id=team_id,
        channel_id=channel_id,
        channel_name=name or channel_id,
        since=since,
        until=until,
        shares=shares,
        replies=load_report_replies(conn, window),
        reactions=load_report_reactions(conn, window),
        posts=load_report_posts(conn, window),
        papers=load_paper_infos(conn, paper_ids),
        vectors=load_vectors(conn, model, paper_ids, channel=(team_id, channel_id)),
        names=load_member_names(conn, team_id),
        overrides=now.emoji_overrides,
        learnt={r.emoji for r in now.emoji_learnt},
        frequency=frequency,
        step_down_reason=reason,
        bots=bots,
    )
