"""How a ``/paperping`` command is declared: once, with its usage line, its parser and its handler
(``@command``), and carried out with one ``Invocation`` (who typed it, where, when, with what)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.app_context import AppContext
from bot.slack.directory import Standing
from socialrag import storage
from socialrag.errors import PaperPingError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple[str, ...] = ()
    text: str = ""


class UsageError(ValueError):
    """What the member typed is not a command; the message says what to type instead."""


@dataclass(frozen=True)
class Invocation:
    """One command being carried out: the process's context, Slack's client, the parsed command, the workspace
    the channel belongs to (``team``), the channel, the member and their own workspace (``home_team``: another
    organisation's in a Slack Connect channel), at ``now``."""

    ctx: AppContext
    client: WebClient
    command: Command
    team: str
    channel: str
    user: str
    now: datetime
    home_team: str = ""

    @property
    def from_elsewhere(self) -> bool:
        """The member belongs to another organisation than the channel's workspace (Slack Connect)."""
        return bool(self.home_team) and self.home_team != self.team

    @property
    def name(self) -> str:
        return self.command.name

    @property
    def args(self) -> tuple[str, ...]:
        return self.command.args

    @property
    def text(self) -> str:
        return self.command.text

    def forgotten(self) -> bool:
        """The member asked to be forgotten in the channel's workspace or their own: nothing of theirs is kept."""
        with self.ctx.db.connection() as conn:
            return storage.privacy.is_forgotten(conn, (self.team, self.home_team), self.user)

    def post_now(self) -> None:
        """Open this channel's slot now (activating the channel, lifting a pause) and wake the scheduler."""
        self.ctx.channels.activate(self.team, self.channel, self.now)
        self.set(next_post_at=self.now, slot_at=self.now, paused=False)
        self.ctx.wake.post_soon()

    def set(self, **values: Any) -> None:
        """Change some of this channel's settings."""
        with self.ctx.db.connection() as conn:
            storage.settings.upsert_channel_setting(conn, self.team, self.channel, **values)

    def announce(self, line: str) -> None:
        """Tell the channel about a settings change (the paper's DG4: the group sees what steers the bot). A
        change within ``ANNOUNCE_MERGE`` of the member's last announcement there is added to it (the message is
        edited) rather than posted anew, up to ``ANNOUNCED_LINES`` changes. A failed announcement is logged; the
        member still gets the answer."""
        try:
            with self.ctx.db.connection() as conn:
                added = storage.usage.add_announcement_line(
                    conn, self.team, self.channel, self.user, line, self.now - ANNOUNCE_MERGE, ANNOUNCED_LINES
                )
            if added is not None and self._show(*added):
                return
            posted = self.ctx.pacer.post(
                self.client.chat_postMessage, channel=self.channel, text=announcement(self.user, [line])
            )
            with self.ctx.db.connection() as conn:
                storage.usage.record_announcement(
                    conn, self.team, self.channel, self.user, str(posted["ts"]), [line], self.now
                )
        except (SlackApiError, PaperPingError) as exc:
            log.warning("could not announce a settings change in %s: %s", self.channel, exc)

    def _show(self, ts: str, lines: list[str]) -> bool:
        """Edit the member's announcement ``ts`` to say ``lines``; False when Slack will not (deleted, too old).
        A change added meanwhile (another command of theirs at once) is shown too: after each edit the stored
        lines are read again and, if they grew, the message is edited again, so that whichever edit Slack applies
        last, the message ends listing every change."""
        for edits in range(ANNOUNCED_LINES):
            try:
                self.ctx.pacer.call(
                    self.client.chat_update, channel=self.channel, ts=ts, text=announcement(self.user, lines)
                )
            except (SlackApiError, PaperPingError) as exc:
                log.info("the announcement in %s could not be edited (%s)", self.channel, exc)
                return edits > 0  # the first edit refused: a new message says the change
            with self.ctx.db.connection() as conn:
                stored = storage.usage.load_announcement_lines(conn, self.team, self.channel, self.user, ts)
            if stored is None or stored == lines:
                break
            lines = stored
        return True


ANNOUNCE_MERGE = timedelta(minutes=10)  # a member's changes within this of their last announcement join it
ANNOUNCED_LINES = 10  # changes one announcement lists at most; the next starts a new message


def announcement(user: str, lines: list[str]) -> str:
    """The channel's message about a member's settings changes: one sentence, or the changes as a list."""
    if len(lines) == 1:
        return f"<@{user}> {lines[0]}"
    return f"<@{user}> changed PaperPing's settings here:\n" + "\n".join(f"• {line}" for line in lines)


def keeps_nothing(done: str, kept: str) -> str:
    """What a member on the forget list is told when a command of theirs would keep something of theirs: ``done``
    ("Nothing was changed"), and that no ``kept`` ("setting") of theirs is kept until `remember-me`."""
    return (
        f"{done}: you asked me to forget you, so I keep no {kept} of yours here. `/paperping remember-me` lifts that."
    )


Parser = Callable[[str, tuple[str, ...], str], Command]  # (name, words after it, the text after it) -> Command
Handler = Callable[[Invocation], str]


def always(command: Command) -> bool:
    return True


def never(command: Command) -> bool:
    return False


@dataclass(frozen=True)
class CommandSpec:
    name: str
    usage: str  # the line of `/paperping help`
    parse: Parser
    handle: Handler
    about_member: bool = False  # about the member, not the channel: works wherever it is typed
    steers: Callable[[Command], bool] = never  # changes what the whole channel gets
    # forms that only stop something (`zotero off`): they work in a channel PaperPing has left
    stops: Callable[[Command], bool] = never
    slow: bool = False  # may take seconds (ranking, uploads, waiting for a post): run off the listener pool


COMMANDS: dict[str, CommandSpec] = {}  # every name a member may type (aliases included), in declaration order


def no_arguments(name: str, args: tuple[str, ...], rest: str) -> Command:
    return Command(name)


def one_of(values: tuple[str, ...] | frozenset[str] | dict[str, Any], hint: str) -> Parser:
    """A parser for a command that takes exactly one of ``values`` (any case)."""

    def parse(name: str, args: tuple[str, ...], rest: str) -> Command:
        if len(args) != 1 or args[0].lower() not in values:
            raise UsageError(hint)
        return Command(name, (args[0].lower(),))

    return parse


def free_text(hint: str, most: int = 1000) -> Parser:
    """A parser for a command that takes words of the member's own (at most ``most`` characters), ``hint`` when
    none were given."""

    def parse(name: str, args: tuple[str, ...], rest: str) -> Command:
        if not rest:
            raise UsageError(hint)
        return Command(name, text=rest[:most])

    return parse


def command(
    name: str,
    usage: str,
    *,
    parse: Parser = no_arguments,
    aliases: tuple[str, ...] = (),
    about_member: bool = False,
    steers: bool | Callable[[Command], bool] = False,
    stops: Callable[[Command], bool] = never,
    slow: bool = False,
) -> Callable[[Handler], Handler]:
    """Declare a command: its name (and aliases), its usage line, its parser, whether it changes what the whole
    channel gets (``steers``: always, or for some of its forms) and (decorated) its handler."""
    changes = steers if callable(steers) else (always if steers else never)

    def declare(handle: Handler) -> Handler:
        spec = CommandSpec(name, usage, parse, handle, about_member, changes, stops, slow)
        for word in (name, *aliases):
            if word in COMMANDS:
                raise ValueError(f"/paperping {word} is declared twice")
            COMMANDS[word] = spec
        return handle

    return declare


def usage_text() -> str:
    lines = dict.fromkeys(spec.usage for spec in COMMANDS.values())
    return "*PaperPing* — `/paperping` followed by:\n" + "\n".join(f"• {line}" for line in lines)


def is_slow(text: str) -> bool:
    """Whether the ``/paperping`` text names a command that may take seconds (``CommandSpec.slow``)."""
    words = text.strip().split()
    spec = COMMANDS.get(words[0].lower()) if words else None
    return bool(spec and spec.slow)


def parse_command(text: str) -> Command:
    """``/paperping`` text as a ``Command``; raises ``UsageError`` with a sentence on what to type. A NUL character
    is dropped: no text column holds one, so a focus or a question carrying it would fail to be stored."""
    text = text.replace("\x00", "")
    words = text.strip().split()
    if not words:
        return Command("help")
    spec = COMMANDS.get(words[0].lower())
    if spec is None:
        raise UsageError(f"I don't know `{words[0]}`.")
    return spec.parse(words[0].lower(), tuple(words[1:]), text.strip()[len(words[0]) :].strip())


def run_command(ctx: AppContext, client: WebClient, body: dict[str, Any], now: datetime | None = None) -> str:
    """Carry out one command and return the ephemeral answer."""
    now = now or datetime.now(UTC)
    team, channel, user = str(body["team_id"]), str(body["channel_id"]), str(body["user_id"])
    try:
        parsed = parse_command(str(body.get("text") or ""))
    except UsageError as exc:
        return f"{exc}\n\n{usage_text()}"
    spec = COMMANDS[parsed.name]
    if not spec.about_member:
        if channel.startswith("D"):
            return "Settings are per channel: type `/paperping` in a channel PaperPing is in."
        if not spec.stops(parsed) and not ctx.slack.is_member(client, channel):
            return (
                "I'm not in this channel yet, so nothing was changed. Invite me first (`/invite @PaperPing`), "
                "then try again."
            )
    # one rule for shared channels: a command acts on the workspace the channel belongs to, whichever
    # organisation the member who typed it is from
    home_team, team = team, ctx.slack.channel_team(team, channel)
    ctx.slack.ensure_channel(client, team, channel)
    invocation = Invocation(ctx, client, parsed, team, channel, user, now, home_team)
    if spec.steers(parsed):
        refusal = may_steer(invocation)
        if refusal:
            return refusal
    return spec.handle(invocation)


ELSEWHERE = (
    "This channel's PaperPing settings belong to the workspace it lives in, so members of other organisations "
    "can't change them; `/paperping status` shows them."
)


def member_standing(inv: Invocation) -> Standing | str:
    """Who is asking, as Slack says; or why nothing is changed: the command comes from another organisation, the
    member is a stranger to the workspace, or Slack did not say in time."""
    if inv.from_elsewhere:
        return ELSEWHERE
    standing = inv.ctx.slack.standing(inv.client, inv.team, inv.user)
    if standing.unknown:
        return "Slack didn't tell me in time who is asking, so nothing was changed; try again in a minute."
    if standing.stranger:
        return ELSEWHERE
    return standing


def may_steer(inv: Invocation, *, locking: bool = False) -> str | None:
    """Why this member may not change what the whole channel gets, or None when they may. Guests and members of
    other organisations never do; in a locked channel (and to lock or unlock one) only the member who invited
    PaperPing and the workspace's admins do. A member's own settings are always theirs."""
    standing = member_standing(inv)
    if isinstance(standing, str):
        return standing
    if standing.guest:
        return "Guests can't change what PaperPing does in a channel; ask a member of the workspace."
    with inv.ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, inv.team, inv.channel)
    if not (s.locked or locking) or standing.admin or (s.invited_by and s.invited_by == inv.user):
        return None
    inviter = s.invited_by if s.invited_by and re.fullmatch(r"[UW][A-Z0-9]{1,20}", s.invited_by) else None
    who = f"<@{inviter}>" if inviter else "the member who invited me"
    if locking:
        return f"Only {who} and the workspace's admins can lock or unlock PaperPing's settings here."
    return f"PaperPing's settings here are locked: only {who} or a workspace admin can change them."
