"""Benchmark: the group's memory (`/paperping ask`) on real, dated histories of groups choosing papers.

``python -m bench.bench_ask`` imports the project's five real histories (``tests/data/real_histories/``: a
university NLP reading group's proposals and its conference notes, a lab seminar's talks, two small groups' lists
of summarization and BERT-related papers; sources and licences in ``tests/data/README.md``) as five channels of an
embedded Postgres, each share a member's message linking the ACL Anthology page, with the catalog's titles and
abstracts, embedded as PaperPing embeds.

Then, for every shared paper with an abstract, it asks the paper's channel questions of several kinds, as a
member who remembers the paper would ask them (drawn with a fixed seed):

- ``rare words``: four uncommon words of its abstract that its title lacks, in the abstract's order;
- ``five words``: five words of its abstract that its title lacks, common ones included, in any order;
- ``by hand``: a paraphrase written by hand (papers of the reading group's proposals);
- ``author``: "what have we read by NAME?" with one of its authors (a hit: a paper of that author);
- ``venue and year``: "what did we read from EMNLP 2019?" (a hit: a paper of that venue and year);
- ``name``: a method's or a dataset's name from its abstract ("BiLSTM", "SQuAD") that its title lacks (a hit: a
  paper whose title or abstract holds the name);
- ``body only``: three real open-access papers with their full text are shared in every channel, and the thread
  questions written by hand about them ("Which cells were used for the virus neutralization test?") are asked of
  the channel (``bench/ask_bodies.py``): the answer is in the paper's body, not its title or abstract.

It prints, per kind and in all, hit@3 and MRR for PaperPing's hybrid retrieval (with the papers' bodies, as the
service searches them) and for what a reader would try first on the same papers: TF-IDF and BM25 over each
paper's title, abstract, authors, venue and year, BM25 over the full text where there is one, and the vectors
alone. Goal: the hybrid at least the best baseline on every kind, and hit@3 >= 0.9 in all.
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


def build(
    db: Any, tmp: Path, *, team: str = TEAM, copies: int = 1, also: tuple[str, ...] = ()
) -> tuple[dict[str, list[dict[str, str]]], list[str]]:
    """The histories as channels of ``db`` in workspace ``team`` (``copies`` times over, the members ``also``
    in every channel); their choices by history, and the channels' ids (``C1`` to ``C5`` for one copy)."""
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
    members = sorted({c["member"] for h in histories.values() for c in h} | set(also))
    channels = {}
    for copy in range(copies):
        for k, (name, choices) in enumerate(histories.items()):
            messages = []
            for n, c in enumerate(choices):
                ts = datetime.fromisoformat(c["at"]).astimezone(UTC).timestamp() + n * 0.001
                messages.append(msg(ts, c["member"], f"<https://aclanthology.org/{c['acl_id']}/>"))
            key, cid = (name, f"C{k + 1}") if copies == 1 else (f"{name}-{copy}", f"C{copy}{k:02d}")
            channels[key] = (cid, members, messages)
    export = write_export(tmp / "histories.zip", channels, [user(m, m.lower()) for m in members])
    import_export(db, export, domain="histories", team_id=team, progress=False)
    embed_pending(db, Embedder(cache=Settings.from_env().embed_cache_dir))
    return histories, [cid for cid, _, _ in channels.values()]


def rank_of(ranked: list[int], wanted: set[int]) -> int | None:
    """The rank (from 1) of the first of the ``wanted`` papers in ``ranked``; None when none is there."""
    return next((k + 1 for k, pid in enumerate(ranked) if pid in wanted), None)


def scores(ranks: list[int | None]) -> tuple[float, float]:
    hit3 = sum(1 for r in ranks if r is not None and r <= 3) / len(ranks)
    mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
    return hit3, mrr


_TOKEN = re.compile(r"[a-z0-9]+")
_NAME = re.compile(r"\b(?=[A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*[A-Z0-9])[A-Za-z][A-Za-z0-9-]{2,}\b")  # BiLSTM, SQuAD, GPT-2


def five_words(row: dict[str, Any], rng: random.Random) -> list[str]:
    """Five words of the abstract that the title lacks, common ones included, in any order."""
    from socialrag.recommender.retrieve.memory import ASKING_WORDS

    title = set(_TOKEN.findall(row["title"].lower()))
    words = [w for w in dict.fromkeys(_TOKEN.findall((row["abstract"] or "").lower())) if len(w) > 3]
    words = [w for w in words if w not in title and w not in ASKING_WORDS]
    return rng.sample(words, 5) if len(words) >= 5 else []


def method_name(row: dict[str, Any], rng: random.Random) -> str | None:
    """A name of a method or a dataset in the abstract (more than one capital letter, or a capital and a digit)
    that the title lacks; None when there is none."""
    title = row["title"].lower()
    names = [n for n in dict.fromkeys(_NAME.findall(row["abstract"] or "")) if n.lower() not in title]
    return rng.choice(names) if names else None


def record_text(row: dict[str, Any]) -> str:
    """A paper as a keyword search over the catalog would index it: title, abstract, authors, venue, year."""
    from socialrag.names import normalize_venue

    venue = normalize_venue(row["venue"])[1] if row.get("venue") else ""
    return " ".join([row["title"], row["abstract"] or "", " ".join(row["authors"]), venue, str(row["year"])])


class KeywordBaselines:
    """TF-IDF (scikit-learn's, English stop words) and BM25 (k1 1.2, b 0.75) over one channel's papers."""

    def __init__(self, papers: dict[int, str]) -> None:
        from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

        self.ids = list(papers)
        texts = [papers[i] for i in self.ids]
        self.tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        self.tfidf_docs = self.tfidf.fit_transform(texts)
        self.counts = CountVectorizer(stop_words="english")
        tf = self.counts.fit_transform(texts).tocsc().astype(np.float64)
        n, lengths = tf.shape[0], np.asarray(tf.sum(axis=1)).ravel()
        df = np.diff(tf.indptr)
        self.idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        self.tf, self.norm = tf.tocsr(), 1.2 * (0.25 + 0.75 * lengths / max(float(lengths.mean()), 1e-9))

    def tfidf_ranked(self, question: str) -> list[int]:
        sims = (self.tfidf_docs @ self.tfidf.transform([question]).T).toarray().ravel()
        return [self.ids[i] for i in np.argsort(-sims, kind="stable") if sims[i] > 0]

    def bm25_ranked(self, question: str) -> list[int]:
        terms = self.counts.transform([question]).indices
        if not len(terms):
            return []
        tf = self.tf[:, terms].toarray()
        score = ((tf * 2.2) / (tf + self.norm[:, None]) * self.idf[terms]).sum(axis=1)
        return [self.ids[i] for i in np.argsort(-score, kind="stable") if score[i] > 0]


def questions(
    name: str, histories: dict[str, list[dict[str, str]]], rows: dict[str, dict[str, Any]], ids: dict[str, int],
    rng: random.Random,
) -> list[tuple[str, str, set[int]]]:  # fmt: skip
    """(kind, question, the papers that answer it) for every shared paper of the history ``name``."""
    from socialrag.names import normalize_venue

    mine = list(dict.fromkeys(c["acl_id"] for c in histories[name]))
    by_author: dict[str, set[int]] = {}
    by_venue: dict[tuple[str, int], set[int]] = {}
    texts = {ids[a]: f"{rows[a]['title']} {rows[a]['abstract'] or ''}" for a in mine}
    for acl in mine:
        for author in rows[acl]["authors"]:
            by_author.setdefault(author, set()).add(ids[acl])
        venue = normalize_venue(rows[acl]["venue"])[1] if rows[acl].get("venue") else ""
        by_venue.setdefault((venue, int(rows[acl]["year"])), set()).add(ids[acl])
    asked: list[tuple[str, str, set[int]]] = []
    for acl in mine:
        row, pid = rows[acl], ids[acl]
        if words := question_words(row, rng):
            asked.append(("rare words", f"what have we read about {' '.join(words)}?", {pid}))
        if words := five_words(row, rng):
            asked.append(("five words", f"what have we read about {' '.join(words)}?", {pid}))
        if acl in PARAPHRASES and name == "clulab-proposals":
            asked.append(("by hand", PARAPHRASES[acl], {pid}))
        if row["authors"]:
            author = rng.choice(row["authors"])
            asked.append(("author", f"what have we read by {author}?", by_author[author]))
        venue = normalize_venue(row["venue"])[1] if row.get("venue") else ""
        if venue and rng.random() < 0.25:  # a quarter of the papers: a venue's year holds many
            held = by_venue[(venue, int(row["year"]))]
            asked.append(("venue and year", f"what did we read from {venue} {row['year']}?", held))
        if (found := method_name(row, rng)) is not None:
            holders = {p for p, t in texts.items() if re.search(rf"\b{re.escape(found)}\b", t)}
            asked.append(("name", f"what have we read that uses {found}?", holders))
    return asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    from bench import ask_bodies
    from socialrag.db import migrated_database, start_embedded
    from socialrag.knowledge.embed import Embedder
    from socialrag.recommender.retrieve.body_search import search_bodies, with_bodies
    from socialrag.recommender.retrieve.context import load_channel_context
    from socialrag.recommender.retrieve.memory import Found, combine, ranked, search_scores

    methods = ("hybrid", "TF-IDF", "BM25", "BM25 full text", "vectors alone", "keywords alone")
    tmp = Path(tempfile.mkdtemp(prefix="paperping-ask-"))
    uri, server = start_embedded(tmp / "pgdata")
    db = migrated_database(uri, "ask")
    try:
        histories, _ = build(db, tmp)
        rows = load_rows({c["acl_id"] for h in histories.values() for c in h})
        embedder = Embedder()
        middle = {f"C{k + 1}": histories[n][len(histories[n]) // 2] for k, n in enumerate(HISTORIES)}
        sharers = {cid: (c["member"], "", datetime.fromisoformat(c["at"])) for cid, c in middle.items()}
        bodies = ask_bodies.add_papers(db, TEAM, sharers, embedder)
        by_record = {bodies[f]: ask_bodies.record_text(f) for f in bodies}
        by_body = {bodies[f]: ask_bodies.body_text(f) for f in bodies}
        rng = random.Random(args.seed)
        results: dict[str, dict[str, list[int | None]]] = {}
        times: list[float] = []
        with db.connection() as conn:
            ids = dict(conn.execute("SELECT value, paper_id FROM paper_ids WHERE scheme = 'acl'").fetchall())
            for k, name in enumerate(HISTORIES):
                ctx = load_channel_context(conn, TEAM, f"C{k + 1}", datetime.now(UTC), embedder.model_name)
                shared = dict.fromkeys(c["acl_id"] for c in histories[name])
                records = {ids[a]: record_text(rows[a]) for a in shared}
                keyword = KeywordBaselines(records | by_record)
                full = KeywordBaselines(records | by_body)
                asked = questions(name, histories, rows, ids, rng) + ask_bodies.body_questions(bodies)
                for kind, question, wanted in asked:
                    started = time.perf_counter()
                    vector = embedder.encode([question])[0]
                    found = search_scores(conn, ctx, question, vector)
                    scored = [Found(pid, score) for pid, score in combine(found).items()]
                    hybrid = [f.paper_id for f in with_bodies(scored, search_bodies(conn, ctx, question, vector))]
                    times.append(time.perf_counter() - started)
                    by_words = keyword.tfidf_ranked(question), keyword.bm25_ranked(question), full.bm25_ranked(question)
                    orders = (hybrid, *by_words, ranked(found.meaning), ranked(found.words))
                    for method, order in zip(methods, orders, strict=True):
                        for label in (kind, f"{name} ({kind})", "all"):
                            results.setdefault(label, {}).setdefault(method, []).append(rank_of(order, wanted))
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'questions':<44} {'n':>4}" + "".join(f"   {m:>13}" for m in methods))
    print(f"{'':<44} {'':>4}" + "   ".join(["", *[f"{'hit@3   MRR':>13}"] * len(methods)]))
    kinds = ("rare words", "five words", "by hand", "author", "venue and year", "name", "body only", "all")
    for label, by_method in sorted(
        results.items(), key=lambda x: (x[0] in kinds, x[0] in kinds and kinds.index(x[0]), x[0])
    ):
        cells = [f"{scores(by_method[m])[0]:5.3f} {scores(by_method[m])[1]:6.3f}" for m in methods]
        print(f"{label:<44} {len(by_method['hybrid']):>4}   " + "   ".join(cells))
    print(f"\nretrieval time per question (question embedded, three scores and the bodies, combined): median "
          f"{statistics.median(times) * 1000:.1f} ms, p95 {np.percentile(times, 95) * 1000:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
