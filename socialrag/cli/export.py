"""``paperping export CHANNEL --format bibtex|ris|csl-json [--out FILE]``: the channel's reading list as a
reference file (standard output without ``--out``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from socialrag.cli.subcommand import CHANNEL_HELP, OpenDatabase, Subcommand, resolve_channel
from socialrag.config import Settings
from socialrag.errors import InputError
from socialrag.files import replace_whole
from socialrag.reading.library import load_references
from socialrag.reading.references import FORMATS, render
from socialrag.text import printable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", help=CHANNEL_HELP)
    parser.add_argument("--format", choices=FORMATS, default="bibtex", help="the file's format (default: bibtex)")
    parser.add_argument("--out", type=Path, help="write to this file (default: standard output)")


def run(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    db = open_db()
    team_id, channel_id, name = resolve_channel(db, args.channel)
    with db.connection() as conn:
        refs = load_references(conn, team_id, channel_id)
    text = render(refs, args.format)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        replace_whole(args.out, text)  # a full disk or a killed export keeps the file that was there whole
    except OSError as exc:  # a folder that is not there, a folder in the file's place, no permission, a full disk
        raise InputError(
            f"could not write {args.out} ({exc.strerror or exc}): give --out a file in a folder you can write"
        ) from exc
    print(
        f"#{printable(name)}: {len(refs)} saved papers written to {printable(str(args.out))} ({args.format}).",
        file=sys.stderr,
    )
    return 0


COMMAND = Subcommand("export", "write a channel's reading list as BibTeX, RIS or CSL-JSON", add_arguments, run)
