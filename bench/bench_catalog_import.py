"""Benchmark: a catalog imported into a second home takes its vectors from the embedding cache.

``python -m bench.bench_catalog_import [--catalog FILE] [--limit N]`` runs ``paperping catalog import`` twice, each
time into a new home (its own embedded Postgres) with one empty embedding cache (``PAPERPING_EMBED_CACHE``) shared by
both, and prints the seconds of each run and their ratio. The default catalog is the ACL Anthology 2016-2021 file
of ``tests/data`` (18,332 papers; ``--limit`` takes its first N). Target: the second run takes at most a tenth of
the first.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "tests" / "data" / "acl-anthology-2016-2021.jsonl.gz"


def import_once(catalog: Path, home: Path, cache: Path) -> tuple[float, str]:
    """One ``paperping catalog import`` in a new home; its seconds and its last line of output."""
    env = {**os.environ, "PAPERPING_HOME": str(home), "PAPERPING_EMBED_CACHE": str(cache), "PAPERPING_OFFLINE": "1"}
    env.pop("DATABASE_URL", None)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "catalog", "import", str(catalog)],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start, done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, default=CATALOG)
    parser.add_argument("--limit", type=int, default=None, help="only the catalog's first N papers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paperping-bench-catalog-") as tmp:
        work = Path(tmp)
        catalog = args.catalog
        if args.limit:
            catalog = work / "catalog.jsonl.gz"
            with gzip.open(args.catalog, "rt") as src, gzip.open(catalog, "wt") as dst:
                dst.writelines(itertools.islice(src, args.limit))
        first, said = import_once(catalog, work / "home-1", work / "cache")
        print(f"first home:  {first:7.1f} s  ({said})")
        second, said = import_once(catalog, work / "home-2", work / "cache")
        print(f"second home: {second:7.1f} s  ({said})")
        print(f"second / first: {second / first:.3f} (target: at most 0.100)")


if __name__ == "__main__":
    main()
