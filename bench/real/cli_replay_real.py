"""The real histories replayed week by week through the command line, beside ``bench.real.replay_real``'s replay.

``python -m bench.real.cli_replay_real --home DIR [--only NAME]`` does what someone judging PaperPing from outside
would do with a group's history: it writes each history of ``tests/data/real_histories/`` as a Slack export (one
message a choice, linking the paper in the ACL Anthology, by the member's pseudonym, at its time), runs
``paperping import-export`` on it and ``paperping catalog import`` of the 18,332 ACL Anthology papers (vectors from
the embedding cache every home shares), and then, every week of the replay, ``paperping refit CHANNEL --as-of T``
and ``paperping recommend CHANNEL --json --as-of T --window-days 365 --top 50``. It prints the same figures as
``bench.cli_replay`` does for the simulated channels: the replay (as ``bench.real.replay_real`` runs it), the
same with variety, the commands, and the commands less each replay, step by step.

The home is built on the first run and reused after (its stored fits are deleted first); it is a home of its own,
never a lab's.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.cli_replay import beside_the_replay, command, environment, print_beside
from bench.real import replay_real as rr
from bench.replay_eval import bench_home
from tests.support.exports import msg, user, write_export

WINDOW_DAYS = 365


def channel_ids(names: list[str]) -> dict[str, str]:
    return {name: f"CR{k + 1}" for k, name in enumerate(names)}


def write_histories(path: Path, names: list[str]) -> Path:
    """The histories as one Slack export: a channel each, a message each choice."""
    channels: dict[str, tuple[str, list[str], list[dict[str, Any]]]] = {}
    members: set[str] = set()
    for name, cid in channel_ids(names).items():
        choices = [json.loads(line) for line in (rr.HISTORIES / f"{name}.jsonl").read_text().splitlines() if line]
        messages = [
            # a microsecond apart, so that choices of one second are messages of their own
            msg(datetime.fromisoformat(c["at"]).timestamp() + k * 1e-6, f"U{c['member']}", link(c["acl_id"]))
            for k, c in enumerate(choices)
        ]
        seen = sorted({f"U{c['member']}" for c in choices})
        members.update(seen)
        channels[name] = (cid, seen, messages)
    return write_export(path, channels, [user(m, m[1:].lower()) for m in sorted(members)])


def link(acl_id: str) -> str:
    return f"<https://aclanthology.org/{acl_id}/>"


def open_real_home(home: Path, names: list[str]) -> tuple[Any, Any]:
    """The database under ``home`` with the histories and the catalog imported through the commands (first run)."""
    from socialrag.db import migrated_database, start_embedded

    reuse = bench_home(home, "histories")
    uri, server = start_embedded(home / "pgdata")
    db = migrated_database(uri, "histories")
    if not reuse:
        with environment(db.conninfo, home):
            export = write_histories(home / "histories.zip", names)
            print(command("import-export", str(export), "--team-domain", "histories").strip().splitlines()[-1])
            print(command("catalog", "import", str(rr.CATALOG)).strip().splitlines()[-1])
        (home / "bench-built-histories").touch()
    return db, server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a home of its own, built on the first run")
    parser.add_argument("--only", default=None, help="one history's name")
    args = parser.parse_args()
    names = sorted(p.stem for p in rr.HISTORIES.glob("*.jsonl"))
    for name in names:
        rr.check(rr.HISTORIES / f"{name}.jsonl")
    rows = rr.load_catalog()
    vectors = rr.load_vectors(rows)
    db, server = open_real_home(args.home, names)
    try:
        with environment(db.conninfo, args.home):
            for name, cid in channel_ids(names).items():
                if args.only not in (None, name):
                    continue
                with db.connection() as conn:
                    conn.execute("DELETE FROM channel_rankers WHERE channel_id = %s", (cid,))
                history, _ = rr.history_of(name, rows, vectors)
                beside = beside_the_replay(history, cid, WINDOW_DAYS, lambda pid: rows[pid - 1]["acl_id"])
                print_beside(name, beside, WINDOW_DAYS)
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
