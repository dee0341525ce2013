"""Replay PaperPing's rankings on real, public, dated histories of a group choosing papers.

``python -m bench.real.replay_real [--only NAME]`` replays each history in
``tests/data/real_histories/`` (built by ``bench/real/build_histories.py``; sources and licences in
``tests/data/README.md``) against the ACL Anthology 2016-2021 catalog shipped in ``tests/data``, through the
project's own replay (``socialrag.recommender.rank.evaluate.replay``, the one ``paperping eval`` runs): each weekly
step ranks, as of just before a choice, every paper published in the year before, less what the group had
already chosen, and scores what it chose in the week from there. The catalog is embedded once with the
bundled model and kept in the embedding cache every home shares (``PAPERPING_EMBED_CACHE``).

It prints each history's table: newest first, popularity known by then (the catalog has no counts: unknown,
so it ranks at random), content similarity (centroid of the earlier choices, and the mean of the ten nearest),
the default blend, and the calibrated ranking refitted at every step, with recall at 10 and 50 and MRR.

``--model NAME`` embeds with another sentence-transformers model (a name or a local path, as
``PAPERPING_EMBED_MODEL``), to compare content representations. ``--sample N`` keeps, of the catalog, the papers
the histories chose and N others drawn with a fixed seed: a larger model that would take hours to embed the whole
catalog on two cores is compared with the bundled one on the same, smaller pools.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from socialrag.knowledge.papers.source import parse_month

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CATALOG = DATA / "acl-anthology-2016-2021.jsonl.gz"
HISTORIES = DATA / "real_histories"
# what the shipped files must be (a changed file is a changed evaluation: rebuild on purpose, then update these)
SHA256 = {
    "acl-anthology-2016-2021.jsonl.gz": "80c79715773012e6574bf998b70d7fe42b13eb48edc222c0a93f8e7583b31b02",
    "clulab-proposals.jsonl": "af3a13b5b136afb996964264c3e6a62d0469fe88a4ea8ccd48418766a56c978d",
    "clulab-conference-notes.jsonl": "09a07c3133b2bb74abf02dd23e9426fc8f5d863bf8afa32e190a3159b7e3326a",
    "summarization-list.jsonl": "ef95e0030f4e159895bd2785ca9c2bd1d310c9b21a744f734a221f7ee2f83872",
    "antnlp-seminar.jsonl": "6636af73f41be52b785475562f8124698486e21824077db46b7b6108ef7723e7",
    "bert-related-list.jsonl": "8743ae258deae8a2da4868d93a29e4573f8345ea5beaa1afb7fbdb931a4d8f38",
}


def check(path: Path) -> None:
    want = SHA256.get(path.name)
    got = hashlib.sha256(path.read_bytes()).hexdigest()
    if got != want:
        raise SystemExit(f"{path} is not the file this evaluation was built on (sha256 {got}, expected {want})")


def load_catalog() -> list[dict[str, Any]]:
    check(CATALOG)
    with gzip.open(CATALOG, "rt") as fh:
        return [json.loads(line) for line in fh]


def published(row: dict[str, Any]) -> tuple[date, str]:
    """Its date as the catalog import reads it (``parse_month``): the day or month when the month field gives
    them, else the year's first day with the year as its precision."""
    year = int(row["year"])
    parsed = parse_month(row.get("month"))
    if parsed is None:
        return date(year, 1, 1), "year"
    month, day = parsed
    if day is not None:
        with contextlib.suppress(ValueError):
            return date(year, month, day), "day"
    return date(year, month, 1), "month"


def load_vectors(rows: list[dict[str, Any]], model: str | None = None) -> np.ndarray:
    """The catalog's vectors (title and abstract, as PaperPing embeds a paper), from the embedding cache that
    every home on this machine shares (``PAPERPING_EMBED_CACHE``, one per model): encoded once, about 12 to 26
    minutes for the whole catalog on two cores with the bundled model."""
    from socialrag.config import Settings
    from socialrag.knowledge.embed import Embedder

    texts = [f"{r['title']}\n{r['abstract'] or ''}" for r in rows]
    hashes = [hashlib.md5(t.encode()).hexdigest() for t in texts]
    cache = Settings.from_env().embed_cache_dir
    embedder = Embedder(model, cache=cache) if model else Embedder(cache=cache)
    found = embedder.encode_public(dict(zip(hashes, texts, strict=True)), batch_size=128)
    return np.stack([found[h] for h in hashes])


def sampled(rows: list[dict[str, Any]], names: list[str], others: int, seed: int = 11) -> list[dict[str, Any]]:
    """The catalog's papers the histories ``names`` chose, and ``others`` more drawn with ``seed``, in file order."""
    chosen = set()
    for name in names:
        for line in (HISTORIES / f"{name}.jsonl").read_text().splitlines():
            if line.strip():
                chosen.add(json.loads(line)["acl_id"])
    rest = [i for i, r in enumerate(rows) if r["acl_id"] not in chosen]
    drawn = set(np.random.default_rng(seed).choice(rest, size=min(others, len(rest)), replace=False).tolist())
    return [r for i, r in enumerate(rows) if r["acl_id"] in chosen or i in drawn]


def paper_infos(rows: list[dict[str, Any]]) -> dict[int, Any]:
    """The catalog's papers (ids from 1, in file order) as the knowledge base gives them to a refit: authors by id,
    and each venue as its series (ACL 2019 and ACL 2020 are one venue, as ``normalize_venue`` keys them in
    storage), so that the venue feature reads what it reads in serving."""
    from socialrag.names import normalize_venue
    from socialrag.rows import AuthorRef, PaperInfo

    infos = {}
    authors: dict[str, int] = {}
    venues: dict[str, int] = {}
    for pid, r in enumerate(rows, start=1):
        day, precision = published(r)
        refs = tuple(AuthorRef(authors.setdefault(a, len(authors) + 1), a, a.lower()) for a in r["authors"])
        key, short = normalize_venue(r["venue"])
        infos[pid] = PaperInfo(
            pid,
            r["title"],
            venues.setdefault(key, len(venues) + 1),
            short,
            int(r["year"]),
            refs,
            None,
            publication_date=day,
            date_precision=precision,
        )
    return infos


def history_of(name: str, rows: list[dict[str, Any]], vectors: np.ndarray) -> Any:
    """A ``ChannelHistory`` of the group's choices over the whole catalog."""
    from socialrag.recommender.rank.history import build_history
    from socialrag.recommender.rank.universe import build_universe
    from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper
    from socialrag.rows import MemberInfo, Share

    path = HISTORIES / f"{name}.jsonl"
    check(path)
    choices = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    index = {r["acl_id"]: i + 1 for i, r in enumerate(rows)}
    infos = paper_infos(rows)
    vecs = {pid: vectors[pid - 1] for pid in infos}
    papers: dict[int, SharedPaper] = {}
    for k, c in enumerate(choices):
        pid = index[c["acl_id"]]
        at = datetime.fromisoformat(c["at"]).astimezone(UTC)
        papers.setdefault(pid, SharedPaper(infos[pid])).shares.append(Share(pid, f"m{k}", c["member"], at, None, None))
    members = {m: MemberInfo(m, m) for m in {c["member"] for c in choices}}
    last = max(s.at for p in papers.values() for s in p.shares)
    ctx = ChannelContext("T", name, last, papers, members, {}, {}, {})
    return build_history(ctx, build_universe(infos, vecs), 60.0), len(choices)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="one history's name")
    parser.add_argument("--warmup", type=int, default=8)
    parser.add_argument("--model", default=None, help="as PAPERPING_EMBED_MODEL (default: the bundled MiniLM-L6)")
    parser.add_argument("--sample", type=int, default=None, help="the chosen papers and this many others only")
    args = parser.parse_args()
    from socialrag.recommender.rank.evaluate import replay

    rows = load_catalog()
    names = [n for n in sorted(p.stem for p in HISTORIES.glob("*.jsonl")) if args.only in (None, n)]
    if args.sample is not None:
        rows = sampled(rows, sorted(p.stem for p in HISTORIES.glob("*.jsonl")), args.sample)
        print(f"catalog sampled: {len(rows)} papers (every chosen one and {args.sample} others)")
    vectors = load_vectors(rows, args.model)
    for name in names:
        history, n = history_of(name, rows, vectors)
        report = replay(
            history, warmup=args.warmup, window_days=365.0, refit_every=1, topics=np.zeros(len(rows), dtype=np.int64)
        )
        print(f"\n## {name}: {n} real choices")
        print(report.table())


if __name__ == "__main__":
    main()
