"""The subcommands that bring a Slack history in: ``import-export`` (a workspace export) and ``backfill`` (a
channel's history through the Web API)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from socialrag import storage
from socialrag.cli.subcommand import OpenDatabase, Subcommand, add_index_flags, run_indexing
from socialrag.config import Settings
from socialrag.errors import ConfigError, InputError
from socialrag.text import printable


def import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("export", type=Path, help="the export .zip")
    parser.add_argument(
        "--channel", action="append", dest="channels", metavar="NAME", help="only this channel (repeatable)"
    )
    parser.add_argument("--team-id", help="workspace id, when the export does not say")
    parser.add_argument("--team-domain", help="workspace domain (NAME.slack.com) for message permalinks")
    add_index_flags(parser)


def import_export(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    from bot.slack.workspace_export import import_export as read_export

    db = open_db()

    started = datetime.now(UTC)
    report = read_export(
        db,
        args.export,
        channels=args.channels,
        team_id=args.team_id,
        domain=args.team_domain or settings.slack_team_domain,
        progress=sys.stderr.isatty(),
    )
    seconds = (datetime.now(UTC) - started).total_seconds()
    for ch in report.channels:
        s = ch.stats
        print(
            f"#{printable(ch.name)}: {ch.scanned} messages read, kept {s.messages} with paper links, "
            f"{s.replies} thread replies, {s.reactions} reactions{_unshared(ch.unshared)}"
        )
    print(f"read {report.scanned} messages in {seconds:.1f}s")
    for problem in report.problems:
        print(f"warning: {printable(problem)}", file=sys.stderr)  # names from the export: shown, never obeyed
    if report.problems:
        print(
            f"{len(report.problems)} problem(s): what they name was skipped; everything else was imported",
            file=sys.stderr,
        )
    run_indexing(args, settings, db)
    return 0


def backfill_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", help="channel id (C...) or name")
    parser.add_argument("--restart", action="store_true", help="ignore a saved checkpoint and start again")
    add_index_flags(parser)


def backfill(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    """``paperping backfill CHANNEL``: needs ``SLACK_BOT_TOKEN``; ``SLACK_API_URL`` may point elsewhere."""
    from slack_sdk import WebClient

    from bot.slack.backfill import backfill_channel

    db = open_db()
    if settings.offline:
        raise ConfigError("PAPERPING_OFFLINE=1 forbids network calls; a backfill needs the Slack Web API")
    if not settings.slack_bot_token:
        raise ConfigError("SLACK_BOT_TOKEN is not set: a backfill reads the channel with the bot's token")
    channel_id = args.channel.lstrip("#")
    if not channel_id.startswith(("C", "G")) or not channel_id.isupper():
        with db.connection() as conn:
            found = storage.workspaces.find_channels(conn, channel_id)
        if not found:
            raise InputError(f"give the channel id (C...) for {args.channel}: it is not stored under that name yet")
        channel_id = found[0][1]
    client = WebClient(
        token=settings.slack_bot_token, base_url=settings.slack_api_url, timeout=int(settings.http_timeout)
    )
    report = backfill_channel(db, client, channel_id, restart=args.restart)
    s = report.stats
    resumed = " (resumed from a checkpoint)" if report.resumed else ""
    removed = f"; removed {report.removed} stored messages Slack no longer has" if report.removed else ""
    print(
        f"#{printable(report.channel.name)}: {report.pages} pages, {report.threads} threads{resumed}; stored "
        f"{s.messages} messages with paper links, {s.replies} replies, {s.reactions} reactions{removed}"
        f"{_unshared(report.unshared)}"
    )
    run_indexing(args, settings, db)
    return 0


def _unshared(removed: int) -> str:
    """What a read said of the stored shares it showed edited to link no paper (none: nothing)."""
    return f"; removed {removed} stored messages of shares edited to link no paper" if removed else ""


IMPORT_EXPORT = Subcommand("import-export", "import a Slack workspace export (zip)", import_arguments, import_export)
BACKFILL = Subcommand("backfill", "import a channel's history through the Slack Web API", backfill_arguments, backfill)
