"""Benchmark: `paperping demo` cold (a new home) and warm (the same home again), offline.

``python -m bench.bench_demo [--runs 3]`` prints each run's wall time and the medians (targets: cold < 30 s,
warm < 10 s), timing the real command in a fresh process each time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(home: Path, out: Path) -> float:
    env = {**os.environ, "PAPERPING_OFFLINE": "1"}
    env.pop("DATABASE_URL", None)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bot.cli", "demo", "--home", str(home), "--out", str(out)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cold, warm = [], []
    for i in range(args.runs):
        home = Path(tempfile.mkdtemp(prefix="paperping-demo-bench-"))
        cold.append(timed(home / "home", home / "out"))
        warm.append(timed(home / "home", home / "out"))
        shutil.rmtree(home, ignore_errors=True)
        print(f"run {i + 1}: cold {cold[-1]:.1f}s, warm {warm[-1]:.1f}s", flush=True)
    print(
        f"median: cold {statistics.median(cold):.1f}s (target < 30 s), warm {statistics.median(warm):.1f}s "
        "(target < 10 s)"
    )


if __name__ == "__main__":
    main()
