"""Benchmark: the channel report of a channel with 10,000 shares.

``python -m bench.bench_report [--shares 10000] [--runs 3]`` writes a generated channel (papers with vectors,
replies, reactions; the same generator the tests use) into a temporary embedded Postgres and times
``paperping report``'s work: loading the channel and drawing the six charts into the page. Target: < 30 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shares", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from socialrag.db import migrated_database, start_embedded
    from socialrag.report.data import load_report_data
    from socialrag.report.page import write_report
    from tests.support.reports import generated_channel

    home = Path(tempfile.mkdtemp(prefix="paperping-report-"))
    uri, server = start_embedded(home / "pgdata")
    try:
        db = migrated_database(uri, "report")
        generated_channel(db, args.shares)
        totals, loads = [], []
        report = None
        for _ in range(args.runs):
            t = time.perf_counter()
            with db.connection() as conn:
                data = load_report_data(conn, "TGEN", "CGEN", until=datetime(2030, 1, 1, tzinfo=UTC))
            loads.append(time.perf_counter() - t)
            report = write_report(data, home / "out")
            totals.append(time.perf_counter() - t)
        assert report is not None
        print(f"report of a channel with {args.shares} shares, {args.runs} runs:")
        print(f"  whole: median {statistics.median(totals):.1f} s, worst {max(totals):.1f} s (target < 30 s)")
        print(f"  loading the channel: median {statistics.median(loads):.1f} s")
        for chart in report.charts:
            size = chart.png.stat().st_size // 1024 if chart.png else 0
            print(f"  {chart.name:<10} {chart.seconds:5.1f} s   PNG {size:>4} KB   SVG {len(chart.svg) // 1024:>4} KB")
        print(f"  index.html {report.path.stat().st_size // 1024} KB")
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
