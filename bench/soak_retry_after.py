"""Soak: one long ``Retry-After`` from Semantic Scholar, and every process of ``paperping run`` asking meanwhile.

``python -m bench.soak_retry_after [--retry-after 90] [--processes 3] [--every 0.5] [--after 60]`` starts an
embedded Postgres and a local stand-in of Semantic Scholar's batch lookup that answers the first request ``429``
with ``Retry-After: N`` and every later one at once. Then ``--processes`` processes each look a paper up every
``--every`` seconds, as the index worker does (``ask_sources`` with the sources' shared pace, the sources held
after failures in a row skipped, each outcome recorded), until ``--after`` seconds past the Retry-After.

It prints, per process: lookups tried, answered, queued (not sent: the turn is past the request's deadline, which
is not the source failing) and failed; when its first answer after the 429 came; the longest gap between two
answers after it; and the source's failures in a row and hold at the end. Goal: lookups resume about N seconds
after the 429 in every process (within a few seconds, not minutes later), and none is refused after that.
Nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import shutil
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class OneRetryAfter:
    """Semantic Scholar's batch lookup, rate-limited once: the first request, and every other one in the next
    ``retry_after`` seconds, is answered 429 with ``Retry-After`` (the seconds still to wait); after that, a paper
    at once."""

    def __init__(self, retry_after: int) -> None:
        self.first_at: float | None = None
        self.requests = 0
        self.refused = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                asked = json.loads(self.rfile.read(length) or b"{}").get("ids") or []
                outer.requests += 1
                if outer.first_at is None:
                    outer.first_at = time.time()
                left = outer.first_at + retry_after - time.time()
                if left > 0:
                    outer.refused += 1
                    body, status = b'{"message": "Too Many Requests"}', 429
                else:
                    papers = [{"paperId": f"s2{i}", "title": f"Paper {x}", "year": 2026} for i, x in enumerate(asked)]
                    body, status = json.dumps(papers).encode(), 200
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if status == 429:
                    self.send_header("Retry-After", str(max(1, round(left))))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"


def worker(uri: str, url: str, every: float, until: float, number: int, out: Any) -> None:
    """One process: a lookup every ``every`` seconds, as the index worker makes it."""
    from socialrag.db import Database
    from socialrag.knowledge.papers.resolve import RefreshResult, ask_sources
    from socialrag.knowledge.papers.semanticscholar import SemanticScholar
    from socialrag.knowledge.shared_pace import DatabasePace
    from socialrag.storage import source_pace

    db = Database(uri)
    s2 = SemanticScholar(url, timeout=20.0, shared=DatabasePace(db))
    log: list[tuple[float, str]] = []  # when each lookup ended, and how
    k = 0
    while time.time() < until:
        k += 1
        now = datetime.now(UTC)
        with db.connection() as conn:
            held = {f.source for f in source_pace.load_failing_sources(conn) if f.held_until and f.held_until > now}
        result = RefreshResult(errors=[])
        asked = time.time()
        found = ask_sources([s2], [{"doi": f"10.1/soak-{number}-{k}"}], result, held=held)
        with db.connection() as conn:
            for source, error in result.outcomes.items():
                source_pace.record_source_outcome(conn, source, error, now)
        if found[0] is not None:
            what = "answered"
        elif held:
            what = "held"
        elif result.errors and "queued" in result.errors[0]:
            what = "queued"
        else:
            what = "failed"
        log.append((time.time(), what))
        time.sleep(max(0.0, every - (time.time() - asked)))
    s2.http.close()
    out.put((number, log))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retry-after", type=int, default=90)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--after", type=float, default=60.0, help="seconds to keep asking after the Retry-After")
    args = parser.parse_args()
    from socialrag.db import migrated_database, start_embedded
    from socialrag.storage import source_pace

    tmp = Path(tempfile.mkdtemp(prefix="paperping-retry-after-"))
    uri, server = start_embedded(tmp / "pgdata")
    db = migrated_database(uri, "retry_after")
    standin = OneRetryAfter(args.retry_after)
    try:
        until = time.time() + args.retry_after + args.after + 2
        out: Any = multiprocessing.get_context("spawn").Queue()
        procs = [
            multiprocessing.get_context("spawn").Process(
                target=worker, args=(db.conninfo, standin.url, args.every, until, n, out)
            )
            for n in range(args.processes)
        ]
        for p in procs:
            p.start()
        logs = dict(out.get(timeout=args.retry_after + args.after + 120) for _ in procs)
        for p in procs:
            p.join()
        first = standin.first_at or 0.0
        print(
            f"429 with Retry-After {args.retry_after} s at t=0; {standin.requests} requests reached the stand-in, "
            f"{standin.refused} of them refused"
        )
        print(f"{'process':<8} {'tried':>6} {'answered':>9} {'queued':>7} {'held':>5} {'failed':>7} "
              f"{'first answer after the 429':>27} {'longest gap after it':>21}")  # fmt: skip
        for n, log in sorted(logs.items()):
            counts = {w: sum(1 for _, x in log if x == w) for w in ("answered", "queued", "held", "failed")}
            answered = [at - first for at, what in log if what == "answered" and at > first]  # when they ended
            resumed = f"{answered[0]:.1f} s" if answered else "never"
            gaps = [b - a for a, b in itertools.pairwise(answered)]
            gap = f"{max(gaps):.1f} s" if gaps else "—"
            print(f"{n:<8} {len(log):>6} {counts['answered']:>9} {counts['queued']:>7} {counts['held']:>5} "
                  f"{counts['failed']:>7} {resumed:>27} {gap:>21}")  # fmt: skip
        with db.connection() as conn:
            health = [h for h in source_pace.load_failing_sources(conn) if h.source == "semanticscholar"]
        state = f"{health[0].failures} failures in a row, held until {health[0].held_until}" if health else "healthy"
        print(f"Semantic Scholar at the end: {state}")
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
