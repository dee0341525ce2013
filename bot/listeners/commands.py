"""The ``/paperping`` slash command. Answers are ephemeral; settings changes are announced in the channel in
one short line, so the group sees them; a wrong word gets the usage back."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.blocks import quote
from bot.context import AppContext
from bot.reports import post_month_report
from socialrag import storage
from socialrag.errors import PaperPingError, SourceError
from socialrag.knowledge import (
    Readiness,
    assess,
    describe_empty,
    describe_index,
    find_paper_refs,
    focus_active,
    normalize_emoji,
    parse_sentiment,
)
from socialrag.models import STYLES, signal_from_json
from socialrag.recommender import (
    FREQUENCIES,
    describe_fact,
    describe_ranker,
    describe_style,
    load_fit,
    normalize_arxiv_category,
)
from socialrag.storage.papers import ensure_papers

log = logging.getLogger(__name__)

USAGE = """*PaperPing* — `/paperping` followed by:
• `help` — this list
• `frequency daily|every-other-day|weekly` — how often I post here
• `pause` / `resume` — stop and restart posting here
• `now` — post a recommendation now
• `status` — settings, what I know of this channel, the next post, how the last posts were received
• `style tldr|template|template+tldr|llm` — how I explain a paper
• `why` — the signals behind my last post
• `mentions off|on` — whether I @-mention you
• `forget-me` — delete what I stored about you in this workspace and store nothing more (asks to confirm)
• `remember-me` — lift `forget-me`: what you share from now on counts again
• `link-author ID` — your Semantic Scholar author id, ORCID or profile URL
• `focus TEXT-OR-LINKS` — lean the next recommendations toward a topic for two weeks (`focus off` to stop)
• `sources` — where candidates come from; `sources semanticscholar arxiv catalog` or `sources arxiv cs.CL cs.LG` sets it
• `emoji NAME positive|negative|neutral` — how this channel reads an emoji
• `hours 9-17 [TIMEZONE] [every-day]` — when I may post here (weekdays only unless `every-day`)
• `report` — post this month's chart of the channel's activity here; `report monthly|off` — on the 1st of each month"""

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
# commands about the member, not the channel: they work wherever they are typed
MEMBER_COMMANDS = frozenset({"help", "mentions", "forget-me", "remember-me", "link-author"})
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])")


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple[str, ...] = ()
    text: str = ""


class UsageError(ValueError):
    """What the member typed is not a command; the message says what to type instead."""


def parse_command(text: str) -> Command:
    """``/paperping`` text as a ``Command``; raises ``UsageError`` with a sentence on what to type."""
    words = text.strip().split()
    if not words:
        return Command("help")
    name, args = words[0].lower(), tuple(words[1:])
    rest = text.strip()[len(words[0]) :].strip()
    if name in ("help", "pause", "resume", "now", "status", "why", "remember-me"):
        return Command(name)
    if name == "frequency":
        if len(args) != 1 or args[0].lower() not in FREQUENCIES:
            raise UsageError("Try `/paperping frequency daily`, `every-other-day` or `weekly`.")
        return Command(name, (args[0].lower(),))
    if name == "style":
        if len(args) != 1 or args[0].lower() not in STYLES:
            raise UsageError("Try `/paperping style tldr`, `template`, `template+tldr` or `llm`.")
        return Command(name, (args[0].lower(),))
    if name == "mentions":
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            raise UsageError("Try `/paperping mentions off` or `/paperping mentions on`.")
        return Command(name, (args[0].lower(),))
    if name == "forget-me":
        return Command(name, tuple(a.lower() for a in args[:1]))
    if name == "link-author":
        if len(args) != 1:
            raise UsageError(
                "Try `/paperping link-author 1741101` (a Semantic Scholar author id), an ORCID, or your profile URL."
            )
        return Command(name, args)
    if name == "focus":
        if not rest:
            raise UsageError("Try `/paperping focus retrieval-augmented generation` or paste paper links.")
        return Command(name, text=rest)
    if name == "emoji":
        if len(args) != 2:
            raise UsageError("Try `/paperping emoji eyes positive` (positive, negative or neutral).")
        try:
            return Command(name, (normalize_emoji(args[0]), parse_sentiment(args[1])))
        except ValueError as exc:
            raise UsageError(f"{exc}. Try `/paperping emoji eyes positive`.") from None
    if name == "hours":
        return parse_hours(args)
    if name == "sources":
        return parse_sources(args)
    if name == "report":
        if len(args) > 1 or (args and args[0].lower() not in ("monthly", "off")):
            raise UsageError("Try `/paperping report`, `/paperping report monthly` or `/paperping report off`.")
        return Command(name, (args[0].lower(),) if args else ())
    raise UsageError(f"I don't know `{words[0]}`.")


_HOURS_HINT = "Try `/paperping hours 9-17`, `/paperping hours 10-16 America/New_York` or add `every-day`."


def parse_hours(args: tuple[str, ...]) -> Command:
    """``hours 9-17 [Area/City] [every-day]``: posting hours, the channel's timezone, weekends allowed."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    m = re.fullmatch(r"(\d{1,2})-(\d{1,2})", args[0]) if args else None
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)) <= 24:
        raise UsageError(_HOURS_HINT)
    rest = [a for a in args[1:] if a.lower() != "every-day"]
    if len(rest) > 1:
        raise UsageError(_HOURS_HINT)
    if rest:
        try:
            ZoneInfo(rest[0])
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"`{rest[0]}` is not a timezone I know. {_HOURS_HINT}") from None
    every_day = "every-day" in (a.lower() for a in args[1:])
    return Command("hours", (m.group(1), m.group(2), rest[0] if rest else "", "every-day" if every_day else ""))


_SOURCES_HINT = (
    "Try `/paperping sources semanticscholar arxiv catalog`, `/paperping sources arxiv cs.CL cs.LG` or `all`."
)


def parse_sources(args: tuple[str, ...]) -> Command:
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


def parse_author_link(value: str) -> dict[str, str]:
    """A Semantic Scholar author id or profile URL, or an ORCID (bare or URL), as member settings."""
    value = value.strip("<>").split("|")[0]
    orcid = _ORCID.search(value)
    if orcid:
        return {"orcid": orcid.group(1)}
    m = re.search(r"semanticscholar\.org/author/(?:[^/]+/)?(\d+)", value)
    if m:
        return {"s2_author_id": m.group(1)}
    if value.isdigit():
        return {"s2_author_id": value}
    raise UsageError(
        "That is not an author id I can use: give a Semantic Scholar author id (digits), its "
        "profile URL, or an ORCID such as 0000-0002-1825-0097."
    )


def announce(ctx: AppContext, client: WebClient, channel: str, user: str, line: str) -> None:
    """Tell the channel about a settings change (the paper's DG4: the group sees what steers the bot). A
    failed announcement is logged; the member still gets the answer."""
    try:
        ctx.pacer.post(client.chat_postMessage, channel=channel, text=f"<@{user}> {line}")
    except (SlackApiError, PaperPingError) as exc:
        log.warning("could not announce a settings change in %s: %s", channel, exc)


def run_command(ctx: AppContext, client: WebClient, body: dict[str, Any], now: datetime | None = None) -> str:
    """Carry out one command and return the ephemeral answer."""
    now = now or datetime.now(UTC)
    team, channel, user = str(body["team_id"]), str(body["channel_id"]), str(body["user_id"])
    try:
        command = parse_command(str(body.get("text") or ""))
    except UsageError as exc:
        return f"{exc}\n\n{USAGE}"
    if command.name not in MEMBER_COMMANDS:
        if channel.startswith("D"):
            return "Settings are per channel: type `/paperping` in a channel PaperPing is in."
        if not ctx.slack.is_member(client, channel):
            return (
                "I'm not in this channel yet, so nothing was changed. Invite me first (`/invite @PaperPing`), "
                "then try again."
            )
    ctx.slack.ensure_channel(client, team, channel)
    handler = HANDLERS.get(command.name)
    if handler is None:
        return USAGE
    return handler(ctx, client, command, team, channel, user, now)


def _set(ctx: AppContext, team: str, channel: str, **values: Any) -> None:
    with ctx.db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, team, channel, **values)


def cmd_help(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    return USAGE


def cmd_frequency(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    _set(ctx, team, channel, frequency=c.args[0], step_down_reason=None)
    announce(ctx, client, channel, user, f"set PaperPing to post {c.args[0].replace('-', ' ')}.")
    return f"Done: I'll post {c.args[0].replace('-', ' ')} here."


def cmd_pause(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    _set(ctx, team, channel, paused=c.name == "pause")
    if c.name == "resume":
        ctx.channels.activate(team, channel, now)
    verb = "paused" if c.name == "pause" else "resumed"
    announce(ctx, client, channel, user, f"{verb} PaperPing's posts in this channel.")
    return f"Done: posts are {verb}."


NOW_COOLDOWN = timedelta(minutes=10)


def cmd_now(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    with ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, team, channel)
    last = s.last_post_at
    if last is not None and now - last < NOW_COOLDOWN:
        again = last + NOW_COOLDOWN
        return f"I posted here at {last:%H:%M} UTC; `/paperping now` works again from {again:%H:%M} UTC."
    ready = channel_readiness(ctx, team, channel, now)
    if ready.kind == "none":
        return ready.sentence  # nothing to start a search from: no post is promised
    if s.active and s.slot_at is not None and s.next_post_at is not None and s.next_post_at <= now + NOW_COOLDOWN:
        if ready.kind == "indexing" or ctx.wake.scheduler is None:
            waiting = f" {ready.sentence}" if ready.kind == "indexing" else ""
            return "A recommendation is already on its way here." + waiting
        ctx.wake.post_soon()
        return wait_for_slot(ctx, team, channel, now)  # the slot under way: say what came of it
    ctx.channels.activate(team, channel, now)
    _set(ctx, team, channel, next_post_at=now, slot_at=now, paused=False)
    ctx.wake.post_soon()
    if ready.kind == "indexing" or ctx.wake.scheduler is None:
        return ready.sentence
    return wait_for_slot(ctx, team, channel, now)


NOW_WAIT_SECONDS = 90.0


def channel_readiness(ctx: AppContext, team: str, channel: str, now: datetime) -> Readiness:
    """Whether a post can come now, from the channel's index, its history being read, its focus and sources."""
    from bot.backfill import history_being_read

    with ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, team, channel)
        progress = storage.queue.load_index_progress(conn, team, channel, ctx.settings.embed_model)
        reading = history_being_read(conn, team, channel)
    arxiv = bool(s.arxiv_categories) and "arxiv" in s.sources and not ctx.settings.offline
    return assess(progress, reading, focus_active(s, now), arxiv)


def wait_for_slot(ctx: AppContext, team: str, channel: str, asked_at: datetime) -> str:
    """Wait (a little) for the slot `now` opened, and say what came of it: posted, or why not."""
    deadline = time.monotonic() + NOW_WAIT_SECONDS
    retried = False
    while time.monotonic() < deadline:
        time.sleep(1.0)
        with ctx.db.connection() as conn:
            s = storage.settings.load_channel_settings(conn, team, channel)
        if s.last_post_at is not None and s.last_post_at >= asked_at:
            return "Posted: the recommendation is in the channel."
        if s.empty_at is not None and s.empty_at >= asked_at and not retried:
            # a slot already under way when the member asked may have started before a focus or source they
            # just set: try once more now, with what the channel has now
            retried = True
            asked_at = datetime.now(UTC)
            _set(ctx, team, channel, next_post_at=asked_at)
            ctx.wake.post_soon()
            continue
        if s.empty_at is not None and s.empty_at >= asked_at:
            nxt = s.next_post_at
            again = f" I'll try again {nxt:%a %H:%M} UTC." if nxt else ""
            return f"Nothing to post yet: {s.empty_reason}.{again}"
    return "On it: this one is taking longer than usual; the post will appear here when it is ready."


def cmd_style(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    _set(ctx, team, channel, style=c.args[0])
    announce(ctx, client, channel, user, f"set PaperPing's explanations to the `{c.args[0]}` style.")
    return f"Done: style is now {c.args[0]}."


def cmd_mentions(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    with ctx.db.connection() as conn:
        storage.settings.upsert_member_setting(conn, team, user, mentions_enabled=c.args[0] == "on")
    if c.args[0] == "off":
        return "Done: I won't @-mention you; I may still name you when a paper relates to you."
    return "Done: I may @-mention you when a paper fits your interests."


def cmd_forget(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    if c.args[:1] != ("confirm",):
        return (
            "This deletes every message, reply and reaction of yours that PaperPing stored in this workspace, "
            "and your profile and settings. To go ahead, type `/paperping forget-me confirm`."
        )
    with ctx.db.connection() as conn:
        counts = storage.privacy.forget_member(conn, team, user)
    return (
        f"Done: I deleted {counts['messages']} stored messages and replies and {counts['reactions']} reactions "
        "of yours, your profile, and your name and id in my past drafts and logs. I will store nothing of yours "
        "in this workspace again, from live messages, imports or history, until you type `/paperping remember-me`."
    )


def cmd_remember(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    with ctx.db.connection() as conn:
        lifted = storage.privacy.remember_member(conn, team, user)
    if not lifted:
        return "You have not asked me to forget you, so there is nothing to lift."
    return "Done: what you share and react to from now on counts again. What I deleted stays deleted."


def cmd_link_author(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    values = parse_author_link(c.args[0])
    with ctx.db.connection() as conn:
        storage.settings.upsert_member_setting(conn, team, user, **values)
    kind, value = next(iter(values.items()))
    label = "ORCID" if kind == "orcid" else "Semantic Scholar author id"
    return f"Done: your {label} is {value}. I'll use it to notice papers you wrote and people you work with."


def cmd_focus(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    if c.text.lower() == "off":
        _set(ctx, team, channel, focus_text=None, focus_expires_at=None, focus_paper_ids=[])
        announce(ctx, client, channel, user, "cleared PaperPing's focus.")
        return "Done: no focus."
    refs = find_paper_refs(c.text)[:FOCUS_MAX_LINKS]
    with ctx.db.connection() as conn:
        ids = ensure_papers(conn, [(r.scheme, r.value) for r in refs])
        paper_ids = list(dict.fromkeys(ids.values()))
        storage.queue.enqueue_papers(conn, paper_ids, storage.queue.PRIORITY_NOW)
    ctx.wake.index_soon()  # linked papers are looked up and embedded at once
    until = now + timedelta(days=FOCUS_DAYS)
    _set(ctx, team, channel, focus_text=c.text[:500], focus_expires_at=until, focus_paper_ids=paper_ids)
    topic = quote(c.text, 120)
    announce(ctx, client, channel, user, f"asked PaperPing to lean toward: {topic} (for {FOCUS_DAYS} days).")
    looking = f" I'm looking up the {len(paper_ids)} linked papers now." if paper_ids else ""
    return f"Done: the next recommendations lean toward that for {FOCUS_DAYS} days.{looking}"


def cmd_sources(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    if c.args:
        cut = c.args.index("--")
        names, categories = list(c.args[:cut]), list(c.args[cut + 1 :])
        values: dict[str, Any] = {"sources": names}
        if categories or "arxiv" not in names:
            values["arxiv_categories"] = categories
        _set(ctx, team, channel, **values)
        announce(
            ctx,
            client,
            channel,
            user,
            f"set where PaperPing looks for papers: {describe_sources(ctx, names, categories)}.",
        )
    with ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, team, channel)
    shown = describe_sources(ctx, s.sources, s.arxiv_categories)
    return f"Candidates here come from: {shown}." + ("" if c.args else f"\n{_SOURCES_HINT}")


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


def cmd_emoji(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    emoji, sentiment = c.args
    with ctx.db.connection() as conn:
        storage.settings.upsert_emoji_override(conn, team, channel, emoji, sentiment)  # type: ignore[arg-type]
    announce(ctx, client, channel, user, f"told PaperPing that :{emoji}: reads as {sentiment} here.")
    return f"Done: :{emoji}: counts as {sentiment} in this channel."


def cmd_hours(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    start, end, tz, every_day = c.args
    values: dict[str, Any] = {"post_start_hour": int(start), "post_end_hour": int(end), "weekdays_only": not every_day}
    if tz:
        values["timezone"] = tz
    _set(ctx, team, channel, **values)
    days = "every day" if every_day else "on weekdays"
    where = f" ({tz})" if tz else ""
    announce(ctx, client, channel, user, f"set PaperPing to post between {start}:00 and {end}:00{where} {days}.")
    return f"Done: I'll post between {start}:00 and {end}:00{where} {days}."


def cmd_status(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    with ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, team, channel)
        counts = storage.messages.load_channel_counts(conn, team, channel)
        posts = storage.posts.load_post_engagement(conn, team, channel, limit=5)
        ranker = load_fit(conn, team, channel, ctx.settings.popularity_weight)
        progress = storage.queue.load_index_progress(conn, team, channel, ctx.settings.embed_model)
    state = "paused" if s.paused else "active" if s.active else "not in this channel yet"
    if s.stopped_reason and not s.active:
        state = "stopped"
    nxt = s.next_post_at.strftime("%a %d %b %H:%M UTC") if s.next_post_at and not s.paused else "—"
    lines = [
        f"*PaperPing here:* {state}; posts {s.frequency.replace('-', ' ')}; style "
        f"{describe_style(s.style, ctx.settings.llm_configured)}; next post {nxt}.",
        f"Knows {counts['messages']} messages sharing {counts['papers']} papers, {counts['reactions']} reactions, "
        f"{counts['replies']} replies, {counts['members']} members.",
    ]
    lines.append(describe_ranker(ranker))
    lines.append(describe_index(progress))
    empty = describe_empty(s.empty_reason, s.empty_at, s.next_post_at)
    if empty:
        lines.append(quote(empty, 400))
    if s.stopped_reason:
        reason = quote(s.stopped_reason, 200)
        lines.append(f"Stopped posting because of: {reason}. `/paperping resume` tries again.")
    if s.step_down_reason:
        lines.append(f"Posting less often because {s.step_down_reason}; `/paperping frequency` sets it back.")
    if focus_active(s, now):
        lines.append(f"Focus: {quote(s.focus_text or '', 120)} (until {s.focus_expires_at:%d %b}).")
    for p in posts:
        received = ", ".join(x for x in (p["emoji"], f"{p['replies']} replies" if p["replies"] else "") if x)
        lines.append(
            f"• {p['posted_at']:%d %b}: {quote(p['title'] or 'a paper', 200)} — {received or 'no reactions yet'}"
        )
    return "\n".join(lines)


def cmd_why(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    with ctx.db.connection() as conn:
        draft = storage.posts.load_last_posted_draft(conn, team, channel)
        ranker = load_fit(conn, team, channel, ctx.settings.popularity_weight)
    if not draft or not draft.get("signals"):
        return "I haven't posted here yet, so there's nothing to explain."
    title = quote(str(draft["paper"]["title"] or "a paper"), 200)
    lines = [f"*Why I posted {title}* (style {draft['style']}, score {draft['score']:.3f}):", describe_ranker(ranker)]
    for raw in draft["signals"]:
        signal = signal_from_json(raw)
        sources = ", ".join(signal.permalinks)
        lines.append(f"• {signal.kind}: {describe_fact(signal)}" + (f" — from {sources}" if sources else ""))
    return "\n".join(lines)


def cmd_report(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    if c.args:
        monthly = c.args[0] == "monthly"
        _set(ctx, team, channel, report_monthly=monthly)
        what = "post the channel's monthly report here on the 1st" if monthly else "stop the monthly report"
        announce(ctx, client, channel, user, f"asked PaperPing to {what}.")
        return f"Done: I'll {what}."
    try:
        post_month_report(ctx.db, ctx.pacer, client, team, channel, now)
    except SourceError as exc:  # Slack's refusal, as the pacer reports it
        if "missing_scope" in str(exc):
            return "I can't upload files yet: an admin needs to reinstall PaperPing so it gets `files:write`."
        return f"The upload failed ({quote(str(exc), 200)}); nothing was posted."
    return "Posted this month's report here."


HANDLERS = {
    "help": cmd_help,
    "frequency": cmd_frequency,
    "pause": cmd_pause,
    "resume": cmd_pause,
    "now": cmd_now,
    "style": cmd_style,
    "mentions": cmd_mentions,
    "forget-me": cmd_forget,
    "remember-me": cmd_remember,
    "link-author": cmd_link_author,
    "focus": cmd_focus,
    "emoji": cmd_emoji,
    "status": cmd_status,
    "why": cmd_why,
    "hours": cmd_hours,
    "report": cmd_report,
    "sources": cmd_sources,
}


def register(app: App, ctx: AppContext) -> None:
    def ack_fast(ack: Ack) -> None:
        ack()

    def respond_later(client: WebClient, body: dict[str, Any], respond: Any) -> None:
        try:
            answer = run_command(ctx, client, body)
        except UsageError as exc:
            answer = f"{exc}\n\n{USAGE}"
        except PaperPingError as exc:  # the database or a service away: the member hears of it
            log.warning("/paperping %s failed: %s", quote(str(body.get("text") or ""), 60), exc)
            answer = "I couldn't do that just now (a service I depend on is not answering). Try again in a minute."
        except Exception:  # no command ends without an answer to the member who typed it
            log.exception("/paperping failed unexpectedly")
            answer = "Something went wrong on my side while doing that; it is logged for your admin. Try again later."
        respond(text=answer, response_type="ephemeral")

    app.command("/paperping")(ack=ack_fast, lazy=[respond_later])
