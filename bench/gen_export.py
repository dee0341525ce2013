"""Write a synthetic Slack workspace export for benchmarks.

``python -m bench.gen_export OUT.zip --messages 200000``: channels of chatter in which 5% of the messages
share a paper link (in the link forms people use), a third of those open a thread, and most get reactions.
"""

from __future__ import annotations

import argparse
import json
import random
import zipfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

WORDS = [
    "model",
    "data",
    "attention",
    "results",
    "paper",
    "method",
    "training",
    "baseline",
    "eval",
    "benchmark",
    "transformer",
    "graph",
    "retrieval",
    "agents",
    "group",
    "social",
    "slack",
    "study",
    "users",
    "interface",
    "prompt",
    "language",
    "vision",
    "robust",
]
LINK_FORMS = (
    "<https://arxiv.org/abs/{a}|{t}>",
    "https://arxiv.org/pdf/{a}v2.pdf",
    "<https://huggingface.co/papers/{a}>",
    "<https://aclanthology.org/2020.acl-main.{n}/|{t}>",
    "https://doi.org/10.1145/3313831.{n}",
    "<https://openreview.net/forum?id=Xy{n}Zq|{t}>",
)
EMOJI = ("+1", "heart", "eyes", "fire", "-1", "tada", "thinking_face", "confused")


def _text(rng: random.Random, k: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(k))


def build_messages(n: int, users: list[str], rng: random.Random, t0: float) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    ts = t0
    while len(out) < n:
        ts += rng.uniform(30, 600)
        user = rng.choice(users)
        if rng.random() < 0.05:
            paper = rng.randrange(100000)
            link = rng.choice(LINK_FORMS).format(a=f"23{paper % 12 + 1:02d}.{paper:05d}", n=paper, t=_text(rng, 4))
            m: dict[str, Any] = {"type": "message", "user": user, "ts": f"{ts:.6f}", "text": f"{_text(rng, 8)} {link}"}
            if rng.random() < 0.8:
                m["reactions"] = [{"name": e, "users": rng.sample(users, 2), "count": 2} for e in rng.sample(EMOJI, 2)]
            out.append(m)
            if rng.random() < 0.33:
                replies = rng.randint(1, 4)
                m.update(thread_ts=m["ts"], reply_count=replies)
                for r in range(replies):
                    out.append(
                        {
                            "type": "message",
                            "user": rng.choice(users),
                            "ts": f"{ts + r + 1:.6f}",
                            "thread_ts": m["ts"],
                            "parent_user_id": user,
                            "text": _text(rng, 12),
                        }
                    )
                ts += replies + 1
        else:
            out.append({"type": "message", "user": user, "ts": f"{ts:.6f}", "text": _text(rng, rng.randint(3, 25))})
    return out[:n]


def write_export(path: Path, messages: int, channels: int = 20, seed: int = 7) -> Path:
    rng = random.Random(seed)
    users = [f"U{i:05d}" for i in range(200)]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "users.json",
            json.dumps(
                [
                    {
                        "id": u,
                        "team_id": "TBENCH",
                        "name": u.lower(),
                        "real_name": f"Member {u}",
                        "profile": {"display_name": u.lower()},
                    }
                    for u in users
                ]
            ),
        )
        meta = [{"id": f"C{i:05d}", "name": f"papers-{i}", "members": rng.sample(users, 40)} for i in range(channels)]
        zf.writestr("channels.json", json.dumps(meta))
        for ch in meta:
            days: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for m in build_messages(messages // channels, users, rng, 1_600_000_000.0):
                days[datetime.fromtimestamp(float(m["ts"]), UTC).strftime("%Y-%m-%d")].append(m)
            for day, items in sorted(days.items()):
                zf.writestr(f"{ch['name']}/{day}.json", json.dumps(items))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--channels", type=int, default=20)
    args = parser.parse_args()
    write_export(args.out, args.messages, args.channels)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB, {args.messages} messages)")


if __name__ == "__main__":
    main()
