"""Benchmark: reading one paper of 30 pages, fetched from a host on loopback, parsed, kept and embedded.

``python -m bench.bench_fulltext [--runs 5] [--pages 30]`` builds a PDF of that many pages from the real CC BY
paper of ``tests/data/fulltext/`` (its seven pages of body text over and over, then its references, so that every
page carries a publisher's text density), serves it as the ACL Anthology would (a stand-in on a loopback port,
with a robots.txt), and times what the service does for a paper: ``FullTextReader.read`` (robots, the fetch, the
PDF read in its own process, the passages), then saving the passages and embedding them on the bundled model as
the service's job does (each with its heading, the vectors kept). Target: fetch and parse under 10 s on two
cores. It prints each run and the medians.
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tests.support.fulltext_hosts import PDF, Answer, HostStandIn

ACL_ID = "2020.acl-main.1"
BODY_PAGES = 7  # the paper's pages before its references


def build_pdf(pages: int) -> bytes:
    from pypdf import PdfWriter

    body = BODY_PAGES
    writer = PdfWriter()
    while len(writer.pages) < pages - 2:  # a fresh copy of the body each time: pages of their own, not repeats
        writer.append(io.BytesIO(PDF), pages=(0, min(body, pages - 2 - len(writer.pages))))
    writer.append(io.BytesIO(PDF), pages=(body, body + 2))  # then the paper's two pages of references
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pages", type=int, default=30)
    args = parser.parse_args()
    from socialrag import storage
    from socialrag.config import Settings
    from socialrag.db import migrated_database, start_embedded
    from socialrag.knowledge import FullTextWorker
    from socialrag.knowledge.embed import Embedder
    from socialrag.knowledge.papers.fulltext_source import open_fulltext_reader
    from socialrag.models import Paper

    data = build_pdf(args.pages)
    host = HostStandIn().start()
    host.routes[f"/{ACL_ID}.pdf"] = [Answer(200, data, "application/pdf")]
    print(f"a PDF of {args.pages} pages, {len(data) / 1e6:.1f} MB, served from {host.url}")
    settings = Settings.from_env({"ACL_ANTHOLOGY_URL": host.url, "PAPERPING_HTTP_TIMEOUT": "20"})
    home = Path(tempfile.mkdtemp(prefix="paperping-bench-"))
    uri, server = start_embedded(home / "pgdata")
    embedder = Embedder()
    embedder.encode(["warm up the model"] * 8)
    reads, keeps, embeds = [], [], []
    try:
        db = migrated_database(uri, "bench_fulltext")
        with db.connection() as conn:
            paper = Paper(source="bench", ids={"acl": ACL_ID}, title="A 30-page paper")
            (paper_id,) = storage.papers.record_papers(conn, [paper])
        for run in range(args.runs):
            reader = open_fulltext_reader(settings)  # a new reader each run: robots.txt is read again
            assert reader is not None
            t = time.perf_counter()
            reading = reader.read({"acl": ACL_ID})
            reads.append(time.perf_counter() - t)
            reader.close()
            if reading.status != "read":
                raise SystemExit(f"the paper was not read: {reading.status}, {reading.note}")
            t = time.perf_counter()
            with db.connection() as conn:
                storage.fulltext.save_fulltext(
                    conn, paper_id, status="read", kind=reading.kind, source_url=reading.source_url,
                    licence=reading.licence, passages=reading.passages,
                )  # fmt: skip
            keeps.append(time.perf_counter() - t)
            t = time.perf_counter()
            FullTextWorker(db, embedder, None).embed_passages()  # as the service's job embeds them, and keeps them
            embeds.append(time.perf_counter() - t)
            print(
                f"run {run + 1}: fetched and parsed in {reads[-1]:.2f} s ({len(reading.passages)} passages), "
                f"kept in {keeps[-1]:.2f} s, embedded in {embeds[-1]:.2f} s"
            )
    finally:
        host.stop()
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)
    print(
        f"median of {args.runs}: fetch and parse {statistics.median(reads):.2f} s (target under 10 s), keep "
        f"{statistics.median(keeps):.2f} s, embed {statistics.median(embeds):.2f} s; all three "
        f"{statistics.median(r + k + e for r, k, e in zip(reads, keeps, embeds, strict=True)):.2f} s"
    )


if __name__ == "__main__":
    main()
