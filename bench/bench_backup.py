"""Benchmark: ``paperping backup`` of a home with about 10,000 shares while a writer keeps inserting, then
``paperping restore`` into a new home.

``python -m bench.bench_backup [--messages N]`` builds the home from a synthetic export (``bench.gen_export``:
about one message in 21 shares a paper, so 210,000 messages give about 10,000 shares), imported offline, and
prints the backup's time and size, the longest the writer waited on one insert meanwhile, the restore's time, and
whether ``paperping status --json`` of the new home matches the old one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"


def paperping(home: Path, *argv: str) -> tuple[float, str]:
    """Run ``paperping`` on an embedded home; returns (seconds, standard output)."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env |= {"PAPERPING_HOME": str(home), "PAPERPING_OFFLINE": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", *argv], env=env, cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"paperping {' '.join(argv)} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started, done.stdout


class Writer(threading.Thread):
    """Inserts one row per transaction until stopped, timing each insert."""

    def __init__(self, conninfo: str) -> None:
        super().__init__(daemon=True)
        self.conninfo, self.stop, self.waits = conninfo, threading.Event(), [0.0]

    def run(self) -> None:
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            while not self.stop.is_set():
                started = time.perf_counter()
                conn.execute("INSERT INTO teams (team_id, name) VALUES (%s, 'writer')", (f"W{len(self.waits):07d}",))
                self.waits.append(time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=210_000)
    args = parser.parse_args()
    from bench.gen_export import write_export
    from socialrag.db import DB_NAME, _with_dbname, start_embedded

    OUT.mkdir(exist_ok=True)
    export = OUT / f"synthetic-{args.messages}.zip"
    if not export.exists():
        write_export(export, args.messages)
    folder = Path(tempfile.mkdtemp(prefix="paperping-bench-backup-"))
    old, new, dump = folder / "old-home", folder / "new-home", folder / "home.dump"
    uri, server = start_embedded(old / "pgdata")  # kept up by this process while the commands come and go
    try:
        paperping(old, "import-export", str(export), "--no-metadata", "--no-embed")
        conninfo = _with_dbname(uri, DB_NAME)
        with psycopg.connect(conninfo) as conn:
            shares = conn.execute("SELECT count(DISTINCT message_id) FROM message_papers").fetchone()
        writer = Writer(conninfo)
        writer.start()
        backup_s, _ = paperping(old, "backup", str(dump))
        writer.stop.set()
        writer.join()
        _, before = paperping(old, "status", "--json")
        restore_s, said = paperping(new, "restore", str(dump))
        _, after = paperping(new, "status", "--json")
    finally:
        server.cleanup()
    size = dump.stat().st_size
    print(f"home: {shares[0] if shares else 0:,} shares from {args.messages:,} messages")
    longest = max(writer.waits)
    print(f"backup: {backup_s:.1f} s, {size / 1e6:.1f} MB; the writer's longest insert meanwhile {longest:.3f} s")
    print(f"restore into a new home: {restore_s:.1f} s ({said.strip().splitlines()[-1]})")
    print(f"status --json the same: {json.loads(before) == json.loads(after)}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
