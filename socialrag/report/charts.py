"""The channel report's charts, drawn with matplotlib (and scikit-learn for the topic map); each function takes
the loaded ``ReportData`` and returns a figure. ``socialrag.report.page`` puts them on the page."""

from __future__ import annotations

import io
import itertools
import logging
import math
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from socialrag.files import replace_whole
from socialrag.knowledge.emoji import display_reaction, is_click, normalize_emoji, read_sentiment
from socialrag.report.data import ReportData
from socialrag.text import as_data

log = logging.getLogger(__name__)
# text from outside is never read as mathematics ("$x$") and the SVGs carry text, not glyph outlines
matplotlib.rcParams.update({"text.parse_math": False, "svg.fonttype": "none", "font.size": 9})
COLOURS = {"shares": "#3b6ea5", "replies": "#e08a2e", "reactions": "#5a9e6f", "paperping": "#8c6bb1"}
SENTIMENT_COLOURS = {"positive": "#5a9e6f", "negative": "#c8553d", "neutral": "#9a9a9a"}
WEEK = timedelta(days=7)


@dataclass
class Chart:
    name: str
    title: str
    caption: str
    svg: str = ""
    png: Path | None = None
    seconds: float = 0.0


def clip_text(text: str | None, limit: int) -> str:
    text = as_data(text or "")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class People:
    """Members as the report shows them: their names, or with ``anonymous`` a pseudonym by activity rank."""

    def __init__(self, data: ReportData, anonymous: bool) -> None:
        activity: Counter[str] = Counter()
        users = [r.user_id for r in data.member_shares] + [r.user_id for r in (*data.replies, *data.reactions)]
        for user_id in users:
            if user_id and user_id not in data.bots:
                activity[user_id] += 1
        ranked = sorted(activity, key=lambda u: (-activity[u], u))
        self.labels = {
            u: f"member {i + 1}" if anonymous else clip_text(data.names.get(u) or f"member {i + 1}", 30)
            for i, u in enumerate(ranked)
        }

    def __call__(self, user_id: str | None) -> str:
        return self.labels.get(user_id or "", "someone")


# ----- the charts -----------------------------------------------------------------------------------


def _weekly(times: list[datetime], start: datetime, weeks: int) -> np.ndarray:
    counts = np.zeros(weeks)
    for t in times:
        i = int((t - start) / WEEK)
        if 0 <= i < weeks:
            counts[i] += 1
    return counts


def _times(data: ReportData) -> list[datetime]:
    return (
        [s.at for s in data.shares]
        + [r.at for r in (*data.replies, *data.reactions)]
        + [p.posted_at for p in data.posts]
    )


def period_end(data: ReportData) -> datetime:
    """The end of the period: ``until``, or the last activity before it (an old history ends where it ends)."""
    times = _times(data)
    return min(data.until, max(times) + timedelta(days=1)) if times else data.until


def _period(data: ReportData) -> tuple[datetime, int]:
    times = _times(data)
    end = period_end(data)
    first = data.since or (min(times) if times else end - WEEK)
    start = (first - timedelta(days=first.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    return start, max(1, math.ceil((end - start) / WEEK))


def chart_activity(data: ReportData) -> Figure:
    start, weeks = _period(data)
    x = mdates.date2num([start + i * WEEK for i in range(weeks)])
    fig, ax = plt.subplots(figsize=(9, 3.0))
    series = {
        "shares": [s.at for s in data.member_shares],
        "replies": [r.at for r in data.replies],
        "reactions": [r.at for r in data.reactions],
    }
    for name, times in series.items():
        ax.plot(x, _weekly(times, start, weeks), label=name, color=COLOURS[name], linewidth=1.4)
    posts = _weekly([p.posted_at for p in data.posts], start, weeks)
    if posts.any():
        ax.bar(x, posts, width=5, color=COLOURS["paperping"], alpha=0.35, label="PaperPing's posts")
    ax.set_ylabel("per week")
    _date_axis(ax.xaxis)
    ax.legend(loc="upper left", frameon=False, ncol=4)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def _distinctive_words(titles: list[str], labels: np.ndarray, k: int) -> list[str]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        tfidf = TfidfVectorizer(stop_words="english", max_features=4000, token_pattern=r"(?u)\b[A-Za-z][A-Za-z\-]+\b")
        matrix = tfidf.fit_transform(titles)
    except ValueError:  # no words at all
        return [f"topic {c + 1}" for c in range(k)]
    words = np.array(tfidf.get_feature_names_out())
    overall = np.asarray(matrix.mean(axis=0)).ravel()
    out = []
    for c in range(k):
        rows = labels == c
        if not rows.any():
            out.append(f"topic {c + 1}")
            continue
        lift = np.asarray(matrix[rows].mean(axis=0)).ravel() - overall
        out.append(", ".join(words[np.argsort(-lift)[:3]]))
    return out


def chart_topics(data: ReportData) -> Figure:
    """The channel's papers in two dimensions (PCA of their embeddings), k-means clusters named by their
    most distinctive title words, coloured by when the paper was first shared."""
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA

    first: dict[int, datetime] = {}
    for s in data.shares:
        first.setdefault(s.paper_id, s.at)
    ids = [p for p in first if p in data.vectors]
    fig, ax = plt.subplots(figsize=(9, 5.2))
    if len(ids) < 3:
        ax.text(0.5, 0.5, "Too few papers with embeddings for a map yet.", ha="center", va="center")
        ax.set_axis_off()
        return fig
    vectors = np.stack([data.vectors[p] for p in ids])
    xy = PCA(n_components=2, random_state=0).fit_transform(vectors)
    k = int(min(8, max(2, round(math.sqrt(len(ids) / 4)))))
    labels = KMeans(n_clusters=k, n_init=3, random_state=0).fit_predict(vectors)
    when = mdates.date2num([first[p] for p in ids])
    points = ax.scatter(
        xy[:, 0], xy[:, 1], c=when, cmap="viridis", s=14 if len(ids) < 2000 else 4, alpha=0.8, linewidths=0,
        rasterized=len(ids) > 1500,
    )  # fmt: skip
    titles = [data.papers[p].title or "" if p in data.papers else "" for p in ids]
    for c, words in enumerate(_distinctive_words([clip_text(t, 300) for t in titles], labels, k)):
        rows = labels == c
        if rows.any():
            cx, cy = np.median(xy[rows], axis=0)
            ax.annotate(
                f"{words} ({int(rows.sum())})", (cx, cy), ha="center", fontsize=8,
                bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "#bbbbbb", "alpha": 0.85},
            )  # fmt: skip
    bar = fig.colorbar(points, ax=ax, fraction=0.035, pad=0.01)
    _date_axis(bar.ax.yaxis)
    bar.set_label("first shared")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.spines[["top", "right", "left", "bottom"]].set_visible(False)
    return fig


def _date_axis(axis: matplotlib.axis.Axis) -> None:
    locator = mdates.AutoDateLocator(minticks=2, maxticks=6)
    axis.set_major_locator(locator)
    axis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def _barh(ax: plt.Axes, counts: list[tuple[str, float]], title: str, colour: str) -> None:
    if not counts:
        ax.text(0.5, 0.5, "none yet", ha="center", va="center", color="#777777")
        ax.set_axis_off()
        ax.set_title(title, loc="left", fontsize=9)
        return
    labels = [c[0] for c in counts][::-1]
    ax.barh(range(len(counts)), [c[1] for c in counts][::-1], color=colour)
    ax.set_yticks(range(len(counts)), labels, fontsize=8)
    ax.set_title(title, loc="left", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)


def chart_people(data: ReportData, people: People) -> Figure:
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
    for ax, (title, rows, colour) in zip(
        list(np.ravel(axes)),
        (
            ("who shares", [r.user_id for r in data.member_shares], COLOURS["shares"]),
            ("who replies", [r.user_id for r in data.replies], COLOURS["replies"]),
            ("who reacts", [r.user_id for r in data.reactions], COLOURS["reactions"]),
        ),
        strict=True,
    ):
        counts = Counter(people(u) for u in rows if u and u not in data.bots)
        _barh(ax, [(name, float(n)) for name, n in counts.most_common(10)], title, colour)
    fig.tight_layout()
    return fig


def engagement(data: ReportData) -> dict[int, int]:
    """Reactions and replies per message."""
    out: Counter[int] = Counter()
    for r in (*data.reactions, *data.replies):
        out[r.message_id] += 1
    return out


def top_papers(data: ReportData, n: int = 10) -> list[tuple[int, int]]:
    """(paper id, reactions + replies + further shares) of the papers that drew the most."""
    per_message = engagement(data)
    score: Counter[int] = Counter()
    seen: set[int] = set()
    for s in data.member_shares:
        score[s.paper_id] += per_message.get(s.message_id, 0) + (1 if s.paper_id in seen else 0)
        seen.add(s.paper_id)
    return [(p, v) for p, v in score.most_common(n) if v > 0]


def chart_papers(data: ReportData) -> Figure:
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6), gridspec_kw={"width_ratios": [2.2, 1, 1]})
    best = [(clip_text(data.papers[p].title if p in data.papers else None, 48) or "untitled", float(v))
            for p, v in top_papers(data)]  # fmt: skip
    _barh(axes[0], best, "papers that drew the most", COLOURS["reactions"])
    venues: Counter[str] = Counter()
    authors: Counter[str] = Counter()
    for pid in {s.paper_id for s in data.member_shares}:
        info = data.papers.get(pid)
        if info is None:
            continue
        if info.venue:
            venues[clip_text(info.venue, 28)] += 1
        for a in info.authors:
            authors[clip_text(a.name, 28)] += 1
    _barh(axes[1], [(v, float(n)) for v, n in venues.most_common(8)], "venues read most", COLOURS["shares"])
    _barh(axes[2], [(a, float(n)) for a, n in authors.most_common(8) if n > 1], "authors read most", COLOURS["shares"])
    fig.tight_layout()
    return fig


def answered(data: ReportData, emoji: dict[str, int], replies: int) -> bool:
    """A post drew a positive reaction (as this channel reads its emoji) or a reply."""
    return replies > 0 or any(read_sentiment(normalize_emoji(e), data.overrides) == "positive" for e in emoji)


def chart_paperping(data: ReportData) -> Figure:
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.3), gridspec_kw={"width_ratios": [2, 1, 1.2]})
    ax = axes[0]
    if data.posts:
        x = mdates.date2num([p.posted_at for p in data.posts])
        ax.bar(x, [sum(p.reactions.values()) for p in data.posts], width=0.8, color=COLOURS["reactions"],
               label="reactions")  # fmt: skip
        ax.bar(x, [p.replies for p in data.posts], bottom=[sum(p.reactions.values()) for p in data.posts],
               width=0.8, color=COLOURS["replies"], label="replies")  # fmt: skip
        per_message = engagement(data)
        members = [per_message.get(s.message_id, 0) for s in data.member_shares]
        if members:
            ax.axhline(float(np.median(members)), color=COLOURS["shares"], linestyle="--", linewidth=1,
                       label="members' shares (median)")  # fmt: skip
        _date_axis(ax.xaxis)
        ax.legend(frameon=False, fontsize=7, loc="upper left")
    else:
        ax.text(0.5, 0.5, "PaperPing has not posted here yet", ha="center", va="center", color="#777777")
        ax.set_axis_off()
    ax.set_title("what each of PaperPing's posts drew", loc="left", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    styles: dict[str, list[bool]] = {}
    for p in data.posts:
        styles.setdefault(p.style, []).append(answered(data, p.reactions, p.replies))
    _barh(
        axes[1],
        [(f"{s} ({len(v)})", 100.0 * sum(v) / len(v)) for s, v in sorted(styles.items())],
        "% drawing a positive reaction or a reply",
        COLOURS["paperping"],
    )
    if styles:
        axes[1].set_xlim(0, 100)
    ax = axes[2]
    times = [p.posted_at for p in data.posts]
    if len(times) > 1:
        gaps = [(b - a).total_seconds() / 86400 for a, b in itertools.pairwise(times)]
        ax.step(mdates.date2num(times[1:]), gaps, where="post", color=COLOURS["paperping"])
        ax.set_ylabel("days since the previous post")
        ax.set_ylim(0, max(gaps) * 1.2 + 0.5)
        _date_axis(ax.xaxis)
    else:
        ax.text(0.5, 0.5, "not enough posts for a pace", ha="center", va="center", color="#777777")
        ax.set_axis_off()
    ax.set_title("pace", loc="left", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def chart_emoji(data: ReportData) -> Figure:
    counts = Counter(r.emoji if is_click(r.emoji) else normalize_emoji(r.emoji) for r in data.reactions if r.emoji)
    fig, ax = plt.subplots(figsize=(9, 3.0))
    top = counts.most_common(16)
    if not top:
        ax.text(0.5, 0.5, "no reactions yet", ha="center", va="center", color="#777777")
        ax.set_axis_off()
        return fig
    readings = [read_sentiment(e, data.overrides) for e, _ in top]
    bars = ax.bar(range(len(top)), [n for _, n in top], color=[SENTIMENT_COLOURS[r] for r in readings])
    for bar, (e, _) in zip(bars, top, strict=True):
        if e in data.overrides:
            bar.set_hatch(".." if e in data.learnt else "//")
    ax.set_xticks(
        range(len(top)), [clip_text(display_reaction(e), 24) for e, _ in top], rotation=40, ha="right", fontsize=8
    )
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in SENTIMENT_COLOURS.values()]
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="black", hatch="//"))
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="black", hatch=".."))
    labels = [*SENTIMENT_COLOURS, "set by the channel", "learnt from the channel"]
    ax.legend(handles, labels, frameon=False, fontsize=7, ncol=5)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


# ----- the page -------------------------------------------------------------------------------------


def _svg(fig: Figure, name: str) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": name}):
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def save_chart(fig: Figure, chart: Chart, out: Path) -> None:
    chart.svg = _svg(fig, chart.name)
    chart.png = out / f"{chart.name}.png"
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110, bbox_inches="tight")
    replace_whole(chart.png, png.getvalue())  # a full disk keeps the last report's picture whole
    plt.close(fig)


def count_answered(data: ReportData) -> int:
    """PaperPing's posts that drew a positive reaction or a reply."""
    return sum(1 for p in data.posts if answered(data, p.reactions, p.replies))


def answered_by_length(data: ReportData) -> str:
    """Which explanation lengths drew answers: ``short: 2 of 4 posts answered; normal: 1 of 3`` (empty when
    no post of the period has a recorded length)."""
    lengths: dict[str, list[bool]] = {}
    for p in data.posts:
        if p.length:
            lengths.setdefault(p.length, []).append(answered(data, p.reactions, p.replies))
    return "; ".join(f"{k}: {sum(v)} of {len(v)} answered" for k, v in sorted(lengths.items()))


def count_papers(data: ReportData) -> int:
    """Distinct papers members shared."""
    return len({s.paper_id for s in data.member_shares})


def headline_figures(data: ReportData) -> list[tuple[str, str]]:
    answered_posts = count_answered(data)
    share = f" ({100 * answered_posts // len(data.posts)}%)" if data.posts else ""
    return [
        ("papers shared", f"{count_papers(data)}"),
        ("shares", f"{len(data.member_shares)}"),
        ("thread replies", f"{len(data.replies)}"),
        ("reactions", f"{len(data.reactions)}"),
        ("PaperPing's posts", f"{len(data.posts)}"),
        ("answered with a positive reaction or a reply", f"{answered_posts}{share}"),
    ] + ([("answered, by explanation length", lengths)] if (lengths := answered_by_length(data)) else [])
