"""``paperping catalog import FILE``: papers from a JSON-lines catalog into the knowledge base, embedded."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from socialrag.cli.subcommand import OpenDatabase, Subcommand, embed_all
from socialrag.config import Settings
from socialrag.text import printable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="catalog_command", required=True, metavar="SUBCOMMAND")
    imp = sub.add_parser("import", help="import papers from a JSON-lines file (.jsonl or .jsonl.gz)")
    imp.add_argument("file", type=Path)
    imp.add_argument("--no-embed", action="store_true", help="do not compute embeddings now")


def run(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    from socialrag.knowledge import import_catalog

    db = open_db()
    report = import_catalog(db, args.file, progress=sys.stderr.isatty())
    print(f"catalog: {report.papers} papers imported from {printable(str(args.file))}")
    for problem in report.problems[:20]:
        print(f"warning: {printable(problem)}", file=sys.stderr)
    if len(report.problems) > 20:
        print(f"... and {len(report.problems) - 20} more lines skipped", file=sys.stderr)
    if not args.no_embed:
        embed_all(settings, db)
    return 0


COMMAND = Subcommand("catalog", "the local catalog of candidate papers", add_arguments, run)
