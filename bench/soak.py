"""Soak run: PaperPing under faults, against local stand-ins only (nothing leaves the machine).

``python -m bench.soak [--events 3000] [--channels 30] [--seconds 90]`` starts an embedded Postgres, the
Slack app on a local port, stand-ins of the Slack Web API, Semantic Scholar (answering 500, 429, HTML, a
trickle of a byte at a time, pages far larger than asked for, or records with fields of the wrong shape, at
random) and an OpenAI-compatible model (timing out at random), and three worker processes. Then, at once:
it sends thousands of signed events (a tenth of them sent again, as Slack retries, a hundredth malformed);
it kills one worker with SIGKILL every few seconds and starts another; it restarts Postgres once. It prints
events lost, duplicate posts, missed slots and unhandled exceptions: all four must be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from tests.support.scholar_standin import source_env
from tests.support.service_lab import slack_headers

ROOT = Path(__file__).resolve().parents[1]
SECRET = "soak-signing-secret"
TEAM = "T0SOAK"


def _recommended(n: int, rng: random.Random, malformed: bool) -> bytes:
    """A recommendations answer of ``n`` papers; ``malformed``: fields of the wrong shape among good records."""
    papers: list[Any] = []
    for i in range(n):
        paper: dict[str, Any] = {"paperId": f"soak{rng.randrange(10**9)}", "title": f"Soak paper {i}", "year": 2026}
        if malformed and i % 2:
            paper |= rng.choice(
                [
                    {"authors": 7},
                    {"externalIds": [1, 2]},
                    {"title": ["x"]},
                    {"authors": [{"name": "A", "affiliations": 3}]},
                ]
            )
        papers.append(paper)
    if malformed:
        papers += [None, "not a paper", 42]
    return json.dumps({"recommendedPapers": papers}).encode()


class FlakyScholar:
    """Semantic Scholar's recommendation endpoints, answering at random: 500, 429, HTML, an empty list, a body
    that trickles in a byte every half second, a page of 5,000 papers (the client asked for 100), or records
    with fields of the wrong shape."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        lock = threading.Lock()
        self.answers: dict[str, int] = {}
        answers = self.answers

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                with lock:
                    kind = rng.choice(["500", "429", "html", "ok", "trickle", "oversized", "malformed"])
                    answers[kind] = answers.get(kind, 0) + 1
                    body = {
                        "oversized": _recommended(5000, rng, False),
                        "malformed": _recommended(6, rng, True),
                    }.get(kind, b'{"recommendedPapers": []}')
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                status, body, ctype = {
                    "500": (500, b'{"error": "internal"}', "application/json"),
                    "429": (429, b'{"message": "Too Many Requests"}', "application/json"),
                    "html": (200, b"<html><body>Service Unavailable</body></html>", "text/html"),
                }.get(kind, (200, body, "application/json"))
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Retry-After", "1")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    if kind == "trickle":  # no single read waits long, but the whole answer takes 13 s
                        for byte in body:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(0.5)
                    else:
                        self.wfile.write(body)
                except OSError:  # the client gave up on the trickle, as it should
                    pass

            do_GET = do_POST = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"


def worker_main(stop_file: Path) -> None:
    """One worker process: tick until the stop file appears."""
    from bot.cli.process import build_indexer, build_worker
    from bot.slack.pacer import SlackPacer
    from socialrag.config import Settings
    from socialrag.db import Database
    from socialrag.recommender.serve.service import Recommender

    settings = Settings.from_env()
    db = Database(str(settings.database_url))
    recommender = Recommender(settings, db)
    worker = build_worker(settings, db, recommender, SlackPacer())
    indexer = build_indexer(settings, db, recommender)  # as in `paperping run`: posting and indexing
    worker.lease = timedelta(seconds=6)
    worker.retry_after = timedelta(seconds=2)
    worker.max_backoff = timedelta(seconds=8)
    while not stop_file.exists():
        try:
            worker.tick()
            indexer.run(budget_seconds=2.0)
        except Exception as exc:  # the database restarting between ticks: try again
            print(f"tick failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        time.sleep(0.3)
    recommender.close()


def signed_post(client: httpx.Client, url: str, body: str) -> int:
    """One signed event on a kept connection; 0 when the request itself failed."""
    headers = slack_headers(body, "application/json", SECRET)
    try:
        return client.post(url, content=body, headers=headers, timeout=15).status_code
    except httpx.HTTPError:
        return 0


def build_events(n: int, rng: random.Random) -> tuple[list[dict[str, Any]], set[tuple[str, str]]]:
    """Signed-event bodies (shares, replies and reactions in ten channels, a hundredth malformed) and the
    (channel, ts) of every share that must end up stored."""
    events: list[dict[str, Any]] = []
    expected: set[tuple[str, str]] = set()
    base = 1_700_000_000
    shares: list[tuple[str, str]] = []
    for i in range(n):
        channel = f"CE{i % 10}"
        ts = f"{base + i}.{i % 1000000:06d}"
        roll = rng.random()
        if roll < 0.01:
            event: dict[str, Any] = {
                "type": "message",
                "channel": channel,
                "user": ["U1"],
                "ts": "1e30",
                "text": "<https://arxiv.org/abs/1706.03762>",
                "reply_count": "many",
            }
        elif roll < 0.6 or not shares:
            arxiv = f"{2001 + i % 20:04d}.{10000 + i:05d}"
            event = {
                "type": "message",
                "channel": channel,
                "user": f"U{i % 7}",
                "ts": ts,
                "text": f"have a look <https://arxiv.org/abs/{arxiv}|paper {i}>",
            }
            shares.append((channel, ts))
            expected.add((channel, ts))
        elif roll < 0.8:
            root_channel, root = rng.choice(shares)
            event = {
                "type": "message",
                "channel": root_channel,
                "user": f"U{i % 7}",
                "ts": ts,
                "text": "agreed",
                "thread_ts": root,
            }
        else:
            root_channel, root = rng.choice(shares)
            event = {
                "type": "reaction_added",
                "user": f"U{i % 7}",
                "reaction": "+1",
                "event_ts": ts,
                "item": {"type": "message", "channel": root_channel, "ts": root},
            }
        events.append(
            {
                "type": "event_callback",
                "team_id": TEAM,
                "api_app_id": "A1",
                "event": event,
                "event_id": f"EvSoak{i:06d}",
                "event_time": base + i,
            }
        )
    return events, expected


def send_events(url: str, events: list[dict[str, Any]], rng: random.Random, stats: dict[str, int]) -> None:
    """Send each event, a tenth of them twice (Slack's retries); one answered with an error is sent again,
    as Slack does, up to three times."""
    with httpx.Client() as client:
        for event in events:
            body = json.dumps(event)
            copies = 2 if rng.random() < 0.1 else 1
            stats["retries"] += copies - 1
            for _ in range(copies):
                for attempt in range(4):
                    status = signed_post(client, url, body)
                    if status == 200:
                        break
                    stats["errors answered"] += 1
                    time.sleep(1.0 + attempt)
                else:
                    stats["never acknowledged"] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--channels", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("worker", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("stop_file", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "worker":
        worker_main(Path(args.stop_file))
        return
    run(args)


def run(args: argparse.Namespace) -> None:
    from bot.app import build_app
    from bot.app_context import AppContext
    from bot.demo.workflow import DATA, PrecomputedEmbedder
    from bot.slack.http_front import HttpFront
    from socialrag import storage
    from socialrag.config import Settings
    from socialrag.db import migrated_database, start_embedded
    from socialrag.knowledge.embed import embed_pending
    from socialrag.knowledge.papers.local_catalog import import_catalog
    from tests.support.multiworker import add_due_channels
    from tests.support.openai_standin import OpenAIStandIn, chain_answer
    from tests.support.slack_standin import SlackStandIn, SlackState

    rng = random.Random(args.seed)
    home = Path(tempfile.mkdtemp(prefix="paperping-soak-"))
    uri, server = start_embedded(home / "pgdata")
    db = migrated_database(uri, "soak")
    import_catalog(db, DATA / "catalog.jsonl.gz")
    embed_pending(db, PrecomputedEmbedder())
    now = datetime.now(UTC)
    channels = add_due_channels(db, args.channels, now)
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, TEAM, domain="soak")
        # the shared papers get Semantic Scholar ids, so that the flaky recommendations source is asked
        conn.execute(
            "INSERT INTO paper_ids (paper_id, scheme, value) SELECT paper_id, 's2', 'S2-' || paper_id"
            " FROM message_papers ON CONFLICT DO NOTHING"
        )
        conn.execute("UPDATE channel_settings SET sources = '{catalog,semanticscholar}', frequency = 'weekly'")
    slack = SlackStandIn(
        SlackState(
            channels={c: {"id": c, "name": c} for c in channels}
            | {f"CE{i}": {"id": f"CE{i}", "name": f"events-{i}"} for i in range(10)}
        )
    ).start()
    llm = OpenAIStandIn(chain_answer)
    scholar = FlakyScholar(args.seed)
    env = {
        **os.environ,
        "DATABASE_URL": db.conninfo,
        "SLACK_API_URL": slack.url,
        "SLACK_BOT_TOKEN": "xoxb-soak",
        "SLACK_SIGNING_SECRET": SECRET,
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "k",
        **source_env(scholar.url),
        "PAPERPING_LLM_TIMEOUT": "1",
        "PAPERPING_HTTP_TIMEOUT": "2",
        "PAPERPING_HOME": str(home),
    }
    settings = Settings.from_env(env)
    app = build_app(settings, db, AppContext(settings, db))
    web = HttpFront(app, "127.0.0.1", 0, signing_secret=settings.slack_signing_secret, db=db).start()  # as --http
    url = f"http://127.0.0.1:{web.port}/slack/events"

    stop_file = home / "stop"
    logs: list[Path] = []

    def start_worker() -> subprocess.Popen[bytes]:
        log = home / f"worker-{len(logs)}.log"
        logs.append(log)
        return subprocess.Popen(
            [sys.executable, "-m", "bench.soak", "worker", str(stop_file)],
            cwd=ROOT,
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )

    events, expected = build_events(args.events, rng)
    stats = {"retries": 0, "errors answered": 0, "never acknowledged": 0, "kills": 0}
    workers = [start_worker() for _ in range(3)]
    sender = threading.Thread(target=send_events, args=(url, events, random.Random(args.seed + 1), stats))
    started = time.monotonic()
    sender.start()
    restarted = False
    while time.monotonic() - started < args.seconds or sender.is_alive():
        time.sleep(3.0)
        llm.delay = rng.choice([0.0, 0.0, 2.0])  # over PAPERPING_LLM_TIMEOUT: the call times out
        victim = rng.randrange(len(workers))
        workers[victim].send_signal(signal.SIGKILL)
        workers[victim].wait()
        stats["kills"] += 1
        workers[victim] = start_worker()
        if not restarted and time.monotonic() - started > args.seconds / 2:
            server._stop()  # Postgres goes away for a moment, under load
            time.sleep(1.0)
            server.ensure_postgres_running()
            restarted = True
    llm.delay = 0.0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # let the last slots be served, with no more faults
        posted = {p["channel"] for p in slack.posts if p.get("metadata")}
        if set(channels) <= posted:
            break
        time.sleep(1.0)
    stop_file.touch()
    for w in workers:
        w.wait(timeout=60)
    web.stop()

    with db.connection() as conn:
        stored = {(r[0], r[1]) for r in conn.execute("SELECT channel_id, ts FROM messages").fetchall()}
    per_channel: dict[str, int] = {}
    for post in slack.posts:
        if post.get("metadata"):
            per_channel[post["channel"]] = per_channel.get(post["channel"], 0) + 1
    tracebacks = sum(log.read_text(errors="replace").count("Traceback") for log in logs)
    lost = len(expected - stored)
    duplicates = sum(n - 1 for n in per_channel.values() if n > 1)
    missed = len(set(channels) - set(per_channel))
    malformed = sum(1 for e in events if e["event"].get("ts") == "1e30")
    print(
        f"{len(events)} events ({stats['retries']} sent twice as retries, {malformed} malformed), "
        f"{args.channels} due channels, 3 workers, {stats['kills']} SIGKILLs, Postgres restarted "
        f"{int(restarted)} time, {stats['errors answered']} error answers resent"
    )
    print("Semantic Scholar answered: " + ", ".join(f"{n} {kind}" for kind, n in sorted(scholar.answers.items())))
    print(f"events lost:           {lost}")
    print(f"duplicate posts:       {duplicates}")
    print(f"missed slots:          {missed}")
    print(f"unhandled exceptions:  {tracebacks}")
    server.cleanup()
    shutil.rmtree(home, ignore_errors=True)
    sys.exit(0 if lost == duplicates == missed == tracebacks == 0 else 1)


if __name__ == "__main__":
    main()
