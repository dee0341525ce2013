"""Recall of the catalog search on real vectors: ``python -m bench.real.ann_recall [--queries 200]``.

``bench_scale`` measures the filtered HNSW search on synthetic topics, tight clusters far apart. This measures it on
the ACL Anthology 2016-2021 catalog of ``tests/data`` (18,332 papers, embedded by the bundled model): the catalog is
imported with ``paperping catalog import`` into a temporary home (its vectors from the shared embedding cache, about
a minute once ``bench.real.replay_real`` has filled it), then each query is searched as a recommendation searches
(``storage.embeddings.load_catalog_neighbours``: HNSW, iterative scan, a window of publication dates) and exactly
(the same search with the index off). Queries: catalog papers' own vectors (as the channel's engaged papers are
searched) and the unit mean of 20 random papers (as a channel's mean or a member's interest is), each over the whole
catalog and over a one-year window. It prints the mean and the lowest recall of the 20 nearest for each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "tests" / "data" / "acl-anthology-2016-2021.jsonl.gz"
MODEL = "all-MiniLM-L6-v2"
K = 20
AS_OF = datetime(2022, 1, 1, tzinfo=UTC)  # after the whole catalog
WINDOW = (datetime(2020, 1, 1, tzinfo=UTC), datetime(2021, 1, 1, tzinfo=UTC))


def import_catalog(home: Path) -> None:
    env = {**os.environ, "PAPERPING_HOME": str(home), "PAPERPING_OFFLINE": "1"}
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "-m", "bot.cli", "catalog", "import", str(CATALOG)], env=env, cwd=ROOT, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200, help="half catalog papers, half means of 20 papers")
    args = parser.parse_args()
    from socialrag.config import Settings
    from socialrag.db import open_database
    from socialrag.storage.embeddings import as_array, load_catalog_neighbours

    home = Path(tempfile.mkdtemp(prefix="paperping-ann-"))
    try:
        import_catalog(home)
        db = open_database(Settings.from_env({"PAPERPING_HOME": str(home), "PAPERPING_OFFLINE": "1"}))
        try:
            with db.connection() as conn:
                ids, vectors = zip(
                    *conn.execute("SELECT paper_id, embedding FROM paper_embeddings WHERE model = %s", (MODEL,)),
                    strict=True,
                )
                matrix = np.stack([as_array(v) for v in vectors])
                rng = np.random.default_rng(7)
                half = args.queries // 2
                own = [matrix[i] for i in rng.choice(len(ids), half, replace=False)]
                means = [matrix[rng.choice(len(ids), 20, replace=False)].mean(axis=0) for _ in range(half)]
                kinds = {"a paper's own vector": own, "the mean of 20 papers": [m / np.linalg.norm(m) for m in means]}
                for window, (after, before) in (("whole catalog", (None, AS_OF)), ("one year (2020)", WINDOW)):
                    for kind, queries in kinds.items():
                        recalls = []
                        for q in queries:
                            ann = load_catalog_neighbours(conn, MODEL, [q], before=before, after=after, k=K)
                            # the same search with the index off: every paper of the window compared, exactly
                            conn.execute("SET LOCAL enable_indexscan = off")
                            exact = load_catalog_neighbours(conn, MODEL, [q], before=before, after=after, k=K)
                            conn.rollback()  # the searches' settings end with the transaction
                            recalls.append(len(set(ann) & set(exact)) / max(1, len(exact)))
                        print(
                            f"{window:16s} {kind:22s} recall@{K}: mean {np.mean(recalls):.3f}, "
                            f"lowest {np.min(recalls):.2f} ({len(recalls)} queries)"
                        )
        finally:
            db.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
