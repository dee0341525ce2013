"""``paperping demo``: the whole workflow offline on a fictional lab channel (no Slack, no network)."""

from __future__ import annotations

import argparse
from pathlib import Path

from socialrag.cli.subcommand import OpenDatabase, Subcommand
from socialrag.config import Settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", type=Path, help="keep the demo's database here (default: a temporary folder)")
    parser.add_argument("--out", type=Path, default=Path("paperping-demo"), help="where to write the HTML and JSON")


def run(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    from bot.demo.workflow import run_demo

    run_demo(settings, args.home, args.out)  # the demo opens a database of its own
    return 0


COMMAND = Subcommand(
    "demo", "the whole workflow offline on a fictional lab channel (no Slack needed)", add_arguments, run
)
