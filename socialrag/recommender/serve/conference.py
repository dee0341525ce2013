"""Step 4 for a conference (`/paperping conference VENUE YEAR`): the papers of one venue and year that this channel
would most want, ranked with the channel's own ranking, each with one line on why, grounded like a post (the
thread it is closest to, the member whose shares it is near, an author the group discussed; a member who left the
channel is never named). The papers come from the catalog where it holds the venue and from Semantic Scholar's
venue search; a venue nobody knows gets the nearest names that are known. ``render_markdown`` and ``render_csv``
write the file the channel keeps."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import psycopg

from socialrag import storage
from socialrag.knowledge.embed import Embed, record_found
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.recommender.explain.generate import paper_url
from socialrag.recommender.explain.wording import member_token, render_plain, render_signal
from socialrag.recommender.rank.engagement import select_signals
from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.recommender.retrieve.venue_papers import VenuePapers, match_venue, search_venue
from socialrag.recommender.serve.pipeline import ChannelRequest, paper_signals, rank_channel
from socialrag.text import as_data

LISTED = 50  # papers in the file
SHOWN = 10  # papers in the thread
WHY_WINDOW_DAYS = 365  # how far back a paper's reasons may reach (a conference is judged against the year)
NO_HOOK = "Close to what this channel shares."


@dataclass(frozen=True)
class PlannedPaper:
    paper_id: int
    title: str
    url: str
    authors: str
    score: float
    why: str  # one sentence; members appear as ``{@U…}`` tokens


@dataclass
class ConferencePlan:
    venue: str
    year: int
    found: int  # papers of the venue and year the ranking saw
    papers: list[PlannedPaper] = field(default_factory=list)


@dataclass(frozen=True)
class VenueNotFound:
    venue: str
    year: int
    nearest: tuple[str, ...]


def plan_conference(
    conn: psycopg.Connection,
    request: ChannelRequest,
    venue: str,
    year: int,
    *,
    s2: SemanticScholar | None = None,
    embed: Embed | None = None,
) -> ConferencePlan | VenueNotFound:
    """The channel's plan for ``venue`` in ``year`` (``request`` says the channel and the moment; its sources are
    replaced by the venue's papers)."""
    team, channel = request.team_id, request.channel_id
    match = match_venue(venue, storage.venues.load_venues(conn, team, channel))
    ids = storage.venues.load_venue_papers(conn, match.ids, year, team, channel) if match.ids else []
    if s2 is not None:
        found = search_venue(s2, venue, year)
        ids = list(dict.fromkeys([*ids, *record_found(conn, found, embed)]))
    if not ids:
        return VenueNotFound(venue, year, match.nearest)
    r = rank_channel(conn, replace(request, sources=[VenuePapers(ids)]), identified=LISTED)
    shown = match.names[0] if match.names else venue
    plan = ConferencePlan(shown, year, r.found)
    for candidate in r.ranked[:LISTED]:
        info = r.infos[candidate.paper_id]
        said = paper_signals(conn, r, candidate.paper_id, WHY_WINDOW_DAYS)  # none about a member who left
        signals = select_signals(said, limit=1)
        why = render_signal(signals[0]) if signals else nearest_thread(r.ctx, r.vectors.get(candidate.paper_id))
        names = [a.name for a in info.authors]
        authors = ", ".join(names[:3]) + (" et al." if len(names) > 3 else "")
        url = paper_url(candidate.ids, info.url)
        plan.papers.append(PlannedPaper(candidate.paper_id, info.title or url, url, authors, candidate.score, why))
    return plan


def nearest_thread(ctx: ChannelContext, vector: np.ndarray | None) -> str:
    """The thread of the channel's paper closest to ``vector``, and who shared it (when that member is in the
    channel now): the plainest grounded reason."""
    best, best_cos = None, -1.0
    for pid, shared in ctx.papers.items():
        other = ctx.vectors.get(pid)
        if vector is None or other is None or not shared.shares:
            continue
        cos = float(vector @ other / (np.linalg.norm(vector) * np.linalg.norm(other) or 1.0))
        if cos > best_cos:
            best, best_cos = shared, cos
    if best is None:
        return NO_HOOK
    share = best.first_share
    who = f", shared by {member_token(share.user_id)}" if share.user_id and ctx.present(share.user_id) else ""
    return f"Closest to the thread on {as_data(best.info.title or 'a paper')}{who}."


def _cell(text: str) -> str:
    """Outside text in a Markdown table cell: its markup dropped, pipes and line breaks made harmless."""
    return " ".join(as_data(text).replace("|", "¦").split())


def render_markdown(plan: ConferencePlan, names: Mapping[str, str], channel: str) -> str:
    """The plan as a Markdown file: a line on what it is, then a table (rank, paper, authors, why)."""
    lines = [
        f"# {_cell(plan.venue)} {plan.year}: what #{_cell(channel)} would most want to see",
        "",
        f"{len(plan.papers)} of the {plan.found} papers PaperPing found for {_cell(plan.venue)} {plan.year}, "
        "ranked with this channel's own ranking. Written by PaperPing.",
        "",
        "| # | paper | authors | why |",
        "|---|---|---|---|",
    ]
    for i, p in enumerate(plan.papers, 1):
        title = f"[{_cell(p.title)}]({p.url})" if p.url else _cell(p.title)
        lines.append(f"| {i} | {title} | {_cell(p.authors)} | {_cell(render_plain(p.why, names))} |")
    return "\n".join(lines) + "\n"


def render_csv(plan: ConferencePlan, names: Mapping[str, str]) -> str:
    """The plan as CSV: rank, title, authors, link, score, why (a cell that starts like a formula is quoted)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["rank", "title", "authors", "url", "score", "why"])
    for i, p in enumerate(plan.papers, 1):
        row = [_safe(as_data(p.title)), _safe(as_data(p.authors)), _safe(p.url), f"{p.score:.4f}"]
        writer.writerow([i, *row, _safe(as_data(render_plain(p.why, names)))])
    return out.getvalue()


def _safe(text: str) -> str:
    """A spreadsheet reads a cell starting with = + - @ (or a tab or carriage return before one) as a formula:
    such text is kept as text."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
