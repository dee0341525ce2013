"""How a ``paperping`` subcommand is made: a ``Subcommand`` with its name, help line, options
(``add_arguments``) and what it does (``run``), given the settings and a way to open the database (only
the subcommands that need it open it). Helpers several subcommands share are here too."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import InputError
from socialrag.text import printable

OpenDatabase = Callable[[], Database]
# the times a command line may name: Slack's (and so PaperPing's) history starts after the first, and no stored time
# is after the last; a year out of them (0001, 9999) overflowed the window taken before or after it
FIRST_TIME = datetime(1970, 1, 1, tzinfo=UTC)
LAST_TIME = datetime(2100, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Settings, OpenDatabase], int]


def no_arguments(parser: argparse.ArgumentParser) -> None:
    """A subcommand without options."""


CHANNEL_HELP = "channel name or id (TEAM_ID/CHANNEL_ID when several workspaces have it)"


def parse_time(text: str, option: str = "--as-of", *, future: bool = False) -> datetime:
    """An ISO date or date-time; naive times are UTC. A replay's time (``future`` False) must be past: a refit
    stored with a later date would be the channel's ranking until then, and never be refitted."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"{option} takes an ISO date such as 2021-03-01 or 2021-03-01T09:00, not {text!r}") from None
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    if not future and when > datetime.now(UTC):
        raise InputError(f"{option} replays the past: {text} is later than now (leave {option} out to use now)")
    if not FIRST_TIME <= when < LAST_TIME:
        raise InputError(f"{option} takes a time from 1970 to 2099, not {text}")
    return when


def shown(text: str) -> str:
    """Stored text (a title, a member's or channel's name, a written answer) for the terminal: its lines kept, any
    character a terminal would act on escaped (``printable``), so that a catalog line or a Slack name cannot write
    the operator's clipboard or screen."""
    return "\n".join(printable(line) for line in text.split("\n"))


def resolve_channel(db: Database, name_or_id: str) -> tuple[str, str, str]:
    """(team id, channel id, name) of the channel a command line names: ``NAME``, ``CHANNEL_ID`` or, where
    several workspaces have one of that name or id, ``TEAM_ID/CHANNEL_ID``."""
    team, _, wanted = name_or_id.rpartition("/")
    with db.connection() as conn:
        found = [c for c in storage.workspaces.find_channels(conn, wanted) if not team or c[0] == team]
    if not found:
        raise InputError(f"no stored channel named {name_or_id}; `paperping status` lists them")
    if len(found) > 1:
        choices = ", ".join(f"{t}/{c}" for t, c, _ in found)
        raise InputError(f"{name_or_id} names {len(found)} channels in different workspaces; give one of {choices}")
    return found[0]


def add_index_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-metadata", action="store_true", help="do not look paper metadata up now")
    parser.add_argument("--no-embed", action="store_true", help="do not compute embeddings now")


def run_indexing(args: argparse.Namespace, settings: Settings, db: Database) -> None:
    """After new history: paper metadata (unless offline or told not to), then embeddings."""
    if not getattr(args, "no_metadata", False):
        if settings.offline:
            print("offline: paper metadata will be looked up on a later run")
        else:
            from socialrag.knowledge import build_sources, refresh_metadata

            with build_sources(settings) as sources:
                result = refresh_metadata(db, sources, settings)
            print(f"metadata: {result.found} papers found, {result.missing} not found yet (retried later)")
    if not getattr(args, "no_embed", False):
        embed_all(settings, db)


def embed_all(settings: Settings, db: Database) -> None:
    """Embed what lacks a vector now; what is done leaves the queue that `paperping run` works from."""
    from socialrag.knowledge import Embedder, embed_pending

    embedder = Embedder(settings.embed_model, device=settings.embed_device, cache=settings.embed_cache_dir)
    done = embed_pending(db, embedder, batch_size=settings.embed_batch)
    with db.connection() as conn:
        storage.queue.drop_indexed(conn, embedder.model_name, datetime.now(UTC))
    print(f"embeddings: {done.embedded} papers embedded, {done.reused} reused, {done.unchanged} unchanged")
