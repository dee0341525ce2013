"""``paperping report``: a channel's report as one self-contained HTML page with its charts."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.recommend_cmd import parse_time, resolve_channel
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import InputError
from socialrag.report import load_report_data, safe_filename, write_report


def cmd_report(args: argparse.Namespace, settings: Settings, db: Database) -> int:
    team_id, channel_id, name = resolve_channel(db, args.channel)
    since = parse_time(args.since, "--since") if args.since else None
    until = parse_time(args.until, "--until") if args.until else None
    if since and until and since >= until:
        raise InputError("--since must come before --until")
    out: Path = args.out or Path(f"paperping-report-{safe_filename(name)}")
    with db.connection() as conn:
        data = load_report_data(conn, team_id, channel_id, since=since, until=until)
    report = write_report(data, out, anonymous=args.anonymous)
    print(f"#{name}: {len(data.member_shares)} shares, {len(data.replies)} replies, {len(data.reactions)} reactions")
    for chart in report.charts:
        print(f"  {chart.name}: {chart.png} ({chart.png.stat().st_size // 1024 if chart.png else 0} KB)")
    print(f"Wrote {report.path} ({report.path.stat().st_size // 1024} KB) in {report.seconds:.1f} s.")
    return 0
