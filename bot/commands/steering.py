"""Commands that steer what PaperPing looks for in a channel: `focus`, `sources` and `emoji`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot.app_context import AppContext
from bot.commands.base import Command, Invocation, UsageError, command
from bot.views.post_blocks import quote
from socialrag import storage
from socialrag.knowledge import find_paper_refs, is_emoji_name, normalize_emoji, parse_sentiment
from socialrag.recommender import normalize_arxiv_category

FOCUS_DAYS = 14
FOCUS_MAX_LINKS = 10  # papers a focus may link to
SOURCE_NAMES = {
    "semanticscholar": "semanticscholar",
    "semantic-scholar": "semanticscholar",
    "s2": "semanticscholar",
    "arxiv": "arxiv",
    "catalog": "catalog",
    "local": "catalog",
}
ALL_SOURCES = ("catalog", "semanticscholar", "arxiv")


def parse_focus(name: str, args: tuple[str, ...], rest: str) -> Command:
    if not rest:
        raise UsageError("Try `/paperping focus retrieval-augmented generation` or paste paper links.")
    return Command(name, text=rest)


@command(
    "focus",
    "`focus TEXT-OR-LINKS` — lean the next recommendations toward a topic for two weeks (`focus off` to stop)",
    parse=parse_focus,
    steers=True,
)
def cmd_focus(inv: Invocation) -> str:
    if inv.text.lower() == "off":
        inv.set(focus_text=None, focus_expires_at=None, focus_paper_ids=[])
        inv.announce("cleared PaperPing's focus.")
        return "Done: no focus."
    refs = find_paper_refs(inv.text)[:FOCUS_MAX_LINKS]
    with inv.ctx.db.connection() as conn:
        ids = storage.papers.ensure_papers(conn, [(r.scheme, r.value) for r in refs])
        paper_ids = list(dict.fromkeys(ids.values()))
        storage.queue.enqueue_papers(conn, paper_ids, storage.queue.PRIORITY_NOW)
    inv.ctx.wake.index_soon()  # linked papers are looked up and embedded at once
    until = inv.now + timedelta(days=FOCUS_DAYS)
    inv.set(focus_text=inv.text[:500], focus_expires_at=until, focus_paper_ids=paper_ids)
    topic = quote(inv.text, 120)
    inv.announce(f"asked PaperPing to lean toward: {topic} (for {FOCUS_DAYS} days).")
    looking = f" I'm looking up the {len(paper_ids)} linked papers now." if paper_ids else ""
    return f"Done: the next recommendations lean toward that for {FOCUS_DAYS} days.{looking}"


_SOURCES_HINT = (
    "Try `/paperping sources semanticscholar arxiv catalog`, `/paperping sources arxiv cs.CL cs.LG` or `all`."
)


def parse_sources(name: str, args: tuple[str, ...], rest: str) -> Command:
    """``sources`` (show), ``sources all``, ``sources NAME... [CATEGORY...]``: arXiv categories imply arXiv.
    Returns the chosen source names, then ``--`` and the categories."""
    if not args:
        return Command("sources")
    names: list[str] = []
    categories: list[str] = []
    for word in args:
        lowered = word.lower().strip(",")
        if lowered == "all":
            names += ALL_SOURCES
        elif lowered in SOURCE_NAMES:
            names.append(SOURCE_NAMES[lowered])
        elif (category := normalize_arxiv_category(word.strip(","))) is not None:
            categories.append(category)
        else:
            raise UsageError(f"`{quote(word, 40)}` is neither a source nor an arXiv category. {_SOURCES_HINT}")
    if categories and "arxiv" not in names:
        names.append("arxiv")
    chosen = tuple(n for n in ALL_SOURCES if n in names)
    return Command("sources", (*chosen, "--", *dict.fromkeys(categories)))


@command(
    "sources",
    "`sources` — where candidates come from; `sources semanticscholar arxiv catalog` or "
    "`sources arxiv cs.CL cs.LG` sets it",
    parse=parse_sources,
    steers=lambda c: bool(c.args),
)
def cmd_sources(inv: Invocation) -> str:
    if inv.args:
        cut = inv.args.index("--")
        names, categories = list(inv.args[:cut]), list(inv.args[cut + 1 :])
        values: dict[str, Any] = {"sources": names}
        if categories or "arxiv" not in names:
            values["arxiv_categories"] = categories
        inv.set(**values)
        inv.announce(
            f"set where PaperPing looks for papers: {describe_sources(inv.ctx, names, categories)}.",
        )
    with inv.ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, inv.team, inv.channel)
    shown = describe_sources(inv.ctx, s.sources, s.arxiv_categories)
    return f"Candidates here come from: {shown}." + ("" if inv.args else f"\n{_SOURCES_HINT}")


def describe_sources(ctx: AppContext, names: list[str], categories: list[str]) -> str:
    parts = []
    for name in names:
        if name == "semanticscholar":
            parts.append("Semantic Scholar recommendations")
        elif name == "arxiv":
            cats = ", ".join(categories) if categories else "the categories of the arXiv papers shared here"
            parts.append(f"new arXiv papers in {cats}")
        elif name == "catalog":
            parts.append("the local catalog")
    if ctx.settings.offline:
        parts.append("(offline: only the local catalog is searched)")
    return ", ".join(parts) or "nowhere (`/paperping sources all` turns them all on)"


def parse_emoji(name: str, args: tuple[str, ...], rest: str) -> Command:
    if len(args) != 2:
        raise UsageError("Try `/paperping emoji eyes positive` (positive, negative, neutral, or auto).")
    emoji = normalize_emoji(args[0])
    if not is_emoji_name(emoji):
        raise UsageError(f"`{quote(args[0], 40)}` is not an emoji name. Try `/paperping emoji eyes positive`.")
    if args[1].strip().lower() == "auto":
        return Command(name, (emoji, "auto"))
    try:
        return Command(name, (emoji, parse_sentiment(args[1])))
    except ValueError as exc:
        raise UsageError(f"{exc}. Try `/paperping emoji eyes positive`.") from None


@command(
    "emoji",
    "`emoji NAME positive|negative|neutral|auto` — how this channel reads an emoji (auto: as learnt from the channel)",
    parse=parse_emoji,
    steers=True,
)
def cmd_emoji(inv: Invocation) -> str:
    emoji, sentiment = inv.args
    if sentiment == "auto":
        with inv.ctx.db.connection() as conn:
            storage.settings.delete_emoji_override(conn, inv.team, inv.channel, emoji)
        inv.announce(f"let PaperPing read :{emoji}: the way this channel uses it.")
        return f"Done: :{emoji}: is read as PaperPing learns it from this channel (`/paperping status` shows it)."
    with inv.ctx.db.connection() as conn:
        storage.settings.upsert_emoji_override(conn, inv.team, inv.channel, emoji, sentiment)  # type: ignore[arg-type]
    inv.announce(f"told PaperPing that :{emoji}: reads as {sentiment} here.")
    return f"Done: :{emoji}: counts as {sentiment} in this channel."
