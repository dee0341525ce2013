"""Benchmark: a question over twenty channels (PaperPing's Messages tab with no channel in view) keeps to its time.

``python -m bench.bench_panel [--stall 45]`` imports the project's five real histories four times over, as twenty
channels of an embedded Postgres that one member is in (about 1,900 shares), then asks, as the Messages tab does
(``ask_memory`` with ``ANSWER_SECONDS`` and an LLM client with that deadline), "what have we read about
attention?" over all twenty:

1. with a model that answers at once;
2. with a model that stalls ``--stall`` seconds, and, at the same moment, another member's question about one
   channel (as `/paperping ask` asks it, with its own deadline), in a second thread.

It prints each answer's seconds, how many channels were searched, and whether it has a written answer. Goal:
every answer within 30 s (Slack's part, a few Web API calls, comes on top).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_ask import build

TEAM = "T0PANEL"
COPIES = 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stall", type=float, default=45.0, help="seconds the stalled model takes to answer")
    args = parser.parse_args()
    from bot.delivery.ask_answers import ANSWER_SECONDS
    from socialrag.db import migrated_database, start_embedded
    from socialrag.knowledge.embed import Embedder
    from socialrag.recommender import ask_memory
    from socialrag.recommender.explain.llm import LLMClient
    from tests.support.openai_standin import OpenAIStandIn

    model = OpenAIStandIn(lambda prompt: "The group read [1].")
    tmp = Path(tempfile.mkdtemp(prefix="paperping-panel-"))
    uri, server = start_embedded(tmp / "pgdata")
    db = migrated_database(uri, "panel")
    llm = LLMClient(model="stand-in", base_url=model.base_url, api_key=None)
    embedder = Embedder()

    def encode(text: str) -> np.ndarray:
        return np.asarray(embedder.encode([text])[0], dtype=np.float32)

    def ask(channels: list[str], asker: str, question: str, out: dict[str, Any]) -> None:
        started = time.monotonic()
        until = started + ANSWER_SECONDS
        with db.connection() as conn:
            answer = ask_memory(
                conn, embedder.model_name, encode, TEAM, channels, asker, question, llm.with_deadline(until),
                datetime.now(UTC), until=until,
            )  # fmt: skip
        out.update(seconds=time.monotonic() - started, answer=answer)

    def show(label: str, out: dict[str, Any]) -> None:
        answer = out["answer"]
        searched = f"{len(answer.channels)} of {len(answer.channels) + answer.unsearched} channels"
        written = "written answer" if answer.text else f"no written answer ({answer.note})"
        print(f"{label:<52} {out['seconds']:6.1f} s   {searched:<16} {written}")

    try:
        _, channels = build(db, tmp, team=TEAM, copies=COPIES, also=("U0ASKER",))
        encode("warm the model")
        quick: dict[str, Any] = {}
        ask(channels, "U0ASKER", "what have we read about attention?", quick)
        show("20 channels, a model that answers at once", quick)
        model.delay = args.stall
        stalled: dict[str, Any] = {}
        other: dict[str, Any] = {}
        meanwhile = threading.Thread(
            target=ask, args=([channels[0]], "U0OTHER", "what have we read about dialogue?", other)
        )
        panel = threading.Thread(target=ask, args=(channels, "U0ASKER", "what have we read about tables?", stalled))
        panel.start()
        meanwhile.start()
        panel.join()
        meanwhile.join()
        show(f"20 channels, a model that stalls {args.stall:g} s", stalled)
        show("meanwhile, another member's question on one channel", other)
    finally:
        llm.close()
        model.stop()
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
