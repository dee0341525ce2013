"""What the group reads, as a whole: `top [week|month|year]`, the papers the channel engaged with most,
`conference VENUE YEAR`, the papers of a conference it would most want to see, and `follow-ups on|off`, replies
in a shared paper's thread when it is published, gets a new version or is built on."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.commands.base import Command, Invocation, UsageError, command, one_of
from bot.delivery.conference_post import post_plan
from bot.views.post_blocks import quote, works_again
from bot.views.top_list import render_top_list
from socialrag import storage
from socialrag.errors import OutcomeUnknown, SourceError
from socialrag.recommender import VenueNotFound
from socialrag.report import PERIODS, load_top_list


def parse_top(name: str, args: tuple[str, ...], rest: str) -> Command:
    period = args[0].lower() if args else "month"
    if len(args) > 1 or period not in PERIODS:
        raise UsageError("Say which period: `/paperping top week`, `top month` (the default) or `top year`.")
    return Command(name, (period,))


@command(
    "top",
    "`top [week|month|year]` — the papers this channel engaged with most in that period, with who engaged",
    parse=parse_top,
    slow=True,  # a year of a large channel's engagement is counted in the database: one long scan
)
def cmd_top(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        top = load_top_list(conn, inv.team, inv.channel, inv.args[0], inv.now)
    return render_top_list(top)


CONFERENCE_COOLDOWN = timedelta(minutes=10)  # between two planners a member asks for
CONFERENCE_HINT = "Name a venue and a year: `/paperping conference ACL 2026` or `/paperping conference NeurIPS 2025`."


def parse_conference(name: str, args: tuple[str, ...], rest: str) -> Command:
    if len(args) < 2 or not re.fullmatch(r"(19|20)\d\d", args[-1]):
        raise UsageError(CONFERENCE_HINT)
    venue = " ".join(args[:-1])
    if len(venue) > 120 or not re.search(r"\w", venue):
        raise UsageError(CONFERENCE_HINT)
    return Command(name, (venue, args[-1]))


@command(
    "conference",
    "`conference VENUE YEAR` — the papers of a conference this channel would most want to see, as a file and the "
    "first ten in a thread",
    parse=parse_conference,
    steers=True,
    slow=True,
)
def cmd_conference(inv: Invocation) -> str:
    venue, year = inv.args[0], int(inv.args[1])
    if inv.ctx.recommender is None:
        return "The conference planner works where PaperPing runs as a service (`paperping run`)."
    with inv.ctx.db.connection() as conn:
        until = storage.usage.take_cooldown(conn, inv.team, inv.user, "conference", inv.now, CONFERENCE_COOLDOWN)
    if until is not None:
        return f"I made you a planner a moment ago; `/paperping conference` works again from {works_again(until)}."
    plan = inv.ctx.recommender.conference(inv.team, inv.channel, venue, year, at=inv.now)
    if isinstance(plan, VenueNotFound):
        near = ", ".join(f"`{quote(n, 80)}`" for n in plan.nearest)
        hint = f" The nearest names I know: {near}." if near else ""
        return f"I found no papers of `{quote(venue, 80)}` in {year}.{hint}"
    if not plan.papers:
        return f"I found {plan.found} papers of {quote(plan.venue, 80)} {year}, but none this channel has not seen."
    with inv.ctx.db.connection() as conn:
        names = storage.workspaces.load_member_names(conn, inv.team)
        channel_name = storage.workspaces.load_channel_name(conn, inv.team, inv.channel) or inv.channel
    try:
        outcome = post_plan(inv.client, inv.ctx.pacer, inv.channel, channel_name, plan, inv.user, names)
    except SourceError as exc:
        if "missing_scope" in str(exc):
            return "I can't post in this channel: an admin needs to reinstall PaperPing so it gets `chat:write`."
        return f"Posting the planner failed ({quote(str(exc), 200)})."
    posted = f"Posted the {quote(plan.venue, 80)} {year} planner here"
    failed = outcome.files
    if outcome.first_ten is not None:
        why = quote(str(outcome.first_ten), 200)
        if failed is None:
            return f"{posted} with its files, but its reply with the first ten failed ({why}); the files hold them."
        return f"{posted}, but its files and its reply with the first ten did not follow ({why})."
    if isinstance(failed, OutcomeUnknown):
        return f"{posted}, but Slack did not confirm its files' upload: they may be in its thread all the same."
    if failed is not None and "missing_scope" in str(failed):
        return f"{posted}, without its files: an admin needs to reinstall PaperPing so it gets `files:write`."
    if failed is not None:
        return f"{posted}, without its files: their upload failed ({quote(str(failed), 200)})."
    return f"Posted the {quote(plan.venue, 80)} {year} planner here: the files and the first ten are in its thread."


@command(
    "follow-ups",
    "`follow-ups on|off` — a reply in a shared paper's thread when it is published, gets a new version, or a new "
    "paper builds on it (on by default)",
    parse=one_of(("on", "off"), "Try `/paperping follow-ups on` or `/paperping follow-ups off`."),
    steers=True,
)
def cmd_follow_ups(inv: Invocation) -> str:
    on = inv.args[0] == "on"
    inv.set(follow_ups=on)
    if on:
        inv.announce("turned on PaperPing's follow-ups in the threads of shared papers.")
        return (
            "Done: when a paper shared here in the last year is published, gets a new version, or a new paper builds "
            "on it and on another thread here, I'll say so in the thread where it was shared (at most one a thread "
            "a month, a few a week)."
        )
    inv.announce("turned off PaperPing's follow-ups in the threads of shared papers.")
    return "Done: no more follow-ups in this channel's threads."
