"""Commands that set how PaperPing posts in a channel: `frequency` (or a weekly digest), `pause` and `resume`,
`style`, `length`, `language`, `context`, `hours`, `report` and `fulltext`. Each change is announced in the channel
in one short line, so the group sees what steers it."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from bot.commands.base import Command, Invocation, UsageError, command, may_steer, member_standing, one_of
from bot.delivery.report_upload import post_month_report
from bot.views.post_blocks import quote, quote_in_code, works_again
from socialrag import storage
from socialrag.errors import OutcomeUnknown, SourceError
from socialrag.models import STYLES
from socialrag.recommender import DIGEST, DIGEST_DEFAULT, DIGEST_SIZES, FREQUENCIES, LANGUAGES, next_slot
from socialrag.report import month_start

_FREQUENCY_HINT = (
    "Try `/paperping frequency daily`, `every-other-day`, `weekly`, or `weekly-digest 5` (3 to 7 papers in one "
    "message a week)."
)


def parse_frequency(name: str, args: tuple[str, ...], rest: str) -> Command:
    """``frequency daily|every-other-day|weekly`` or ``frequency weekly-digest [N]`` (N from 3 to 7)."""
    chosen = args[0].lower() if args else ""
    if chosen in FREQUENCIES and len(args) == 1:
        return Command(name, (chosen,))
    if chosen == DIGEST and len(args) <= 2:
        size = args[1] if len(args) == 2 else str(DIGEST_DEFAULT)
        if size.isdecimal() and len(size) <= 2 and int(size) in DIGEST_SIZES:  # "³" is a digit int() refuses
            return Command(name, (chosen, size))
    raise UsageError(_FREQUENCY_HINT)


@command(
    "frequency",
    "`frequency daily|every-other-day|weekly` — how often I post here; `frequency weekly-digest [N]` — N papers "
    "(3 to 7) in one message a week instead",
    parse=parse_frequency,
    steers=True,
)
def cmd_frequency(inv: Invocation) -> str:
    if inv.args[0] == DIGEST:
        size = int(inv.args[1])
        inv.set(frequency=DIGEST, digest_size=size, step_down_reason=None)
        follow_schedule(inv)
        inv.announce(f"set PaperPing to post a weekly digest of {size} papers.")
        return f"Done: once a week I'll post a digest of {size} papers here; `/paperping now` posts one now."
    inv.set(frequency=inv.args[0], digest_size=None, step_down_reason=None)
    follow_schedule(inv)
    inv.announce(f"set PaperPing to post {inv.args[0].replace('-', ' ')}.")
    return f"Done: I'll post {inv.args[0].replace('-', ' ')} here."


def follow_schedule(inv: Invocation) -> None:
    """After a change of frequency, hours or timezone, the next regular post moves to the new schedule: the first
    open time of its posting hours, counted from the last post (the next one was set by the old schedule, and could
    fall at 4 in the morning of a new timezone, or a week away after `daily`). A post under way or asked for now
    stays where it is, and none comes sooner than the schedule allows: changing settings posts nothing at once
    that the schedule would not. Before the first post is scheduled (PaperPing has not joined), nothing moves."""
    with inv.ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, inv.team, inv.channel)
        if not s.active or s.slot_at is not None or s.next_post_at is None:
            return  # no post scheduled yet: the first comes when PaperPing has joined (and read the history)
        hours = (s.timezone, s.post_start_hour, s.post_end_hour, s.weekdays_only)
        to = next_slot(inv.now, s.last_post_at, s.frequency, *hours)
        storage.settings.move_next_post(conn, inv.team, inv.channel, s.next_post_at, to)


@command(
    "context",
    "`context on|off` — a short reply in the thread of each paper a member shares: its gist and how it links to "
    "this channel's earlier threads",
    parse=one_of(("on", "off"), "Try `/paperping context on` or `/paperping context off`."),
    steers=True,
)
def cmd_context(inv: Invocation) -> str:
    on = inv.args[0] == "on"
    inv.set(share_context=on)
    if on:
        inv.announce("asked PaperPing to reply with context in the thread of papers shared here.")
        return (
            "Done: when someone shares a paper here, I'll reply in its thread (once, within a minute) with its "
            "gist and the earlier threads it relates to, and stay quiet when I have nothing grounded to add."
        )
    inv.announce("turned off PaperPing's replies on shared papers.")
    return "Done: I won't reply to shared papers here."


@command(
    "length",
    "`length short|normal` — how long my explanations are here",
    parse=one_of(("short", "normal"), "Try `/paperping length short` or `/paperping length normal`."),
    steers=True,
)
def cmd_length(inv: Invocation) -> str:
    inv.set(explanation_length=inv.args[0])
    inv.announce(f"set PaperPing's explanations to {inv.args[0]} length.")
    return f"Done: explanations here are {inv.args[0]} from the next post on."


def parse_language(name: str, args: tuple[str, ...], rest: str) -> Command:
    code = args[0].lower() if len(args) == 1 else ""
    if code not in LANGUAGES:
        known = ", ".join(sorted(LANGUAGES))
        raise UsageError(f"Try `/paperping language de` (a two-letter code: {known}).")
    return Command(name, (code,))


@command(
    "language",
    "`language CODE` — the language of `llm`-style explanations here (`en`, `de`, `fr`, ...)",
    parse=parse_language,
    steers=True,
)
def cmd_language(inv: Invocation) -> str:
    code = inv.args[0]
    inv.set(language=None if code == "en" else code)
    name = LANGUAGES[code]
    inv.announce(f"asked PaperPing to write its explanations in {name}.")
    note = "" if code == "en" else " The template styles (without an LLM) stay in English."
    return f"Done: `llm`-style explanations here are written in {name}.{note}"


@command("pause", "`pause` / `resume` — stop and restart posting here", aliases=("resume",), steers=True)
def cmd_pause(inv: Invocation) -> str:
    inv.set(paused=inv.name == "pause")
    if inv.name == "resume":
        inv.ctx.channels.activate(inv.team, inv.channel, inv.now)
    verb = "paused" if inv.name == "pause" else "resumed"
    inv.announce(f"{verb} PaperPing's posts in this channel.")
    return f"Done: posts are {verb}."


@command(
    "style",
    "`style tldr|template|template+tldr|llm` — how I explain a paper",
    parse=one_of(STYLES, "Try `/paperping style tldr`, `template`, `template+tldr` or `llm`."),
    steers=True,
)
def cmd_style(inv: Invocation) -> str:
    inv.set(style=inv.args[0])
    inv.announce(f"set PaperPing's explanations to the `{inv.args[0]}` style.")
    return f"Done: style is now {inv.args[0]}."


_HOURS_HINT = "Try `/paperping hours 9-17`, `/paperping hours 10-16 America/New_York` or add `every-day`."


def parse_hours(name: str, args: tuple[str, ...], rest: str) -> Command:
    """``hours 9-17 [Area/City] [every-day]``: posting hours, the channel's timezone, weekends allowed."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    m = re.fullmatch(r"(\d{1,2})-(\d{1,2})", args[0], re.ASCII) if args else None  # "٩-١٧" is no hour
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)) <= 24:
        raise UsageError(_HOURS_HINT)
    zone = [a for a in args[1:] if a.lower() != "every-day"]
    if len(zone) > 1:
        raise UsageError(_HOURS_HINT)
    if zone:
        try:
            ZoneInfo(zone[0])
        except (ZoneInfoNotFoundError, ValueError, OSError):  # `America` is a folder of zones, not one
            shown = quote_in_code(zone[0], 60).strip()  # repeated as text: no markup, no code span ended
            named = f"`{shown}` is" if shown else "That is"
            raise UsageError(f"{named} not a timezone I know. {_HOURS_HINT}") from None
    every_day = "every-day" in (a.lower() for a in args[1:])
    return Command("hours", (m.group(1), m.group(2), zone[0] if zone else "", "every-day" if every_day else ""))


@command(
    "hours",
    "`hours 9-17 [TIMEZONE] [every-day]` — when I may post here (weekdays only unless `every-day`)",
    parse=parse_hours,
    steers=True,
)
def cmd_hours(inv: Invocation) -> str:
    start, end, tz, every_day = inv.args
    values: dict[str, Any] = {"post_start_hour": int(start), "post_end_hour": int(end), "weekdays_only": not every_day}
    if tz:
        values["timezone"] = tz
    inv.set(**values)
    follow_schedule(inv)
    days = "every day" if every_day else "on weekdays"
    where = f" ({tz})" if tz else ""
    inv.announce(f"set PaperPing to post between {start}:00 and {end}:00{where} {days}.")
    return f"Done: I'll post between {start}:00 and {end}:00{where} {days}."


REPORT_COOLDOWN = timedelta(minutes=10)  # between two on-demand reports in a channel


def parse_report(name: str, args: tuple[str, ...], rest: str) -> Command:
    if len(args) > 1 or (args and args[0].lower() not in ("monthly", "off")):
        raise UsageError("Try `/paperping report`, `/paperping report monthly` or `/paperping report off`.")
    return Command(name, (args[0].lower(),) if args else ())


@command(
    "report",
    "`report` — post this month's chart of the channel's activity here; `report monthly|off` — on the 1st of "
    "each month",
    parse=parse_report,
    steers=True,
    slow=True,
)
def cmd_report(inv: Invocation) -> str:
    if inv.args:
        monthly = inv.args[0] == "monthly"
        with inv.ctx.db.connection() as conn:
            was_on = storage.settings.load_channel_settings(conn, inv.team, inv.channel).report_monthly
        # turned on, the first report is of this month, on the next 1st (counted as sent for this one); typed
        # again while on, it is a retry of a stopped one, which may go at once
        first = {} if was_on or not monthly else {"report_last_at": inv.now}
        inv.set(report_monthly=monthly, report_stopped_reason=None, report_failures=0, report_retry_at=None, **first)
        what = "post the channel's monthly report here on the 1st" if monthly else "stop the monthly report"
        inv.announce(f"asked PaperPing to {what}.")
        if first:
            month = month_start(inv.now)
            return f"Done: I'll {what}, the first on 1 {month_start(month + timedelta(days=32)):%B} ({month:%B}'s)."
        return f"Done: I'll {what}."
    with inv.ctx.db.connection() as conn:  # one statement: of two reports asked at once, one goes ahead
        asked = storage.settings.take_ask(conn, inv.team, inv.channel, inv.now, REPORT_COOLDOWN, "report_asked_at")
    if asked is not None:
        again = works_again(asked + REPORT_COOLDOWN)
        return f"I posted a report here at {asked:%H:%M} UTC; `/paperping report` works again from {again}."
    try:
        post_month_report(inv.ctx.db, inv.ctx.pacer, inv.client, inv.team, inv.channel, inv.now)
    except OutcomeUnknown:  # the file may be in the channel: the ten minutes stand
        return "Slack did not confirm the upload: look in the channel before asking for the report again."
    except SourceError as exc:  # Slack's refusal, as the pacer reports it
        with inv.ctx.db.connection() as conn:  # nothing was posted: the member may try again at once
            storage.settings.give_back_ask(conn, inv.team, inv.channel, inv.now, "report_asked_at")
        if "missing_scope" in str(exc):
            return "I can't upload files yet: an admin needs to reinstall PaperPing so it gets `files:write`."
        return f"The upload failed ({quote(str(exc), 200)}); nothing was posted."
    return "Posted this month's report here."


@command(
    "lock",
    "`lock` / `unlock` — only the member who invited me and admins may change my settings here",
    aliases=("unlock",),
)
def cmd_lock(inv: Invocation) -> str:
    refusal = may_steer(inv, locking=True)
    if refusal:
        return refusal
    locked = inv.name == "lock"
    inv.set(locked=locked)
    if locked:
        inv.announce("locked PaperPing's settings in this channel to the member who invited it and the admins.")
        return "Done: only the member who invited me and the workspace's admins can change my settings here."
    inv.announce("unlocked PaperPing's settings in this channel.")
    return "Done: members of this workspace can change my settings here again (guests can't)."


_FULLTEXT_HINT = (
    "Try `/paperping fulltext on` or `/paperping fulltext off` (this channel), or `/paperping fulltext off workspace` "
    "(the whole workspace; admins)."
)


def parse_fulltext(name: str, args: tuple[str, ...], rest: str) -> Command:
    """``fulltext on|off`` (this channel) or ``fulltext on|off workspace`` (the whole workspace)."""
    words = tuple(a.lower() for a in args)
    if words[:1] in (("on",), ("off",)) and words[1:] in ((), ("workspace",)):
        return Command(name, words)
    raise UsageError(_FULLTEXT_HINT)


@command(
    "fulltext",
    "`fulltext on|off` — whether I read the open-access full text of the papers here, to quote it; "
    "`fulltext on|off workspace` — the same for the whole workspace (admins)",
    parse=parse_fulltext,
    steers=lambda c: len(c.args) == 1,
    stops=lambda c: c.args == ("off",),
)
def cmd_fulltext(inv: Invocation) -> str:
    on = inv.args[0] == "on"
    if len(inv.args) == 2:
        return _workspace_fulltext(inv, on)
    inv.set(fulltext=on)
    if not on:
        if inv.ctx.slack.is_member(inv.client, inv.channel):  # it works in a channel PaperPing left: said nothing there
            inv.announce("turned off PaperPing's reading of the full text of papers shared here.")
        return "Done: I won't read the full text of papers for this channel; `/paperping fulltext on` turns it back on."
    with inv.ctx.db.connection() as conn:
        workspace = storage.fulltext.load_workspace_fulltext(conn, inv.team)
    inv.announce("asked PaperPing to read the open-access full text of papers shared here.")
    held = (
        "" if workspace else " Your workspace's admins turned it off for the whole workspace, so nothing is read yet."
    )
    return (
        "Done: I'll read the open-access full text (arXiv, the ACL Anthology, PubMed Central, bioRxiv, medRxiv) of "
        f"papers posted, shared or asked about here, and quote it in answers.{held}"
    )


def _workspace_fulltext(inv: Invocation, on: bool) -> str:
    """Full text on or off for every channel of the workspace: its admins only."""
    standing = member_standing(inv)
    if isinstance(standing, str):
        return standing
    if not standing.admin or standing.guest:
        return (
            "Only the workspace's admins can turn full text on or off for the whole workspace; "
            "`/paperping fulltext off` turns it off for this channel."
        )
    with inv.ctx.db.connection() as conn:
        storage.fulltext.set_workspace_fulltext(conn, inv.team, on)
    verb = "on" if on else "off"
    inv.announce(f"turned {verb} PaperPing's reading of papers' full text for the whole workspace.")
    if on:
        return "Done: I read papers' open-access full text again in every channel of this workspace that has it on."
    return "Done: I won't read papers' full text for any channel of this workspace."
