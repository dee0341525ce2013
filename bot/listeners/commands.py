"""The ``/paperping`` slash command. Answers are ephemeral; settings changes are announced in the channel in
one short line, so the group sees them; a wrong word gets the usage back."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt import Ack, App
from slack_sdk import WebClient

from bot.blocks import quote
from bot.context import AppContext
from bot.reports import post_month_report
from socialrag import post_store, ranker_store, store
from socialrag.calibrate import describe as describe_ranker
from socialrag.emoji import normalize_emoji, parse_sentiment
from socialrag.errors import SourceError
from socialrag.explain import describe_fact
from socialrag.models import STYLES, signal_from_json
from socialrag.schedule import FREQUENCIES
from socialrag.service import describe_style

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
• `emoji NAME positive|negative|neutral` — how this channel reads an emoji
• `hours 9-17 [TIMEZONE] [every-day]` — when I may post here (weekdays only unless `every-day`)
• `report` — post this month's chart of the channel's activity here; `report monthly|off` — on the 1st of each month"""

FOCUS_DAYS = 14
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
    """Tell the channel about a settings change (the paper's DG4: the group sees what steers the bot)."""
    ctx.pacer.post(client.chat_postMessage, channel=channel, text=f"<@{user}> {line}")


def run_command(ctx: AppContext, client: WebClient, body: dict[str, Any], now: datetime | None = None) -> str:
    """Carry out one command and return the ephemeral answer."""
    now = now or datetime.now(UTC)
    team, channel, user = str(body["team_id"]), str(body["channel_id"]), str(body["user_id"])
    try:
        command = parse_command(str(body.get("text") or ""))
    except UsageError as exc:
        return f"{exc}\n\n{USAGE}"
    ctx.ensure_channel(client, team, channel)
    handler = HANDLERS.get(command.name)
    if handler is None:
        return USAGE
    return handler(ctx, client, command, team, channel, user, now)


def _set(ctx: AppContext, team: str, channel: str, **values: Any) -> None:
    with ctx.db.connection() as conn:
        store.upsert_channel_setting(conn, team, channel, **values)


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
        ctx.activate_channel(team, channel, now)
    verb = "paused" if c.name == "pause" else "resumed"
    announce(ctx, client, channel, user, f"{verb} PaperPing's posts in this channel.")
    return f"Done: posts are {verb}."


NOW_COOLDOWN = timedelta(minutes=10)


def cmd_now(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    with ctx.db.connection() as conn:
        s = store.load_channel_settings(conn, team, channel)
    last = s["last_post_at"]
    if last is not None and now - last < NOW_COOLDOWN:
        again = last + NOW_COOLDOWN
        return f"I posted here at {last:%H:%M} UTC; `/paperping now` works again from {again:%H:%M} UTC."
    if (
        s["active"]
        and s["slot_at"] is not None
        and s["next_post_at"] is not None
        and s["next_post_at"] <= now + NOW_COOLDOWN
    ):
        return "A recommendation is already on its way here."
    ctx.activate_channel(team, channel, now)
    _set(ctx, team, channel, next_post_at=now, slot_at=now, paused=False)
    ctx.post_soon(team, channel)
    return "On it: a recommendation will appear here in a moment."


def cmd_style(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    _set(ctx, team, channel, style=c.args[0])
    announce(ctx, client, channel, user, f"set PaperPing's explanations to the `{c.args[0]}` style.")
    return f"Done: style is now {c.args[0]}."


def cmd_mentions(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    with ctx.db.connection() as conn:
        store.upsert_member_setting(conn, team, user, mentions_enabled=c.args[0] == "on")
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
        counts = store.forget_member(conn, team, user)
    return (
        f"Done: I deleted {counts['messages']} stored messages and replies and {counts['reactions']} reactions "
        "of yours, your profile, and your name and id in my past drafts and logs. I will store nothing of yours "
        "in this workspace again, from live messages, imports or history, until you type `/paperping remember-me`."
    )


def cmd_remember(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    with ctx.db.connection() as conn:
        lifted = store.remember_member(conn, team, user)
    if not lifted:
        return "You have not asked me to forget you, so there is nothing to lift."
    return "Done: what you share and react to from now on counts again. What I deleted stays deleted."


def cmd_link_author(
    ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime
) -> str:
    values = parse_author_link(c.args[0])
    with ctx.db.connection() as conn:
        store.upsert_member_setting(conn, team, user, **values)
    kind, value = next(iter(values.items()))
    label = "ORCID" if kind == "orcid" else "Semantic Scholar author id"
    return f"Done: your {label} is {value}. I'll use it to notice papers you wrote and people you work with."


def cmd_focus(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    if c.text.lower() == "off":
        _set(ctx, team, channel, focus_text=None, focus_expires_at=None)
        announce(ctx, client, channel, user, "cleared PaperPing's focus.")
        return "Done: no focus."
    _set(ctx, team, channel, focus_text=c.text[:500], focus_expires_at=now + timedelta(days=FOCUS_DAYS))
    topic = quote(c.text, 120)
    announce(ctx, client, channel, user, f"asked PaperPing to lean toward: {topic} (for {FOCUS_DAYS} days).")
    return f"Done: the next recommendations lean toward that for {FOCUS_DAYS} days."


def cmd_emoji(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    emoji, sentiment = c.args
    with ctx.db.connection() as conn:
        store.upsert_emoji_override(conn, team, channel, emoji, sentiment)  # type: ignore[arg-type]
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
        s = store.load_channel_settings(conn, team, channel)
        counts = store.load_channel_counts(conn, team, channel)
        posts = post_store.load_post_engagement(conn, team, channel, limit=5)
        ranker = ranker_store.load_fit(conn, team, channel, ctx.settings.popularity_weight)
    state = "paused" if s["paused"] else "active" if s["active"] else "not in this channel yet"
    if s["stopped_reason"] and not s["active"]:
        state = "stopped"
    nxt = s["next_post_at"].strftime("%a %d %b %H:%M UTC") if s["next_post_at"] and not s["paused"] else "—"
    lines = [
        f"*PaperPing here:* {state}; posts {s['frequency'].replace('-', ' ')}; style "
        f"{describe_style(s['style'], ctx.settings.llm_configured)}; next post {nxt}.",
        f"Knows {counts['messages']} messages sharing {counts['papers']} papers, {counts['reactions']} reactions, "
        f"{counts['replies']} replies, {counts['members']} members.",
    ]
    lines.append(describe_ranker(ranker))
    if s["stopped_reason"]:
        reason = quote(s["stopped_reason"], 200)
        lines.append(f"Stopped posting because of: {reason}. `/paperping resume` tries again.")
    if s["step_down_reason"]:
        lines.append(f"Posting less often because {s['step_down_reason']}; `/paperping frequency` sets it back.")
    if s["focus_text"] and s["focus_expires_at"] and s["focus_expires_at"] > now:
        lines.append(f"Focus: {quote(s['focus_text'], 120)} (until {s['focus_expires_at']:%d %b}).")
    for p in posts:
        received = ", ".join(x for x in (p["emoji"], f"{p['replies']} replies" if p["replies"] else "") if x)
        lines.append(
            f"• {p['posted_at']:%d %b}: {quote(p['title'] or 'a paper', 200)} — {received or 'no reactions yet'}"
        )
    return "\n".join(lines)


def cmd_why(ctx: AppContext, client: WebClient, c: Command, team: str, channel: str, user: str, now: datetime) -> str:
    with ctx.db.connection() as conn:
        draft = post_store.load_last_posted_draft(conn, team, channel)
        ranker = ranker_store.load_fit(conn, team, channel, ctx.settings.popularity_weight)
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
}


def register(app: App, ctx: AppContext) -> None:
    def ack_fast(ack: Ack) -> None:
        ack()

    def respond_later(client: WebClient, body: dict[str, Any], respond: Any) -> None:
        try:
            answer = run_command(ctx, client, body)
        except UsageError as exc:
            answer = f"{exc}\n\n{USAGE}"
        respond(text=answer, response_type="ephemeral")

    app.command("/paperping")(ack=ack_fast, lazy=[respond_later])
