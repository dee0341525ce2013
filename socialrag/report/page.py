"""The channel report: ``write_report`` writes ``index.html`` (one self-contained page: no script, styles inline,
the charts inline as SVG, nothing fetched from the network) and each chart as a PNG beside it;
``month_summary`` draws the one chart PaperPing uploads to Slack: figures about the channel as a whole, no
member named."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from markupsafe import Markup

from socialrag.files import replace_whole
from socialrag.knowledge.emoji import display_reaction
from socialrag.report.charts import (
    Chart,
    Figure,
    People,
    answered_by_length,
    chart_activity,
    chart_emoji,
    chart_paperping,
    chart_papers,
    chart_people,
    chart_topics,
    clip_text,
    count_answered,
    count_papers,
    headline_figures,
    period_end,
    plt,
    save_chart,
    top_papers,
)
from socialrag.report.data import ReportData
from socialrag.templates import templates


@dataclass
class Report:
    path: Path
    charts: list[Chart] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class PaperRow:
    title: str
    venue: str
    score: int


@dataclass(frozen=True)
class PostRow:
    posted: str
    title: str
    style: str
    received: str


def render_page(data: ReportData, charts: list[Chart]) -> str:
    """The report page (``templates/report.html.j2``); every value escaped but the charts' SVG, which matplotlib
    wrote with the channel's texts escaped in it."""
    period = f"{data.since:%d %b %Y} – " if data.since else "from the start – "
    return (
        templates("socialrag.report")
        .get_template("report.html.j2")
        .render(
            channel=clip_text(data.channel_name, 80),
            period=period + f"{period_end(data):%d %b %Y}",
            written=f"{datetime.now(UTC):%d %b %Y} (UTC)",  # the server's own zone would be none of the group's
            figures=headline_figures(data),
            charts=[replace(c, svg=Markup(c.svg)) for c in charts],
            papers=_paper_rows(data),
            posts=_post_rows(data),
        )
    )


def _paper_rows(data: ReportData) -> list[PaperRow]:
    rows = []
    for pid, score in top_papers(data):
        info = data.papers.get(pid)
        title = clip_text(info.title if info else None, 160) or "untitled"
        venue = clip_text(info.venue, 60) if info and info.venue else ""
        rows.append(PaperRow(title, venue, score))
    return rows


def _post_rows(data: ReportData) -> list[PostRow]:
    rows = []
    for p in reversed(data.posts[-30:]):
        drew = ", ".join(
            f"{clip_text(display_reaction(k), 24)} ×{v}" for k, v in sorted(p.reactions.items(), key=lambda kv: -kv[1])
        )
        replies = f"{p.replies} repl{'y' if p.replies == 1 else 'ies'}" if p.replies else ""
        received = "; ".join(x for x in (drew, replies) if x) or "nothing yet"
        rows.append(PostRow(f"{p.posted_at:%d %b %Y}", clip_text(p.title, 140) or "a paper", p.style, received))
    return rows


def write_report(data: ReportData, out: Path, *, anonymous: bool = False) -> Report:
    """Draw the charts and write ``out/index.html`` with them, and each chart as ``out/NAME.png``."""
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    people = People(data, anonymous)
    plan: list[tuple[Chart, Callable[[], Figure]]] = [
        (Chart("activity", "Activity",
               "Members' shares, thread replies and reactions per week; PaperPing's posts as bars."),
         lambda: chart_activity(data)),
        (Chart("topics", "Topic map", "The channel's papers placed by their embeddings (PCA), grouped into clusters "
               "named by their most distinctive title words; colour shows when each was first shared."),
         lambda: chart_topics(data)),
        (Chart("people", "Who carries the discussion",
               "Shares, replies and reactions per member" + (" (pseudonyms)." if anonymous else ".")),
         lambda: chart_people(data, people)),
        (Chart("papers", "What the group reads", "The papers that drew the most; the venues and authors read most."),
         lambda: chart_papers(data)),
        (Chart("paperping", "PaperPing's posts", "Reactions and replies per post next to members' shares; the share "
               "of posts that drew a positive reaction or a reply, by style; days between posts."),
         lambda: chart_paperping(data)),
        (Chart("emoji", "Emoji", "The emoji the channel uses and how PaperPing reads each (hatched: set by the channel "
               "with `/paperping emoji`; dotted: learnt from what the channel does after that reaction)."),
         lambda: chart_emoji(data)),
    ]  # fmt: skip
    report = Report(out / "index.html")
    for chart, draw in plan:
        t = time.perf_counter()
        save_chart(draw(), chart, out)
        chart.seconds = time.perf_counter() - t
        report.charts.append(chart)
    replace_whole(report.path, render_page(data, report.charts))
    report.seconds = time.perf_counter() - started
    return report


# ----- the month in Slack ---------------------------------------------------------------------------


def month_summary(data: ReportData, out: Path) -> tuple[Path, str]:
    """One PNG of the period's weekly activity and PaperPing's posts, and two lines to go with it. Only
    figures about the channel as a whole: no member is named."""
    fig = chart_activity(data)
    fig.axes[0].set_title(f"#{clip_text(data.channel_name, 60)}, {_month_words(data)}", loc="left", fontsize=10)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    text = (
        f"*{_month_words(data)}:* {count_papers(data)} papers shared, "
        f"{len(data.replies)} thread replies, {len(data.reactions)} reactions.\n"
        f"PaperPing posted {len(data.posts)}; {count_answered(data)} drew a positive reaction or a reply."
    )
    lengths = answered_by_length(data)
    if lengths:
        text += f"\nBy explanation length: {lengths}."
    return out, text


def _month_words(data: ReportData) -> str:
    start = data.since or data.until - timedelta(days=30)
    return f"{start:%d %b} to {period_end(data):%d %b %Y}"


def safe_filename(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text)[:60] or "channel"
