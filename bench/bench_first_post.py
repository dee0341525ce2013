"""Benchmark: from inviting PaperPing into a channel with 500 shared papers to its first post, with
``paperping run`` alone.

``python -m bench.bench_first_post [--papers 500] [--runs 1]`` starts an embedded Postgres, stand-ins of the
Slack Web API (``conversations.history`` and ``conversations.replies`` at Slack's Tier 3, one call per 1.2 s,
faster ones answered 429 with Retry-After), Semantic Scholar (one request a second, as with a key; faster ones
answered 429) and arXiv, and ``paperping run --http``. The channel holds a year of shares of ACL Anthology
papers (the demo's catalog), a third of them with a thread reply, most with reactions. It prints, per run and
as medians: the seconds from the invitation to the introduction, to the first recommendation, to the note that
the history is read and to the index being done (each timed when it happens), with the requests each stand-in
answered. Goal: the first grounded post within 60 s, the whole history no slower than before.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from socialrag.db import migrated_database, start_embedded
from tests.support.scholar_standin import ScholarStandIn, load_acl_rows
from tests.support.service_lab import Lab, T
from tests.support.slack_standin import SlackStandIn, SlackState

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "bot" / "demo" / "data" / "catalog.jsonl.gz"
MEMBERS = [f"U{i}" for i in range(1, 9)]


def channel_state(rows: list[dict[str, Any]], papers: int, now: float) -> SlackState:
    state = SlackState()
    state.users = {
        u: {"id": u, "team_id": T, "name": u.lower(), "profile": {"display_name": u.lower()}} for u in MEMBERS
    }
    state.users["UBOT"] = {"id": "UBOT", "team_id": T, "name": "paperping", "is_bot": True, "profile": {}}
    state.channels = {"C1": {"id": "C1", "name": "reading", "is_channel": True, "members": [*MEMBERS, "UBOT"]}}
    messages: list[dict[str, Any]] = []
    for i, row in enumerate(rows[:papers]):
        ts = now - 365 * 86400 + i * (360 * 86400 / papers)
        top: dict[str, Any] = {
            "type": "message",
            "user": MEMBERS[i % len(MEMBERS)],
            "ts": f"{ts:.6f}",
            "text": f"<https://aclanthology.org/{row['acl_id']}/>",
        }
        if i % 5:
            top["reactions"] = [{"name": "+1", "users": [MEMBERS[(i + 1) % len(MEMBERS)]], "count": 1}]
        if i % 3 == 0:
            reply = f"{ts + 900:.6f}"
            top.update(thread_ts=top["ts"], reply_count=1, latest_reply=reply)
            who = MEMBERS[(i + 2) % len(MEMBERS)]
            messages.append({"type": "message", "user": who, "ts": reply, "thread_ts": top["ts"], "text": "nice"})
        messages.append(top)
    state.messages = {"C1": messages}
    return state


def one_run(uri: str, run: int, papers: int, rows: list[dict[str, Any]]) -> dict[str, float]:
    db = migrated_database(uri, f"bench_first_post_{run}")
    home = Path(tempfile.mkdtemp(prefix="paperping-first-post-"))
    slack = SlackStandIn(channel_state(rows, papers, time.time())).start()
    slack.paced = {"conversations.history": 1.2, "conversations.replies": 1.2}
    scholar = ScholarStandIn(rows, min_interval=1.0).start()
    lab = Lab(db.conninfo, home, slack, scholar)
    times: dict[str, float] = {}
    try:
        lab.command("C1", "hours 0-24 every-day")
        started = time.time()
        lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T})

        def indexed() -> bool:
            with db.connection() as conn:
                row = conn.execute("SELECT count(*) FROM index_queue WHERE given_up_at IS NULL").fetchone()
            return row is not None and row[0] == 0

        # each milestone is timed when it happens, in whatever order: the first post need not wait for the rest
        milestones = {
            "introduction": lambda: bool(lab.posts("C1", blocks=False)),
            "first post": lambda: bool(lab.posts("C1", blocks=True)),
            "history read": lambda: any(
                "I read this channel's history" in p["text"] for p in lab.posts("C1", blocks=False)
            ),
            "indexed": lambda: "history read" in times and indexed(),  # the queue is empty before it fills too
        }
        deadline = started + 1800
        while len(times) < len(milestones) and time.time() < deadline:
            for name, reached in milestones.items():
                if name not in times and reached():
                    times[name] = time.time() - started
            time.sleep(0.2)
        missing = [name for name in milestones if name not in times]
        if missing:
            raise SystemExit(f"not reached in 30 minutes: {', '.join(missing)}")
        times = {name: times[name] for name in sorted(times, key=times.__getitem__)}
        history = len(slack.calls_to("conversations.history"))
        replies = len(slack.calls_to("conversations.replies"))
        print(
            f"run {run + 1}: "
            + ", ".join(f"{k} {v:.1f}s" for k, v in times.items())
            + f"; Slack: {history} conversations.history and {replies} conversations.replies calls (429s and "
            f"their retries included); Semantic Scholar: {len(scholar.requests)} requests "
            f"({scholar.rate_limited} answered 429)",
            flush=True,
        )
    finally:
        lab.stop()
        slack.stop()
        scholar.stop()
        shutil.rmtree(home, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, default=500)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    rows = load_acl_rows(CATALOG)
    home = Path(tempfile.mkdtemp(prefix="paperping-bench-"))
    uri, server = start_embedded(home / "pgdata")
    try:
        results = [one_run(uri, run, args.papers, rows) for run in range(args.runs)]
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)
    print(f"median over {args.runs} run(s), {args.papers} shared papers:")
    for key in results[0]:
        print(f"  invitation -> {key}: {statistics.median(r[key] for r in results):.1f}s")


if __name__ == "__main__":
    main()
