"""What stays gone across a restore: who asked to be forgotten, what Slack said was deleted (messages, and
reactions taken off), and which workspaces ``paperping purge`` deleted, is read from the home's database before a
backup replaces it, and applied again to the restored copy before it becomes the home's. So a backup taken before
a member's `/paperping forget-me`, a message's deletion or a workspace's purge does not bring them back."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from socialrag import storage
from socialrag.errors import DatabaseError
from socialrag.knowledge import live


@dataclass(frozen=True)
class StaysGone:
    """The replaced home's forget list and remembered deletions (``storage.deletions``)."""

    forgotten: list[tuple[str, str]] = field(default_factory=list)  # (team, member)
    # (team, channel, ts, when, and the time of the edit that left a message with no paper link; None: deleted)
    messages: list[tuple[str, str, str, datetime, datetime | None]] = field(default_factory=list)
    reactions: list[tuple[str, str, str, str, str, datetime]] = field(default_factory=list)
    purged: list[tuple[str, datetime]] = field(default_factory=list)  # (team, when ``paperping purge`` deleted it)


@dataclass(frozen=True)
class Reapplied:
    """What a restore did with the replaced home's forget list and deletions."""

    listed: int  # members on it
    since_backup: int  # of them, those the backup did not list yet (they asked after it was taken)
    deleted: int = 0  # messages deleted in Slack that the backup did not know were
    removed: int = 0  # stored messages and replies that went with them
    unshared: int = 0  # shares an edit took the last paper link out of, that the backup did not know were
    purged: int = 0  # workspaces purged since the backup, deleted again

    def describe(self) -> str:
        said = []
        if self.purged:
            spaces = "workspace" if self.purged == 1 else "workspaces"
            said.append(f"{self.purged} {spaces} purged since this backup deleted again")
        if self.listed:
            members = "member" if self.listed == 1 else "members"
            said.append(
                f"forget-me applied again for the {self.listed} {members} on the replaced home's forget list "
                f"({self.since_backup} asked after this backup was taken)"
            )
        if self.deleted:
            gone = "message" if self.deleted == 1 else "messages"
            said.append(
                f"{self.deleted} {gone} deleted in Slack since this backup stay deleted "
                f"({self.removed} stored messages and replies removed)"
            )
        if self.unshared:
            shares = "share" if self.unshared == 1 else "shares"
            said.append(f"{self.unshared} {shares} whose paper link was edited out since this backup stay out")
        return "; ".join(said)


def load_forget_list(conninfo: str, name: str) -> StaysGone:
    """The forget list and remembered deletions of the home's database (``name``, at ``conninfo``)."""
    try:
        with psycopg.connect(conninfo) as conn:
            messages, reactions = storage.deletions.load_every_deletion(conn)
            purged = storage.deletions.load_purges(conn)
            return StaysGone(storage.privacy.load_every_forgotten(conn), messages, reactions, purged)
    except psycopg.Error as exc:
        raise DatabaseError(
            f"the forget list of database {name} could not be read ({exc}): nothing was changed. A restore carries "
            "it into the restored copy, with the messages deleted in Slack, so that members who asked to be "
            "forgotten since the backup stay forgotten and deleted messages stay deleted"
        ) from exc


def reapply_forget_list(conninfo: str, gone: StaysGone) -> Reapplied:
    """In the database at ``conninfo`` (the restored copy, migrated), in one transaction: a purge again of every
    workspace ``gone`` says was purged after the copy's last purge of it, forget-me again for every member on its
    forget list, then its deletions and reaction removals recorded as if heard again."""
    with psycopg.connect(conninfo) as conn:
        known_purges = dict(storage.deletions.load_purges(conn))
        purged = 0
        for team_id, at in gone.purged:
            if known_purges.get(team_id) is None or known_purges[team_id] < at:  # the backup predates this purge
                storage.workspaces.purge_team(conn, team_id, at=at)
                purged += 1
        known = set(storage.privacy.load_every_forgotten(conn))
        for team_id, user_id in gone.forgotten:
            storage.privacy.forget_member(conn, team_id, user_id)
        known_gone = storage.deletions.load_gone(conn, [(t, c, ts) for t, c, ts, _, _ in gone.messages])
        new = [  # not known to the backup (a deletion is new to it where it knew only of an edit)
            e
            for t, c, ts, _, e in gone.messages
            if (t, c, ts) not in known_gone or (e is None and known_gone[(t, c, ts)] is not None)
        ]
        by_channel: dict[tuple[str, str], list[tuple[str, datetime, datetime | None]]] = defaultdict(list)
        for team_id, channel_id, ts, at, edited in gone.messages:
            by_channel[(team_id, channel_id)].append((ts, at, edited))
        removed = 0
        for (team_id, channel_id), rows in by_channel.items():
            ts_list, times, edits = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
            removed += live.record_deletions(conn, team_id, channel_id, ts_list, times, edits)
        for team_id, channel_id, ts, user_id, emoji, at in gone.reactions:
            live.record_reaction(conn, team_id, channel_id, ts, user_id, emoji, added=False, at=at)
    deleted = sum(1 for edited in new if edited is None)
    since = len(set(gone.forgotten) - known)
    return Reapplied(len(gone.forgotten), since, deleted, removed, len(new) - deleted, purged)


def catch_up(home: str, name: str, copy: str, read: StaysGone, done: Reapplied) -> Reapplied:
    """What the home's forget list and deletions gained since ``read`` was read from it (a forget-me that a
    ``paperping run`` still serving heard while the file was checked and restored), applied to the restored copy
    too, once nothing uses the home and just before the copy replaces it; ``done`` and that, told together."""
    now = load_forget_list(home, name)
    late = StaysGone(
        _added(now.forgotten, read.forgotten),
        _added(now.messages, read.messages),
        _added(now.reactions, read.reactions),
        _added(now.purged, read.purged),
    )
    if not (late.forgotten or late.messages or late.reactions or late.purged):
        return done
    more = reapply_forget_list(copy, late)
    return Reapplied(
        done.listed + more.listed,
        done.since_backup + more.since_backup,
        done.deleted + more.deleted,
        done.removed + more.removed,
        done.unshared + more.unshared,
        done.purged + more.purged,
    )


def _added(now: list[Any], before: list[Any]) -> list[Any]:
    """What ``now`` holds that ``before`` did not, in ``now``'s order (the set of ``before`` made once, not once for
    each entry)."""
    seen = set(before)
    return [entry for entry in now if entry not in seen]
