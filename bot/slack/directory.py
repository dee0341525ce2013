"""What PaperPing knows of each workspace from Slack itself: its own user id, the workspace's domain (for
permalinks), the channels it has seen and whether it is in one. Looked up once, then cached per process."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.pacer import retry_after_seconds
from bot.slack.payloads import channel_from_slack
from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel

log = logging.getLogger(__name__)


STANDING_SECONDS = 600.0  # how long a member's standing (guest, admin) is trusted before it is asked again


STANDING_BUDGET = 2.0  # seconds a command may spend asking users.info (Slack wants its answer within 3 s)


@dataclass(frozen=True)
class Standing:
    """What Slack says of a member that decides what they may change: a guest (single- or multi-channel), a
    member of another organisation (``users.info``'s ``team_id`` or ``is_stranger``), or a workspace admin or
    owner. ``unknown`` when Slack could not be asked within the budget: such a member may change nothing (the
    check fails closed), and the answer is not kept."""

    guest: bool = False
    admin: bool = False
    stranger: bool = False
    unknown: bool = False
    names: tuple[str, ...] = ()  # their full and display names, to check an author profile they claim


@dataclass
class SlackDirectory:
    db: Database
    _standing: dict[tuple[str, str], tuple[float, Standing]] = field(default_factory=dict)
    _bot_users: dict[str, str] = field(default_factory=dict)
    _domains: dict[str, str | None] = field(default_factory=dict)
    _known_channels: set[tuple[str, str]] = field(default_factory=set)

    def bot_user_id(self, client: WebClient, team_id: str) -> str | None:
        """PaperPing's user id as ``client``'s token says (``auth.test``), with the name and domain of the token's
        own workspace kept. Asked for another workspace (a Slack Connect partner's, say), nothing is written under
        that workspace's id."""
        if team_id in self._bot_users:
            return self._bot_users[team_id] or None
        auth = client.auth_test()
        user, own = str(auth.get("user_id") or ""), str(auth.get("team_id") or team_id)
        domain = str(auth.get("url") or "").removeprefix("https://").split(".slack.com")[0] or None
        if own != team_id:
            log.warning("asked for workspace %s with the token of workspace %s; kept for %s only", team_id, own, own)
        self._bot_users[own], self._domains[own] = user, domain
        with self.db.connection() as conn:
            storage.workspaces.upsert_team(conn, own, name=auth.get("team"), domain=domain)
        return user or None

    def domain(self, team_id: str) -> str | None:
        if team_id not in self._domains:
            with self.db.connection() as conn:
                self._domains[team_id] = storage.workspaces.load_team_domain(conn, team_id)
        return self._domains[team_id]

    def standing(self, client: WebClient, team_id: str, user_id: str) -> Standing:
        """The member's standing from ``users.info``, kept a few minutes. A 429 is waited out while the wait fits
        in ``STANDING_BUDGET``; past it, or on any other error, the standing is ``unknown``."""
        cached = self._standing.get((team_id, user_id))
        if cached and time.monotonic() - cached[0] < STANDING_SECONDS:
            return cached[1]
        deadline = time.monotonic() + STANDING_BUDGET
        while True:
            try:
                user = client.users_info(user=user_id)["user"]
                break
            except SlackApiError as exc:
                wait = retry_after_seconds(exc.response.headers) if exc.response.status_code == 429 else None
                if wait is None or time.monotonic() + wait > deadline:
                    log.warning(
                        "users.info %s: %s; the member may change nothing now", user_id, exc.response.get("error")
                    )
                    return Standing(unknown=True)
                time.sleep(wait)
        found = Standing(
            guest=bool(user.get("is_restricted") or user.get("is_ultra_restricted")),
            admin=bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner")),
            stranger=bool(user.get("is_stranger")) or bool(user.get("team_id") and user.get("team_id") != team_id),
            names=_names(user),
        )
        self._standing[(team_id, user_id)] = (time.monotonic(), found)
        return found

    def channel_team(self, team_id: str, channel_id: str) -> str:
        """The workspace a channel belongs to in PaperPing's base. In a Slack Connect channel a command from a
        member of the partner organisation carries their own ``team_id``; the channel (and what the base holds
        of it) stays the workspace's that PaperPing is in."""
        with self.db.connection() as conn:
            owners = {t for t, c, _ in storage.workspaces.find_channels(conn, channel_id) if c == channel_id}
        return next(iter(owners)) if len(owners) == 1 and team_id not in owners else team_id

    def ensure_channel(self, client: WebClient, team_id: str, channel_id: str) -> None:
        """The workspace and channel rows, created on first sight (their name from ``conversations.info``)."""
        if (team_id, channel_id) in self._known_channels:
            return
        with self.db.connection() as conn:
            known = any(c[:2] == (team_id, channel_id) for c in storage.workspaces.find_channels(conn, channel_id))
        if not known:
            self.bot_user_id(client, team_id)
            try:
                info = client.conversations_info(channel=channel_id)["channel"]
                channel = channel_from_slack(info, team_id) or Channel(team_id, channel_id, channel_id)
            except SlackApiError as exc:
                log.warning("conversations.info %s: %s", channel_id, exc.response.get("error"))
                channel = Channel(team_id, channel_id, channel_id)
            with self.db.connection() as conn:
                storage.workspaces.upsert_team(conn, team_id)
                storage.workspaces.upsert_channel(conn, channel)
        self._known_channels.add((team_id, channel_id))

    def is_member(self, client: WebClient, channel_id: str) -> bool:
        """Whether PaperPing is in the channel (``conversations.info``'s ``is_member``). A private channel it is
        not in answers ``channel_not_found``; when Slack cannot say, it is taken to be in."""
        try:
            info = client.conversations_info(channel=channel_id)["channel"]
        except SlackApiError as exc:
            return exc.response.get("error") not in ("channel_not_found", "not_in_channel")
        return bool(info.get("is_member", True))


def _names(user: dict[str, Any]) -> tuple[str, ...]:
    raw = user.get("profile")
    profile: dict[str, Any] = raw if isinstance(raw, dict) else {}
    found = (user.get("real_name"), profile.get("real_name"), profile.get("display_name"), user.get("name"))
    return tuple(dict.fromkeys(str(n)[:200] for n in found if isinstance(n, str) and n))
