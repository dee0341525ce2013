"""Benchmark: PaperPing's embedding step against calling ``SentenceTransformer.encode`` directly.

``python -m bench.bench_embed [--papers 1000] [--runs 3] [--device auto|cpu|cuda] [--model NAME]`` imports that many ACL
Anthology papers into a fresh catalog, then times (a) ``encode`` on exactly the texts PaperPing would embed
and (b) ``embed_pending`` (read texts, encode, write vectors to pgvector), alternating, and prints both rates,
the median ratio (target: at most 1.10) and what a second, unchanged re-index embeds (target: nothing).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import shutil
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the 3,002 ACL Anthology papers the demo ships; --data takes any catalog file of the same form
ACL = ROOT / "bot" / "demo" / "data" / "catalog.jsonl.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=ACL)
    parser.add_argument("--device", default="auto", help="as PAPERPING_EMBED_DEVICE (auto: a CUDA GPU when present)")
    parser.add_argument("--model", default=None, help="as PAPERPING_EMBED_MODEL (default: the bundled MiniLM-L6)")
    args = parser.parse_args()
    from socialrag.db import migrated_database, start_embedded
    from socialrag.knowledge.embed import Embedder, embed_pending
    from socialrag.knowledge.papers.local_catalog import import_catalog
    from socialrag.storage.embeddings import load_pending

    home = Path(tempfile.mkdtemp(prefix="paperping-bench-"))
    subset = home / "catalog.jsonl.gz"
    with gzip.open(args.data, "rt") as src, gzip.open(subset, "wt") as dst:
        dst.writelines(itertools.islice(src, args.papers))
    uri, server = start_embedded(home / "pgdata")
    embedder = Embedder(args.model, device=args.device) if args.model else Embedder(device=args.device)
    embedder.encode(["warm up the model"] * 64)
    print(f"device: {embedder.device}")
    direct_rates, ours_rates = [], []
    try:
        for run in range(args.runs):
            name = f"bench_embed_{run}"
            db = migrated_database(uri, name)
            import_catalog(db, subset)
            with db.connection() as conn:
                texts = [t for _, t, _, _ in load_pending(conn, embedder.model_name)]
            t = time.perf_counter()
            embedder.encode(texts, batch_size=64)
            direct = time.perf_counter() - t
            t = time.perf_counter()
            done = embed_pending(db, embedder, batch_size=64)
            ours = time.perf_counter() - t
            direct_rates.append(len(texts) / direct)
            ours_rates.append(done.embedded / ours)
            print(
                f"run {run + 1}: encode() {len(texts) / direct:.1f} papers/s, PaperPing {done.embedded / ours:.1f} "
                f"papers/s, ratio {ours / direct:.3f}"
            )
        t = time.perf_counter()
        again = embed_pending(db, embedder)
        print(
            f"re-index of unchanged papers: {again.embedded} embedded, {again.unchanged} unchanged "
            f"in {time.perf_counter() - t:.2f}s"
        )
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)
    ratios = [d / o for d, o in zip(direct_rates, ours_rates, strict=True)]
    print(
        f"median: encode() {statistics.median(direct_rates):.1f} papers/s, PaperPing "
        f"{statistics.median(ours_rates):.1f} papers/s, time ratio {statistics.median(ratios):.3f} (target <= 1.10)"
    )


if __name__ == "__main__":
    main()
