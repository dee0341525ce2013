"""``paperping migrate``, ``keygen``, ``index`` and ``purge``: the operator's upkeep of the knowledge base."""

from __future__ import annotations

import argparse
import sys

from socialrag import storage
from socialrag.cli.base import OpenDatabase, Subcommand, add_index_flags, no_arguments, run_indexing
from socialrag.config import Settings


def migrate(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    open_db()  # opening the database brings its schema up to date
    print("database schema is up to date")
    return 0


def keygen(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    from socialrag.storage.token_cipher import generate_key

    print(generate_key())
    return 0


def index(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    run_indexing(args, settings, open_db())
    return 0


def purge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--team", required=True, help="the workspace id (T...)")
    parser.add_argument("--yes", action="store_true", help="really delete (without it, say what would go)")


def purge(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    """A workspace's channels, messages, reactions, members, settings, posts, LLM logs, checkpoints and
    installation. Public paper metadata stays."""
    db = open_db()
    with db.connection() as conn:
        channels = [c for c in storage.workspaces.find_channels(conn) if c[0] == args.team]
    if not args.yes:
        print(
            f"paperping: this deletes everything stored about workspace {args.team} ({len(channels)} channels); "
            "add --yes to go ahead",
            file=sys.stderr,
        )
        return 2
    with db.connection() as conn:
        counts = storage.workspaces.purge_team(conn, args.team)
    print(
        f"workspace {args.team}: deleted {counts['channels']} channels, {counts['messages']} messages and "
        f"replies (with their reactions), {counts['members']} members"
    )
    return 0


MIGRATE = Subcommand("migrate", "bring the database schema up to date", no_arguments, migrate)
KEYGEN = Subcommand("keygen", "print a new key for PAPERPING_TOKEN_KEY", no_arguments, keygen)
INDEX = Subcommand("index", "fetch missing paper metadata and compute missing embeddings", add_index_flags, index)
PURGE = Subcommand("purge", "delete everything stored about a workspace (after it uninstalled)", purge_arguments, purge)
