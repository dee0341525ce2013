"""Commands about the member who types them, not the channel, so they work wherever they are typed:
`mentions`, `forget-me`, `remember-me`, `link-author` and `for-me`."""

from __future__ import annotations

import re
from datetime import timedelta

from slack_sdk.errors import SlackApiError

from bot.commands.base import Command, Invocation, UsageError, command, keeps_nothing, one_of
from bot.delivery.picks_dm import EVERY, send_picks
from bot.slack.members import refresh_team_lists
from bot.views.post_blocks import quote, works_again
from socialrag import storage
from socialrag.errors import OutcomeUnknown, PaperPingError
from socialrag.text import ascii_digits

# digits 0 to 9 only (``\d`` takes every script's digits), the whole of a word: an ORCID or profile id as typed
_ORCID = re.compile(r"(?<![0-9A-Za-z-])([0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X])(?![0-9A-Za-z-])")
_S2_PROFILE = re.compile(r"semanticscholar\.org/author/(?:[^/]+/)?([0-9]{1,20})(?![0-9])")
MOST_ID_DIGITS = 20  # a Semantic Scholar author id is a number: longer is no id (and would be stored and echoed)
NO_SETTING_KEPT = keeps_nothing("Nothing was changed", "setting")


@command(
    "mentions",
    "`mentions off|on` — whether I @-mention you",
    parse=one_of(("on", "off"), "Try `/paperping mentions off` or `/paperping mentions on`."),
    about_member=True,
)
def cmd_mentions(inv: Invocation) -> str:
    if inv.forgotten():  # in the channel's workspace or their own (a Slack Connect partner's)
        return NO_SETTING_KEPT
    with inv.ctx.db.connection() as conn:
        if not storage.settings.upsert_member_setting(conn, inv.team, inv.user, mentions_enabled=inv.args[0] == "on"):
            return NO_SETTING_KEPT  # and nobody on the forget list is mentioned or named
    if inv.args[0] == "off":
        return "Done: I won't @-mention you; I may still name you when a paper relates to you."
    return "Done: I may @-mention you when a paper fits your interests."


def parse_forget(name: str, args: tuple[str, ...], rest: str) -> Command:
    return Command(name, tuple(a.lower() for a in args[:1]))


@command(
    "forget-me",
    "`forget-me` — delete what I stored about you in this workspace and store nothing more (asks to confirm)",
    parse=parse_forget,
    about_member=True,
)
def cmd_forget(inv: Invocation) -> str:
    if inv.args[:1] != ("confirm",):
        return (
            "This deletes every message, reply and reaction of yours that PaperPing stored in this workspace, "
            "and your profile and settings. To go ahead, type `/paperping forget-me confirm`."
        )
    with inv.ctx.db.connection() as conn:
        # the channel's workspace, and the member's own when it is another (a Slack Connect partner's)
        counts = storage.privacy.forget_member_in(conn, (inv.team, inv.home_team), inv.user)
    return (
        f"Done: I deleted {counts['messages']} stored messages and replies and {counts['reactions']} reactions "
        f"of yours, the {counts.get('replies', 0)} replies in the threads of your shares, your profile, and your "
        "name and id in my past drafts and logs. I will store nothing of yours "
        "in this workspace again, from live messages, imports or history, until you type `/paperping remember-me`."
    )


REMEMBER_COOLDOWN = timedelta(hours=1)  # between two readings of a workspace's member lists that remember-me causes


@command(
    "remember-me",
    "`remember-me` — lift `forget-me`: what you share from now on counts again",
    about_member=True,
    slow=True,
)
def cmd_remember(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        # the channel's workspace, and the member's own when it is another: the places forget-me lists them in
        lifted = [
            t
            for t in dict.fromkeys((inv.team, inv.home_team))
            if t and storage.privacy.remember_member(conn, t, inv.user)
        ]
        if not lifted:
            return "You have not asked me to forget you, so there is nothing to lift."
        # the workspace's, not the member's: forget-me deletes a member's cooldowns with the rest of their rows
        until = storage.usage.take_cooldown(conn, inv.team, "", "remember-me lists", inv.now, REMEMBER_COOLDOWN)
    done = "Done: what you share and react to from now on counts again. What I deleted stays deleted."
    if until is not None:  # a member who forgets and comes back again and again costs one reading an hour
        return f"{done} The channels you are in count again as I read their member lists (each at least once a day)."
    # forget-me took them off every channel's member list: read the workspace's lists again (50 at most), so
    # that their picks and App Home see the channels they are in
    refresh_team_lists(inv.ctx.db, inv.ctx.pacer.call, inv.client, inv.team, inv.now)
    return done


def parse_link_author(name: str, args: tuple[str, ...], rest: str) -> Command:
    if len(args) != 1:
        raise UsageError(
            "Try `/paperping link-author 1741101` (a Semantic Scholar author id), an ORCID, or your profile URL."
        )
    return Command(name, args)


def parse_author_link(value: str) -> dict[str, str]:
    """A Semantic Scholar author id or profile URL, or an ORCID (bare or URL), as member settings."""
    value = value.strip("<>").split("|")[0]
    orcid = _ORCID.search(value)
    if orcid:
        return {"orcid": orcid.group(1)}
    m = _S2_PROFILE.search(value)
    if m:
        return {"s2_author_id": m.group(1)}
    if ascii_digits(value) and len(value) <= MOST_ID_DIGITS:
        return {"s2_author_id": value}
    raise UsageError(
        "That is not an author id I can use: give a Semantic Scholar author id (digits), its "
        "profile URL, or an ORCID such as 0000-0002-1825-0097."
    )


@command(
    "link-author",
    "`link-author ID` — your Semantic Scholar author id, ORCID or profile URL",
    parse=parse_link_author,
    about_member=True,
)
def cmd_link_author(inv: Invocation) -> str:
    """Link the member's author profile. A new Semantic Scholar profile stops `my-papers` in every channel: the
    channels heard of the old profile's papers only once its name was checked against the member's, and the new
    one has not been; `my-papers on` checks it again."""
    values = parse_author_link(inv.args[0])
    if inv.forgotten():  # in the channel's workspace or their own (a Slack Connect partner's)
        return NO_SETTING_KEPT
    with inv.ctx.db.connection() as conn:
        before = storage.settings.load_member_setting(conn, inv.team, inv.user)
        changed = "s2_author_id" in values and values["s2_author_id"] != before.s2_author_id
        stopped = before.my_papers_channels if changed else []
        cleared: dict[str, list[str]] = {"my_papers_channels": []} if stopped else {}
        if not storage.settings.upsert_member_setting(conn, inv.team, inv.user, **values, **cleared):
            return NO_SETTING_KEPT
    kind, value = next(iter(values.items()))
    label = "ORCID" if kind == "orcid" else "Semantic Scholar author id"
    done = f"Done: your {label} is {value}. I'll use it to notice papers you wrote and people you work with."
    if stopped:
        where = ", ".join(f"<#{c}>" for c in stopped)
        done += f" Your new papers are no longer announced in {where}: `/paperping my-papers on` there checks it."
    return done


PICKS_NOW_COOLDOWN = timedelta(minutes=10)  # between two of a member's `for-me now`


@command(
    "for-me",
    "`for-me on|off|now` — a weekly direct message with papers picked for you from the channels you're in "
    "(`now`: send it at once)",
    parse=one_of(
        ("on", "off", "now"), "Try `/paperping for-me on`, `/paperping for-me now` or `/paperping for-me off`."
    ),
    about_member=True,
    slow=True,
)
def cmd_for_me(inv: Invocation) -> str:
    if inv.forgotten():  # picks are made from what the member shared and liked, none of which is kept
        return NO_SETTING_KEPT
    if inv.args[0] == "off":
        with inv.ctx.db.connection() as conn:
            if not storage.settings.upsert_member_setting(conn, inv.team, inv.user, picks_enabled=False):
                return NO_SETTING_KEPT
        return "Done: no more personal picks."
    if inv.args[0] == "on":
        with inv.ctx.db.connection() as conn:
            if not storage.settings.upsert_member_setting(
                conn, inv.team, inv.user, picks_enabled=True, picks_next_at=inv.now + EVERY, picks_stopped_reason=None
            ):
                return NO_SETTING_KEPT
        return (
            "Done: once a week I'll send you a direct message with papers matched to what you shared, liked and "
            "saved in the channels you're in with me. `/paperping for-me now` sends the first one now."
        )
    if inv.ctx.recommender is None:
        return "Personal picks are sent where PaperPing runs as a service (`paperping run`)."
    with inv.ctx.db.connection() as conn:  # each one ranks every channel of the member
        until = storage.usage.take_cooldown(conn, inv.team, inv.user, "for-me now", inv.now, PICKS_NOW_COOLDOWN)
    if until is not None:
        return f"I sent you picks a moment ago; `/paperping for-me now` works again from {works_again(until)}."
    try:
        return send_picks(inv.ctx.db, inv.ctx.recommender, inv.ctx.pacer, inv.client, inv.team, inv.user, inv.now)
    except OutcomeUnknown:
        return (
            "Slack did not answer in time, so the message may have gone. If it has not come, `/paperping for-me "
            f"now` works again from {works_again(inv.now + PICKS_NOW_COOLDOWN)}; I look for it before sending again."
        )
    except (SlackApiError, PaperPingError) as exc:
        if "missing_scope" in str(exc):
            return "I can't send direct messages yet: an admin needs to reinstall PaperPing so it gets `im:write`."
        return f"Slack refused the direct message ({quote(str(exc), 200)}); nothing was sent."
