"""The subcommands that work with Slack: ``run`` (the service), ``import-export`` (a workspace export) and
``backfill`` (a channel's history through the Web API)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from socialrag.cli.subcommand import OpenDatabase, Subcommand, add_index_flags, run_indexing
from socialrag.config import Settings


def run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", action="store_true", help="serve HTTP at /slack/events instead of Socket Mode")
    parser.add_argument("--port", type=int, default=3000, help="HTTP port (default 3000)")


def run(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    from bot.run import cmd_run

    return cmd_run(args, settings, open_db())


def import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("export", type=Path, help="the export .zip")
    parser.add_argument(
        "--channel", action="append", dest="channels", metavar="NAME", help="only this channel (repeatable)"
    )
    parser.add_argument("--team-id", help="workspace id, when the export does not say")
    parser.add_argument("--team-domain", help="workspace domain (NAME.slack.com) for message permalinks")
    add_index_flags(parser)


def import_export(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    from bot.export import import_export as read_export

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
            f"#{ch.name}: {ch.scanned} messages read, kept {s.messages} with paper links, "
            f"{s.replies} thread replies, {s.reactions} reactions"
        )
    print(f"read {report.scanned} messages in {seconds:.1f}s")
    for problem in report.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if report.problems:
        print(f"{len(report.problems)} file(s) could not be read; everything else was imported", file=sys.stderr)
    run_indexing(args, settings, db)
    return 0


def backfill_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", help="channel id (C...) or name")
    parser.add_argument("--restart", action="store_true", help="ignore a saved checkpoint and start again")
    add_index_flags(parser)


def backfill(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    from bot.backfill import cmd_backfill

    return cmd_backfill(args, settings, open_db())


RUN = Subcommand("run", "run the Slack app and post on schedule", run_arguments, run)
IMPORT_EXPORT = Subcommand("import-export", "import a Slack workspace export (zip)", import_arguments, import_export)
BACKFILL = Subcommand("backfill", "import a channel's history through the Slack Web API", backfill_arguments, backfill)
