"""The ``paperping`` program: one table of subcommands (``SUBCOMMANDS``), each a module with its options and
its work. The Slack ones are here (``run``, ``import-export``, ``backfill``, ``demo``); the others, which know
nothing of Slack, come from ``socialrag.cli``. It builds the settings, and the database for the subcommands
that open it, and passes them down."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from bot.cli import demo, imports, run
from socialrag.cli import CORE_COMMANDS, Subcommand
from socialrag.cli.subcommand import shown
from socialrag.config import Settings, clear_empty_settings
from socialrag.db import Database, open_database
from socialrag.errors import PaperPingError

log = logging.getLogger("paperping")

SUBCOMMANDS: tuple[Subcommand, ...] = (demo.COMMAND, run.RUN, imports.IMPORT_EXPORT, imports.BACKFILL, *CORE_COMMANDS)
# how `paperping --help` lists them: by what an admin is doing
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Trying it", ("demo",)),
    ("Running in Slack", ("run", "keygen")),
    ("Importing", ("import-export", "backfill", "catalog", "index")),
    ("Asking and evaluating", ("ask", "status", "recommend", "eval", "refit", "report", "export")),
    ("Maintenance", ("migrate", "backup", "restore", "move-to", "upgrade-home", "purge", "zotero-group")),
)


def grouped_help() -> str:
    """The subcommands with their help lines, group by group."""
    by_name = {c.name: c for c in SUBCOMMANDS}
    lines = []
    for title, names in GROUPS:
        lines.append(f"{title}:")
        lines += [f"  {name:<15} {by_name[name].help}" for name in names]
        lines.append("")
    return "\n".join(lines) + "`paperping COMMAND --help` gives a command's options; docs/cli.md has them all."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paperping",
        description="PaperPing: paper recommendations for Slack channels",
        epilog=grouped_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of those below")
    for command in SUBCOMMANDS:
        command.add_arguments(sub.add_parser(command.name, description=command.help))
    return parser


def _configure_logging(args: argparse.Namespace) -> None:
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("paperping.progress").setLevel(logging.INFO)  # long work says how far it is
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request
    # a line per job run, and a warning each time a job still running is not started again (expected: the
    # indexer works through its queue for longer than its interval)
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    if args.command == "run":  # the service says what it indexes and posts
        for ours in ("bot", "socialrag"):
            logging.getLogger(ours).setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _configure_logging(args)
    command = next(c for c in SUBCOMMANDS if c.name == args.command)
    try:
        clear_empty_settings()
        settings = Settings.from_env()
        opened: list[Database] = []

        def open_db() -> Database:
            if not opened:
                opened.append(open_database(settings))
            return opened[0]

        try:
            return command.run(args, settings, open_db)
        finally:
            for db in opened:  # the pool's connections end with the command
                db.close()
    except PaperPingError as exc:
        print(f"paperping: {shown(str(exc))}", file=sys.stderr)  # it may name what was typed or stored
        return 2
    except KeyboardInterrupt:
        print("paperping: interrupted; what was imported so far is kept", file=sys.stderr)
        return 130
