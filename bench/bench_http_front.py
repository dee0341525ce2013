"""Benchmark: the HTTP front of ``paperping run --http`` under hostile clients.

A server process runs PaperPing's bolt app behind the front (``bot/slack/http_front.py``) on an embedded Postgres.
This script, the client, measures:

- the server's memory (RSS) before and after an unsigned POST that declares 150 MB and sends it;
- the server's threads while 300 clients hold half-sent requests;
- the time to answer a signed event (``url_verification``) while those 300 are held, median of 20;
- the same median of 50 with and without scrapers hammering ``/metrics`` (``--scrapers`` at once, back to back),
  and how many scrapes they made; and with one client scraping ten times a second.

    python -m bench.bench_http_front
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SECRET = "bench-signing-secret"


def serve(home: Path) -> None:
    from bot.app import build_app
    from bot.app_context import AppContext
    from bot.slack.http_front import HttpFront
    from socialrag.config import Settings
    from socialrag.db import migrated_database, start_embedded
    from tests.support.harness import lab_state
    from tests.support.slack_standin import SlackStandIn

    uri, server = start_embedded(home / "pgdata")
    db = migrated_database(uri, "front", server)
    slack = SlackStandIn(lab_state()).start()  # bolt asks auth.test of the token when it is built
    settings = Settings(
        home=home, offline=True, slack_bot_token="xoxb-bench", slack_signing_secret=SECRET, slack_api_url=slack.url
    )
    ctx = AppContext(settings, db)
    app, page = build_app(settings, db, ctx), ctx.metrics.page(None)
    # every client of this benchmark comes from 127.0.0.1: no cap per address, or the held requests would shut
    # out the signed events it times (the cap has its test in tests/slack/test_http_limits.py)
    front = HttpFront(app, "127.0.0.1", 0, signing_secret=SECRET, db=db, metrics=page, peer_connections=0).start()
    print(front.port, flush=True)
    sys.stdin.read()  # until the client closes it
    front.stop()
    slack.stop()


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def _huge_body(port: int, size: int) -> bytes:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(f"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n".encode())
    block = b"x" * 1_000_000
    try:
        for _ in range(size // len(block)):
            sock.sendall(block)
    except OSError:
        pass  # refused and closed: the rest is never sent
    try:
        answer = sock.recv(200)
    except OSError:
        answer = b""
    sock.close()
    return answer.split(b"\r\n", 1)[0]


def _signed_event(port: int) -> float:
    from tests.support.service_lab import signed_post

    body = json.dumps({"type": "url_verification", "challenge": "c", "token": "x"})
    started = time.perf_counter()
    answer = signed_post(f"http://127.0.0.1:{port}/slack/events", body, "application/json", SECRET)
    assert answer.status_code == 200, answer.status_code
    return time.perf_counter() - started


def _under_scrapes(port: int, scrapers: int, pause: float = 0.0) -> tuple[float, float, int]:
    """Median event time (of 50) without, then with ``scrapers`` threads scraping ``/metrics`` (``pause`` seconds
    between two scrapes of one thread; 0: back to back)."""
    import threading

    import httpx

    quiet = statistics.median(_signed_event(port) for _ in range(50))
    stop, scrapes = threading.Event(), [0]

    def scrape() -> None:
        with httpx.Client(timeout=10) as client:
            while not stop.is_set():
                client.get(f"http://127.0.0.1:{port}/metrics")
                scrapes[0] += 1
                stop.wait(pause)

    threads = [threading.Thread(target=scrape) for _ in range(scrapers)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    busy = statistics.median(_signed_event(port) for _ in range(50))
    stop.set()
    for t in threads:
        t.join()
    return quiet, busy, scrapes[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("serve", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--slow", type=int, default=300, help="half-sent requests to hold")
    parser.add_argument("--scrapers", type=int, default=4, help="clients scraping /metrics back to back")
    args = parser.parse_args()
    if args.serve == "serve":
        serve(args.home)
        return
    with tempfile.TemporaryDirectory(prefix="paperping-front-") as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_http_front", "serve", "--home", tmp],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(os.environ),
        )
        assert proc.stdout is not None and proc.stdin is not None
        port = int(proc.stdout.readline())
        quiet = statistics.median(_signed_event(port) for _ in range(20))
        rss0, threads0 = _status(proc.pid, "VmRSS"), _status(proc.pid, "Threads")
        first_line = _huge_body(port, 150_000_000)
        time.sleep(1.0)
        rss1 = _status(proc.pid, "VmRSS")
        slow = []
        for _ in range(args.slow):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Le")
            slow.append(sock)
        time.sleep(1.0)
        threads1 = _status(proc.pid, "Threads")
        held = statistics.median(_signed_event(port) for _ in range(20))
        for sock in slow:
            sock.close()
        plain, scraped, scrapes = _under_scrapes(port, args.scrapers)
        paced = _under_scrapes(port, 1, 0.1)
        proc.stdin.close()
        proc.wait(timeout=60)
    print(
        f"unsigned 150 MB POST: answered {first_line.decode(errors='replace')!r}; "
        f"server RSS {rss0 / 1024:.0f} MB before, {rss1 / 1024:.0f} MB after"
    )
    print(f"{args.slow} half-sent requests held: server threads {threads0} before, {threads1} while held")
    print(
        f"signed event answered in {quiet * 1000:.1f} ms (median of 20) when idle, "
        f"{held * 1000:.1f} ms while the {args.slow} are held"
    )
    print(
        f"/metrics: signed event answered in {plain * 1000:.1f} ms (median of 50) with no scraper, "
        f"{scraped * 1000:.1f} ms while {args.scrapers} clients scraped back to back ({scrapes} scrapes); "
        f"ratio {scraped / plain:.2f}"
    )
    print(
        f"/metrics: {paced[0] * 1000:.1f} ms with no scraper, {paced[1] * 1000:.1f} ms while one client scraped ten "
        f"times a second ({paced[2]} scrapes); ratio {paced[1] / paced[0]:.2f}"
    )


if __name__ == "__main__":
    main()
