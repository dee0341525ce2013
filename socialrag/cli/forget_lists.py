"""The forget list across a restore: who asked to be forgotten is read from the home's database before a backup
replaces it, and forget-me is applied again to the restored copy before it becomes the home's, so that a backup
taken before a member's `/paperping forget-me` does not bring them back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from socialrag.errors import DatabaseError
from socialrag.storage import privacy


@dataclass(frozen=True)
class Reapplied:
    """What a restore did with the replaced home's forget list."""

    listed: int  # members on it
    since_backup: int  # of them, those the backup did not list yet (they asked after it was taken)

    def describe(self) -> str:
        members = "member" if self.listed == 1 else "members"
        return (
            f"forget-me applied again for the {self.listed} {members} on the replaced home's forget list "
            f"({self.since_backup} asked after this backup was taken)"
        )


def load_forget_list(conninfo: str, name: str) -> list[tuple[str, str]]:
    """(team, member) of everyone on the forget list of the home's database (``name``, at ``conninfo``)."""
    try:
        with psycopg.connect(conninfo) as conn:
            return privacy.load_every_forgotten(conn)
    except psycopg.Error as exc:
        raise DatabaseError(
            f"the forget list of database {name} could not be read ({exc}): nothing was changed. A restore carries "
            "it into the restored copy, so that members who asked to be forgotten since the backup stay forgotten"
        ) from exc


def reapply_forget_list(conninfo: str, listed: Sequence[tuple[str, str]]) -> Reapplied:
    """Forget-me again, in the database at ``conninfo`` (the restored copy, migrated), for every member on
    ``listed``, in one transaction."""
    with psycopg.connect(conninfo) as conn:
        known = set(privacy.load_every_forgotten(conn))
        for team_id, user_id in listed:
            privacy.forget_member(conn, team_id, user_id)
    return Reapplied(len(listed), len(set(listed) - known))
