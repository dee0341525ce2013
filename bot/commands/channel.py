"""Commands that set how PaperPing posts in a channel: `frequency`, `pause` and `resume`, `style`, `hours` and
`report`. Each change is announced in the channel in one short line, so the group sees what steers it."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from bot.blocks import quote
from bot.commands.base import Command, Invocation, UsageError, command, may_steer, one_of
from bot.reports import post_month_report
from socialrag import storage
from socialrag.errors import SourceError
from socialrag.models import STYLES
from socialrag.recommender import FREQUENCIES


@command(
    "frequency",
    "`frequency daily|every-other-day|weekly` — how often I post here",
    parse=one_of(FREQUENCIES, "Try `/paperping frequency daily`, `every-other-day` or `weekly`."),
    steers=True,
)
def cmd_frequency(inv: Invocation) -> str:
    inv.set(frequency=inv.args[0], step_down_reason=None)
    inv.announce(f"set PaperPing to post {inv.args[0].replace('-', ' ')}.")
    return f"Done: I'll post {inv.args[0].replace('-', ' ')} here."


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

    m = re.fullmatch(r"(\d{1,2})-(\d{1,2})", args[0]) if args else None
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)) <= 24:
        raise UsageError(_HOURS_HINT)
    zone = [a for a in args[1:] if a.lower() != "every-day"]
    if len(zone) > 1:
        raise UsageError(_HOURS_HINT)
    if zone:
        try:
            ZoneInfo(zone[0])
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"`{zone[0]}` is not a timezone I know. {_HOURS_HINT}") from None
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
)
def cmd_report(inv: Invocation) -> str:
    if inv.args:
        monthly = inv.args[0] == "monthly"
        inv.set(report_monthly=monthly, report_stopped_reason=None, report_failures=0, report_retry_at=None)
        what = "post the channel's monthly report here on the 1st" if monthly else "stop the monthly report"
        inv.announce(f"asked PaperPing to {what}.")
        return f"Done: I'll {what}."
    with inv.ctx.db.connection() as conn:
        asked = storage.settings.load_channel_settings(conn, inv.team, inv.channel).report_asked_at
    if asked is not None and inv.now - asked < REPORT_COOLDOWN:
        again = asked + REPORT_COOLDOWN
        return f"I posted a report here at {asked:%H:%M} UTC; `/paperping report` works again from {again:%H:%M} UTC."
    inv.set(report_asked_at=inv.now)
    try:
        post_month_report(inv.ctx.db, inv.ctx.pacer, inv.client, inv.team, inv.channel, inv.now)
    except SourceError as exc:  # Slack's refusal, as the pacer reports it
        inv.set(report_asked_at=asked)  # nothing was posted: the member may try again at once
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
