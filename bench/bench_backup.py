"""Benchmark: ``paperping backup`` of a home with about 10,000 shares while a writer keeps inserting, then
``paperping restore`` into a new home, which must give the same status and the same next recommendation.

``python -m bench.bench_backup [--messages N] [--channel NAME]`` builds the home from a synthetic export
(``bench.gen_export``: about one message in 21 shares a paper, so 210,000 messages give about 10,000 shares),
imported offline, with the demo's catalog of 3,002 ACL Anthology papers as the candidates. ``paperping index``
then gives every paper a vector with the bundled model: each catalog paper from its title and abstract (through
the embedding cache every home on the machine shares, ``PAPERPING_EMBED_CACHE``), each shared paper from its
channel's messages (it has no metadata offline). ``paperping refit`` learns the channel's ranking. It prints
the time of each step, the backup's time and size, the longest the writer waited on one insert meanwhile, the
restore's time, and whether the new home's ``paperping status --json`` and the channel's next recommendation
(its ``TOP`` ranked candidates in order, and the draft) match the old home's.
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
CATALOG = ROOT / "bot" / "demo" / "data" / "catalog.jsonl.gz"
AS_OF = "2021-01-01T00:00:00+00:00"  # after the synthetic history (autumn 2020) and every catalog paper's date
TOP = 50


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


def build_home(old: Path, export: Path, channel: str, took: dict[str, float]) -> str:
    """Import the export and the catalog, give every paper a vector and learn the channel's ranking; returns what
    ``paperping index`` said of its embeddings."""
    took["import"], _ = paperping(old, "import-export", str(export), "--no-metadata", "--no-embed")
    took["catalog"], _ = paperping(old, "catalog", "import", str(CATALOG), "--no-embed")
    took["index"], indexed = paperping(old, "index")
    took["refit"], _ = paperping(old, "refit", channel, "--as-of", AS_OF)
    return last_line(indexed, "embeddings:")


def count(conninfo: str, sql: str) -> int:
    with psycopg.connect(conninfo) as conn:
        row = conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


def compare(channel: str, status: tuple[str, str], picks: tuple[str, str]) -> None:
    """Print whether the new home's status and the channel's next recommendation are the old home's."""
    print(f"status --json the same: {json.loads(status[0]) == json.loads(status[1])}")
    first, second = json.loads(picks[0]), json.loads(picks[1])
    ranked = [c["title"] for c in first["candidates"]]
    same = sum(a == b for a, b in zip(first["candidates"], second["candidates"], strict=False))
    draft = "the same" if first["draft"] == second["draft"] else "not the same"
    print(
        f"next recommendation in #{channel} the same: {first == second} ({same} of {len(ranked)} ranked candidates"
        f" in the same place, the draft {draft})"
    )
    print(f"  it posts: {ranked[0] if ranked else 'nothing'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=210_000)
    parser.add_argument("--channel", default="papers-0", help="the channel whose next recommendation is compared")
    args = parser.parse_args()
    started = time.perf_counter()
    from bench.gen_export import write_export
    from socialrag.db import DB_NAME, _with_dbname, start_embedded

    OUT.mkdir(exist_ok=True)
    export = OUT / f"synthetic-{args.messages}.zip"
    if not export.exists():
        write_export(export, args.messages)
    folder = Path(tempfile.mkdtemp(prefix="paperping-bench-backup-"))
    old, new, dump = folder / "old-home", folder / "new-home", folder / "home.dump"
    recommend = ("recommend", args.channel, "--json", "--as-of", AS_OF, "--top", str(TOP))
    took: dict[str, float] = {}
    uri, server = start_embedded(old / "pgdata")  # kept up by this process while the commands come and go
    try:
        embedded = build_home(old, export, args.channel, took)
        conninfo = _with_dbname(uri, DB_NAME)
        shares = count(conninfo, "SELECT count(DISTINCT message_id) FROM message_papers")
        vectors = count(conninfo, "SELECT count(*) FROM paper_embeddings")
        of_channels = count(conninfo, "SELECT count(*) FROM channel_text_embeddings")
        writer = Writer(conninfo)
        writer.start()
        took["backup"], _ = paperping(old, "backup", str(dump))
        writer.stop.set()
        writer.join()
        status = paperping(old, "status", "--json")[1]
        took["recommend"], picked = paperping(old, *recommend)
        took["restore"], said = paperping(new, "restore", str(dump))
        status_after, picked_after = paperping(new, "status", "--json")[1], paperping(new, *recommend)[1]
    finally:
        server.cleanup()
    size = dump.stat().st_size
    print(f"home: {shares:,} shares from {args.messages:,} messages, imported in {took['import']:.1f} s")
    print(f"catalog: {CATALOG.name} imported in {took['catalog']:.1f} s")
    print(f"vectors: {took['index']:.1f} s for `paperping index` ({embedded})")
    print(f"  {vectors:,} papers' vectors, {of_channels:,} from channels' messages; refit {took['refit']:.1f} s")
    longest = max(writer.waits)
    print(f"backup: {took['backup']:.1f} s, {size / 1e6:.1f} MB; the writer's longest insert meanwhile {longest:.3f} s")
    print(f"restore into a new home: {took['restore']:.1f} s ({said.strip().splitlines()[-1]})")
    compare(args.channel, (status, status_after), (picked, picked_after))
    print(f"`recommend` {took['recommend']:.1f} s; the benchmark {time.perf_counter() - started:.0f} s in all")
    shutil.rmtree(folder, ignore_errors=True)


def last_line(output: str, starting: str) -> str:
    """The last line of a command's output that starts so, without that start."""
    lines = [line for line in output.splitlines() if line.startswith(starting)]
    return lines[-1].removeprefix(starting).strip() if lines else "no figures printed"


if __name__ == "__main__":
    main()
