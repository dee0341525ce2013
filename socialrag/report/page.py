"""The channel report: ``write_report`` writes ``index.html`` (one self-contained page: no script, styles inline,
the charts inline as SVG, nothing fetched from the network) and each chart as a PNG beside it;
``month_summary`` draws the one chart PaperPing uploads to Slack: figures about the channel as a whole, no
member named."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

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


@dataclass
class Report:
    path: Path
    charts: list[Chart] = field(default_factory=list)
    seconds: float = 0.0


PAGE_STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1c1d; max-width: 1100px;
       margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 2em; }
.period { color: #616061; } .figures { display: flex; flex-wrap: wrap; gap: 0.6em; margin: 1em 0; }
.figure { border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 0.9em; min-width: 8em; }
.figure b { display: block; font-size: 1.4em; } figure { margin: 0; } figure svg { max-width: 100%; height: auto; }
figcaption { color: #616061; font-size: 0.9em; } table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
td, th { text-align: left; padding: 0.3em 0.5em; border-bottom: 1px solid #eee; vertical-align: top; }
"""


def render_page(data: ReportData, charts: list[Chart]) -> str:
    e = html.escape
    period = f"{data.since:%d %b %Y} – " if data.since else "from the start – "
    period += f"{period_end(data):%d %b %Y}"
    figures = "".join(f'<div class="figure"><b>{e(v)}</b>{e(k)}</div>' for k, v in headline_figures(data))
    sections = []
    for c in charts:
        sections.append(
            f'<h2 id="{c.name}">{e(c.title)}</h2><figure>{c.svg}<figcaption>{e(c.caption)} '
            f'<a href="{e(c.name)}.png">PNG</a></figcaption></figure>'
        )
        if c.name == "papers":
            sections.append(_papers_table(data))
        if c.name == "paperping":
            sections.append(_posts_table(data))
    name = clip_text(data.channel_name, 80)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>#{e(name)} · PaperPing report</title><style>{PAGE_STYLE}</style></head><body>"
        f"<h1>#{e(name)}: what the channel reads</h1>"
        f'<div class="period">{e(period)} · written by PaperPing on {datetime.now():%d %b %Y}</div>'
        f'<div class="figures">{figures}</div>{"".join(sections)}</body></html>\n'
    )


def _papers_table(data: ReportData) -> str:
    e = html.escape
    rows = []
    for pid, score in top_papers(data):
        info = data.papers.get(pid)
        title = clip_text(info.title if info else None, 160) or "untitled"
        venue = clip_text(info.venue, 60) if info and info.venue else ""
        rows.append(f"<tr><td>{e(title)}</td><td>{e(venue)}</td><td>{score}</td></tr>")
    if not rows:
        return ""
    return (
        "<table><tr><th>paper</th><th>venue</th><th>reactions, replies, re-shares</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _posts_table(data: ReportData) -> str:
    e = html.escape
    rows = []
    for p in reversed(data.posts[-30:]):
        drew = ", ".join(
            f"{clip_text(display_reaction(k), 24)} ×{v}" for k, v in sorted(p.reactions.items(), key=lambda kv: -kv[1])
        )
        replies = f"{p.replies} repl{'y' if p.replies == 1 else 'ies'}" if p.replies else ""
        received = "; ".join(x for x in (drew, replies) if x) or "nothing yet"
        rows.append(
            f"<tr><td>{p.posted_at:%d %b %Y}</td><td>{e(clip_text(p.title, 140) or 'a paper')}</td>"
            f"<td>{e(p.style)}</td><td>{e(received)}</td></tr>"
        )
    if not rows:
        return ""
    return "<table><tr><th>posted</th><th>paper</th><th>style</th><th>drew</th></tr>" + "".join(rows) + "</table>"


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
    report.path.write_text(render_page(data, report.charts), encoding="utf-8")
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
        f"*{_month_words(data).capitalize()}:* {count_papers(data)} papers shared, "
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
