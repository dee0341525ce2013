"""Benchmark: the group's memory (`/paperping ask`) on real, dated histories of groups choosing papers.

``python -m bench.bench_ask`` imports the project's five real histories (``tests/data/real_histories/``: a
university NLP reading group's proposals and its conference notes, a lab seminar's talks, two small groups' lists
of summarization and BERT-related papers; sources and licences in ``tests/data/README.md``) as five channels of an
embedded Postgres, each share a member's message linking the ACL Anthology page, with the catalog's titles and
abstracts, embedded as PaperPing embeds.

Then, for every shared paper with an abstract, it asks the paper's channel a question in a member's words that
does not use its title: "what have we read about W1 W2 W3 W4?" with four content words of its abstract that its
title lacks (drawn with a fixed seed), and, for a subset, a paraphrase written by hand. It prints, per history
and in all, hit@3 (the paper among the first three) and MRR for PaperPing's hybrid retrieval (Postgres full-text
and pgvector, combined), for full-text search alone and for vector search alone. Goal: hybrid hit@3 >= 0.9, above
each of the two alone.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
HISTORIES = (
    "clulab-proposals",
    "clulab-conference-notes",
    "summarization-list",
    "antnlp-seminar",
    "bert-related-list",
)
TEAM = "T0ASK"
WORDS = 4
# Questions written by hand for papers of the reading group's proposals, none using words of the title.
PARAPHRASES = {
    "P19-1159": "papers about making language technology treat men and women more fairly",
    "D19-1250": "can a pretrained masked model store facts like a database of relations",
    "N18-2017": "spurious cues that crowd workers leave in entailment datasets",
    "P18-1078": "answering questions when the answer may be in any of several passages of a document",
    "D17-1211": "spotting parody news stories",
    "N18-1100": "assigning billing codes to hospital notes with attention we can interpret",
    "P18-1136": "chatbots that look up a database to book restaurants",
    "D19-1445": "what the attention heads of the transformer encoder actually do",
    "2020.acl-main.442": "unit tests for model capabilities beyond held-out scores",
    "2020.acl-main.740": "continuing to train on in-domain text before fine-tuning",
    "N18-1176": "how people lie in job interviews",
    "C18-1284": "telling whether gossip on social media is true from how people respond to it",
    "Q18-1001": "figuring out the murderer in a television detective series",
    "P18-1254": "EEG brain signals and incremental parsing",
    "2020.insights-1.7": "detecting news articles written by a language model",
    "D17-1308": "word2vec vectors all pointing in the same direction",
}
_WORD = re.compile(r"[a-z]{6,}")
_COMMON_WORDS = """
    abstract approach approaches address achieve achieves across addition additional already although another
    applied applying based better between beyond called cannot capture challenge challenges compared consider
    current datasets demonstrate demonstrates different directly during effective effectively existing
    experiment experimental experiments further general however important improve improved improvement
    improvements improves including information instead introduce learning method methods models moreover
    number obtain outperform outperforms particular performance perform performs present previous problem
    problems propose proposed provide recent results several significant significantly simple single source
    specific state strong studies study system systems through towards traditional various whether within
    without achieved available benchmark benchmarks models paper papers research neural language natural
    english results
"""
_COMMON = frozenset(_COMMON_WORDS.split())


def load_rows(wanted: set[str]) -> dict[str, dict[str, Any]]:
    rows = {}
    with gzip.open(DATA / "acl-anthology-2016-2021.jsonl.gz", "rt") as fh:
        for line in fh:
            row = json.loads(line)
            if row["acl_id"] in wanted:
                rows[row["acl_id"]] = row
    return rows


def question_words(row: dict[str, Any], rng: random.Random) -> list[str]:
    """Four content words of the abstract that the title lacks, in the abstract's order."""
    from socialrag.recommender.retrieve.memory import ASKING_WORDS

    title = set(_WORD.findall(row["title"].lower()))
    words = [w for w in dict.fromkeys(_WORD.findall((row["abstract"] or "").lower()))]
    words = [w for w in words if w not in title and w not in _COMMON and w not in ASKING_WORDS]
    if len(words) < WORDS:
        return []
    picked = sorted(rng.sample(range(len(words)), WORDS))
    return [words[i] for i in picked]


def build(db: Any, tmp: Path) -> dict[str, list[dict[str, str]]]:
    """The histories as channels of ``db``; their choices by history."""
    from bot.slack.workspace_export import import_export
    from socialrag.config import Settings
    from socialrag.knowledge.embed import Embedder, embed_pending
    from socialrag.knowledge.papers.local_catalog import import_catalog
    from tests.support.exports import msg, user, write_export

    histories = {
        name: [json.loads(line) for line in (DATA / "real_histories" / f"{name}.jsonl").read_text().splitlines()]
        for name in HISTORIES
    }
    rows = load_rows({c["acl_id"] for h in histories.values() for c in h})
    catalog = tmp / "catalog.jsonl"
    catalog.write_text("\n".join(json.dumps(r) for r in rows.values()) + "\n")
    import_catalog(db, catalog)
    members = sorted({c["member"] for h in histories.values() for c in h})
    channels = {}
    for k, (name, choices) in enumerate(histories.items()):
        messages = []
        for n, c in enumerate(choices):
            ts = datetime.fromisoformat(c["at"]).astimezone(UTC).timestamp() + n * 0.001
            messages.append(msg(ts, c["member"], f"<https://aclanthology.org/{c['acl_id']}/>"))
        channels[name] = (f"C{k + 1}", members, messages)
    export = write_export(tmp / "histories.zip", channels, [user(m, m.lower()) for m in members])
    import_export(db, export, domain="histories", team_id=TEAM, progress=False)
    embed_pending(db, Embedder(cache=Settings.from_env().embed_cache_dir))
    return histories


def rank_of(ranked: list[int], wanted: int) -> int | None:
    return ranked.index(wanted) + 1 if wanted in ranked else None


def scores(ranks: list[int | None]) -> tuple[float, float]:
    hit3 = sum(1 for r in ranks if r is not None and r <= 3) / len(ranks)
    mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
    return hit3, mrr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    from socialrag.db import migrated_database, start_embedded
    from socialrag.knowledge.embed import Embedder
    from socialrag.recommender.retrieve.context import load_channel_context
    from socialrag.recommender.retrieve.memory import combine, ranked, search_scores

    tmp = Path(tempfile.mkdtemp(prefix="paperping-ask-"))
    uri, server = start_embedded(tmp / "pgdata")
    db = migrated_database(uri, "ask")
    try:
        histories = build(db, tmp)
        rows = load_rows({c["acl_id"] for h in histories.values() for c in h})
        embedder = Embedder()
        rng = random.Random(args.seed)
        results: dict[str, dict[str, list[int | None]]] = {}
        times: list[float] = []
        with db.connection() as conn:
            ids = dict(conn.execute("SELECT value, paper_id FROM paper_ids WHERE scheme = 'acl'").fetchall())
            for k, name in enumerate(HISTORIES):
                channel = f"C{k + 1}"
                ctx = load_channel_context(conn, TEAM, channel, datetime.now(UTC), embedder.model_name)
                asked = []
                for acl in dict.fromkeys(c["acl_id"] for c in histories[name]):
                    words = question_words(rows[acl], rng)
                    if words:
                        asked.append((acl, f"what have we read about {' '.join(words)}?", "words"))
                    if acl in PARAPHRASES and name == "clulab-proposals":
                        asked.append((acl, PARAPHRASES[acl], "by hand"))
                for acl, question, kind in asked:
                    started = time.perf_counter()
                    vector = embedder.encode([question])[0]
                    found = search_scores(conn, ctx, question, vector)
                    hybrid = ranked(combine(found))
                    times.append(time.perf_counter() - started)
                    target = ids[acl]
                    for method, order in (
                        ("hybrid", hybrid),
                        ("full text alone", ranked(found.words)),
                        ("vector alone", ranked(found.meaning)),
                    ):
                        results.setdefault(f"{name} ({kind})", {}).setdefault(method, []).append(rank_of(order, target))
                        results.setdefault("all", {}).setdefault(method, []).append(rank_of(order, target))
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'questions':<44} {'n':>4}   {'hybrid':>13}   {'full text':>13}   {'vector':>13}")
    print(f"{'':<44} {'':>4}   {'hit@3   MRR':>13}   {'hit@3   MRR':>13}   {'hit@3   MRR':>13}")
    for label, by_method in sorted(results.items(), key=lambda x: x[0] == "all"):
        cells = []
        for method in ("hybrid", "full text alone", "vector alone"):
            hit3, mrr = scores(by_method[method])
            cells.append(f"{hit3:5.3f} {mrr:6.3f}")
        n = len(by_method["hybrid"])
        print(f"{label:<44} {n:>4}   " + "   ".join(cells))
    print(f"\nretrieval time per question (question embedded, three scores, combined): median "
          f"{statistics.median(times) * 1000:.1f} ms, p95 {np.percentile(times, 95) * 1000:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
