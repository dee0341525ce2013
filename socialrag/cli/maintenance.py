"""``paperping migrate``, ``keygen``, ``index`` and ``purge``: the operator's upkeep of the knowledge base."""

from __future__ import annotations

import argparse
import sys

from socialrag import storage
from socialrag.cli.subcommand import OpenDatabase, Subcommand, add_index_flags, no_arguments, run_indexing
from socialrag.config import Settings
from socialrag.setting import zotero_group_id
from socialrag.text import printable


def migrate(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    open_db()  # opening the database brings its schema up to date
    print("database schema is up to date")
    return 0


def keygen(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    from socialrag.token_cipher import generate_key

    print(generate_key())
    return 0


def index(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    run_indexing(args, settings, open_db())
    return 0


def purge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--team", required=True, help="the workspace id (T...)")
    parser.add_argument("--yes", action="store_true", help="really delete (without it, say what would go)")
    parser.add_argument(
        "--drop-forget-list",
        action="store_true",
        help="delete the workspace's forget list and remembered deletions too (members who used forget-me, and "
        "messages deleted in Slack, would be stored again by an old export imported after a new installation)",
    )


def _members(n: int) -> str:
    return f"{n} member{'s' if n != 1 else ''}"


def purge(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    """A workspace's channels, messages, reactions, members, settings, posts, LLM logs, checkpoints and
    installation. Public paper metadata stays, and so does the workspace's forget list unless
    ``--drop-forget-list``. Without ``--yes`` it says what would go; a workspace with nothing stored (a mistyped
    id) is said so, with the ids stored, and nothing is done even with ``--yes``."""
    db = open_db()
    drop = bool(args.drop_forget_list)
    with db.connection() as conn:
        channels = [c for c in storage.workspaces.find_channels(conn) if c[0] == args.team]
        messages, members, known, listed, remembered = storage.workspaces.load_team_footprint(conn, args.team)
        stored = storage.workspaces.load_team_ids(conn)
    team = printable(args.team)
    # what a purge keeps unless --drop-forget-list: the forget list, and the deletions remembered (with or without it)
    if listed:
        stays = f"its forget list ({_members(listed)}) and remembered deletions"
    else:
        stays = "its remembered deletions" if remembered else ""
    if not (channels or messages or members or known or (stays and drop)):
        if stays:
            only = f"its forget list ({_members(listed)}) is" if listed else "its remembered deletions are"
            print(
                f"paperping: workspace {team} was purged already; only {only} kept, and --drop-forget-list deletes "
                f"{'it' if listed else 'them'}",
                file=sys.stderr,
            )
            return 2
        ids = ", ".join(printable(t) for t in stored[:20]) or "none"
        print(f"paperping: no workspace {team} is stored, so nothing was deleted; stored: {ids}", file=sys.stderr)
        return 2
    if not stays:
        forget_list = ""
    elif drop:
        forget_list = f", and {stays}, which an old export may then bring back"
    else:
        forget_list = f"; {stays} stay unless you add --drop-forget-list"
    if not args.yes:
        names = ", ".join(f"#{printable(name)}" for _, _, name in channels[:10])
        more = f" and {len(channels) - 10} more" if len(channels) > 10 else ""
        print(
            f"paperping: this deletes everything stored about workspace {team}: {len(channels)} channels"
            f"{f' ({names}{more})' if channels else ''}, {messages} messages and replies, {members} members, and its "
            f"settings, posts, LLM logs, checkpoints and installation (public paper metadata stays){forget_list}; "
            "add --yes to go ahead",
            file=sys.stderr,
        )
        return 2
    with db.connection() as conn:
        counts = storage.workspaces.purge_team(conn, args.team, keep_forget_list=not drop)
    if not stays or drop:
        kept = ""
    else:
        comes_back = "stores nothing of theirs, nor messages" if listed else "brings back no message"
        kept = f"; kept {stays}: an export imported after a new installation {comes_back} deleted in Slack"
    print(
        f"workspace {team}: deleted {counts['channels']} channels, {counts['messages']} messages and "
        f"replies (with their reactions), {counts['members']} members{kept}"
    )
    return 0


def zotero_group_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("group", help="the Zotero group library's id (the number in its address)")
    parser.add_argument("--team", required=True, help="the workspace (team id) the group library belongs to now")


def zotero_group(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    """Give a Zotero group library to a workspace: from now on only its channels send their reading lists there."""
    group = zotero_group_id(str(args.group))
    team = printable(args.team)
    if group is None:
        print("paperping: a Zotero group id is a number, as in its address", file=sys.stderr)
        return 2
    db = open_db()
    with db.connection() as conn:
        if not storage.workspaces.team_exists(conn, args.team):
            print(f"paperping: no workspace {team} is stored; `paperping status` lists the channels", file=sys.stderr)
            return 2
        before = storage.reading_list.move_zotero_group(conn, group, args.team)
    held = f" (it was {printable(before)}'s)" if before and before != args.team else ""
    print(f"Zotero group {group} now belongs to workspace {team}{held}.")
    return 0


MIGRATE = Subcommand("migrate", "bring the database schema up to date", no_arguments, migrate)
KEYGEN = Subcommand("keygen", "print a new key for PAPERPING_TOKEN_KEY", no_arguments, keygen)
INDEX = Subcommand("index", "fetch missing paper metadata and compute missing embeddings", add_index_flags, index)
PURGE = Subcommand("purge", "delete everything stored about a workspace (after it uninstalled)", purge_arguments, purge)
ZOTERO_GROUP = Subcommand(
    "zotero-group",
    "give a Zotero group library to one workspace (only its channels send there)",
    zotero_group_arguments,
    zotero_group,
)
