"""``paperping report``: a channel's report as one self-contained HTML page with its charts."""

from __future__ import annotations

import argparse
from pathlib import Path

from socialrag.cli.subcommand import CHANNEL_HELP, OpenDatabase, Subcommand, parse_time, resolve_channel, shown
from socialrag.config import Settings
from socialrag.errors import InputError
from socialrag.report import load_report_data, safe_filename, write_report
from socialrag.text import printable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", help=CHANNEL_HELP)
    parser.add_argument("--out", type=Path, help="the folder to write (default: paperping-report-CHANNEL)")
    parser.add_argument("--since", help="from this ISO date")
    parser.add_argument("--until", help="up to this ISO date (default: now)")
    parser.add_argument("--anonymous", action="store_true", help="pseudonyms instead of members' names")


def run(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    db = open_db()
    team_id, channel_id, name = resolve_channel(db, args.channel)
    since = parse_time(args.since, "--since", future=True) if args.since else None
    until = parse_time(args.until, "--until", future=True) if args.until else None
    if since and until and since >= until:
        raise InputError("--since must come before --until")
    out: Path = args.out or Path(f"paperping-report-{safe_filename(name)}")
    with db.connection() as conn:
        data = load_report_data(conn, team_id, channel_id, since=since, until=until)
    try:
        report = write_report(data, out, anonymous=args.anonymous)
    except OSError as exc:  # a file in the folder's place, no permission, a full disk
        raise InputError(f"could not write the report into {out} ({exc.strerror or exc}): give --out a folder") from exc
    counts = f"{len(data.member_shares)} shares, {len(data.replies)} replies, {len(data.reactions)} reactions"
    print(f"#{shown(name)}: {counts}")
    for chart in report.charts:
        print(
            f"  {chart.name}: {printable(str(chart.png))} ({chart.png.stat().st_size // 1024 if chart.png else 0} KB)"
        )
    print(f"Wrote {printable(str(report.path))} ({report.path.stat().st_size // 1024} KB) in {report.seconds:.1f} s.")
    return 0


COMMAND = Subcommand(
    "report", "write a channel's report: one HTML page with charts, and each chart as PNG", add_arguments, run
)
