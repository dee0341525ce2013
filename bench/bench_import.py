"""Benchmark: importing a 200,000-message export offline (no metadata, no embeddings).

``python -m bench.bench_import [--messages N] [--runs 3]`` prints messages/s per run, the median, and the
peak resident memory of the importing process. Each run imports into a fresh database of one embedded
Postgres. Target: at least 20,000 messages/s and under 400 MB.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"


def run_once(export: Path, conninfo: str) -> dict[str, float]:
    """One import in a child process, so that its peak memory is its own."""
    code = (
        "import json, resource, sys, time\n"
        "from pathlib import Path\n"
        "from socialrag.db import Database\n"
        "from bot.slack.workspace_export import import_export\n"
        "db = Database(sys.argv[2]); db.migrate()\n"
        "t = time.perf_counter()\n"
        "r = import_export(db, Path(sys.argv[1]), progress=False)\n"
        "s = time.perf_counter() - t\n"
        "print(json.dumps({'seconds': s, 'messages': r.scanned,"
        " 'peak_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(export), conninfo],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from bench.gen_export import write_export
    from socialrag.db import _with_dbname, ensure_database, start_embedded

    OUT.mkdir(exist_ok=True)
    export = OUT / f"synthetic-{args.messages}.zip"
    if not export.exists():
        write_export(export, args.messages)
    home = Path(tempfile.mkdtemp(prefix="paperping-bench-"))
    uri, server = start_embedded(home / "pgdata")
    rates, peaks = [], []
    try:
        for i in range(args.runs):
            name = f"bench_import_{i}"
            ensure_database(uri, name)
            result = run_once(export, _with_dbname(uri, name))
            rate = result["messages"] / result["seconds"]
            rates.append(rate)
            peaks.append(result["peak_mb"])
            print(
                f"run {i + 1}: {result['messages']:.0f} messages in {result['seconds']:.2f}s = {rate:,.0f} msg/s, "
                f"peak RSS {result['peak_mb']:.0f} MB"
            )
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)
    print(
        f"median: {statistics.median(rates):,.0f} messages/s; peak RSS max {max(peaks):.0f} MB "
        f"(targets: >= 20,000 msg/s, < 400 MB)"
    )


if __name__ == "__main__":
    main()
