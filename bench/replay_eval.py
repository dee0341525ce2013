"""Replay evaluation on a simulated lab channel built from real ACL Anthology papers.

``python -m bench.replay_eval [--catalog 3000] [--months 18]`` builds a catalog from the ACL data, writes a
Slack export of a lab channel whose members share recent papers on their own topics (with a drift halfway),
react to each other's shares as their interests say, and reply now and then; imports it, embeds the
catalog with the bundled model (cached under ``bench/out``), and prints ``paperping eval``'s table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.demo.build_data import pub_date

ROOT = Path(__file__).resolve().parents[1]
# the 3,002 ACL Anthology papers the demo ships; --data takes any catalog file of the same form
ACL = ROOT / "bot" / "demo" / "data" / "catalog.jsonl.gz"
TOPICS = {
    "mt": ("machine translation", "translation"),
    "summ": ("summarization", "summary"),
    "qa": ("question answering", "reading comprehension"),
    "dialog": ("dialogue", "conversational"),
    "sent": ("sentiment", "emotion"),
    "ner": ("named entity", "entity recognition"),
    "parse": ("parsing", "dependency"),
    "bias": ("bias", "fairness"),
}
MEMBERS = {  # member -> (topics before the drift, topics after)
    "U01": (("mt",), ("mt", "bias")),
    "U02": (("summ",), ("summ", "qa")),
    "U03": (("qa",), ("dialog",)),
    "U04": (("dialog",), ("dialog", "bias")),
    "U05": (("sent", "ner"), ("ner",)),
    "U06": (("parse",), ("mt",)),
}


def topics_of(d: dict[str, Any]) -> set[str]:
    text = (d["title"] + " " + d["abstract"][:400]).lower()
    return {t for t, words in TOPICS.items() if any(w in text for w in words)}


def load_papers(n: int, seed: int, data: Path = ACL) -> list[dict[str, Any]]:
    with gzip.open(data, "rt") as fh:
        papers = [json.loads(line) for line in fh]
    rng = random.Random(seed)
    rng.shuffle(papers)
    topical = [p for p in papers if topics_of(p)][: n // 2]
    rest = [p for p in papers if not topics_of(p)][: n - len(topical)]
    chosen = topical + rest
    for p in chosen:
        p["publication_date"] = pub_date(p).isoformat()
    return chosen


def simulate(papers: list[dict[str, Any]], months: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    start = datetime(2019, 7, 1, tzinfo=UTC)
    end = start + timedelta(days=30 * months)
    drift = start + (end - start) / 2
    shared: set[str] = set()
    messages: list[dict[str, Any]] = []
    day = start
    while day < end:
        day += timedelta(days=rng.choice([1, 2, 3]))
        member = rng.choice(list(MEMBERS))
        interests = set(MEMBERS[member][0 if day < drift else 1])
        fresh = [
            p
            for p in papers
            if p["acl_id"] not in shared
            and topics_of(p) & interests
            and day.date() - timedelta(days=300) <= date.fromisoformat(p["publication_date"]) < day.date()
        ]
        if not fresh:
            continue
        paper = rng.choice(fresh)
        shared.add(paper["acl_id"])
        ts = day.replace(hour=rng.randint(9, 17)).timestamp()
        msg: dict[str, Any] = {
            "type": "message",
            "user": member,
            "ts": f"{ts:.6f}",
            "text": f"<https://aclanthology.org/{paper['acl_id']}/|{paper['title']}>",
        }
        reactions: dict[str, list[str]] = {}
        for other, (before, after) in MEMBERS.items():
            if other == member:
                continue
            theirs = set(before if day < drift else after)
            if topics_of(paper) & theirs and rng.random() < 0.7:
                reactions.setdefault(rng.choice(["+1", "heart", "fire"]), []).append(other)
            elif rng.random() < 0.08:
                reactions.setdefault(rng.choice(["-1", "eyes"]), []).append(other)
        if reactions:
            msg["reactions"] = [{"name": e, "users": u, "count": len(u)} for e, u in reactions.items()]
        messages.append(msg)
        if rng.random() < 0.3:
            msg.update(thread_ts=msg["ts"], reply_count=1)
            fan = next(iter(reactions.get("+1", [])), None) or rng.choice(list(MEMBERS))
            messages.append(
                {
                    "type": "message",
                    "user": fan,
                    "ts": f"{ts + 600:.6f}",
                    "thread_ts": msg["ts"],
                    "text": "Nice one, the evaluation section is worth a look.",
                }
            )
    return messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalog", type=int, default=3000)
    parser.add_argument("--months", type=int, default=18)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--window-days", type=int, default=365, help="candidates published in the year before")
    parser.add_argument("--home", type=Path, help="keep the database here (a second run reuses it)")
    parser.add_argument("--data", type=Path, default=ACL, help="ACL Anthology JSON lines (default: the demo's)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bot.export import import_export
    from socialrag.db import Database, _with_dbname, ensure_database, start_embedded
    from socialrag.embed import Embedder, embed_pending
    from socialrag.evaluate import evaluate_channel
    from socialrag.papers.catalog import import_catalog
    from tests.exports import user, write_export

    home = args.home or Path(tempfile.mkdtemp(prefix="paperping-replay-"))
    home.mkdir(parents=True, exist_ok=True)
    reuse = (home / "pgdata").exists()
    papers = load_papers(args.catalog, args.seed, args.data)
    catalog = home / "catalog.jsonl"
    catalog.write_text("\n".join(json.dumps(p) for p in papers) + "\n")
    messages = simulate(papers, args.months, args.seed)
    users = [user(u, f"member{u[1:]}") for u in MEMBERS]
    export = write_export(home / "lab.zip", {"nlp-lab": ("C1", list(MEMBERS), messages)}, users)
    uri, server = start_embedded(home / "pgdata")
    try:
        ensure_database(uri, "replay")
        db = Database(_with_dbname(uri, "replay"))
        db.migrate()
        if not reuse:
            import_catalog(db, catalog)
            import_export(db, export, progress=False)
            embed_pending(db, Embedder())
        with db.connection() as conn:
            report = evaluate_channel(conn, "T0LAB", "C1", "all-MiniLM-L6-v2", window_days=args.window_days)
        shares = sum(1 for m in messages if "thread_ts" not in m or m["thread_ts"] == m["ts"])
        print(
            f"simulated #nlp-lab: {shares} shares over {args.months} months, {len(MEMBERS)} members; "
            f"catalog of {len(papers)} ACL Anthology papers\n"
        )
        print(report.table())
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
