"""``paperping run``: the subcommand's options. The process itself (``bot.cli.process``: the Slack app, the
posting tick, the indexer) is loaded only when the subcommand runs, so that other subcommands start fast."""

from __future__ import annotations

import argparse

from socialrag.cli.subcommand import OpenDatabase, Subcommand
from socialrag.config import Settings


def run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", action="store_true", help="serve HTTP at /slack/events instead of Socket Mode")
    parser.add_argument("--port", type=int, default=3000, help="HTTP port (default 3000)")


def run(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    """``paperping run``: the Slack app and this process's share of the scheduled posts."""
    from bot.cli.process import cmd_run

    return cmd_run(args, settings, open_db())


RUN = Subcommand("run", "run the Slack app and post on schedule", run_arguments, run)
