"""Replay evaluation on simulated lab channels built from real ACL Anthology papers.

``python -m bench.replay_eval [--months 22] [--home DIR]`` builds seven simulated channels over the demo's
catalog of 3,002 ACL papers, each a different kind of group, in which what is shared next depends on how the
group received what came before:

- ``popular``: follows the papers the field reads (the catalog papers get a popularity that grows after
  publication, with monthly readings, so a replay only sees counts known at the time);
- ``niche``: a lab on two topics;
- ``authors``: follows a set of authors, across topics;
- ``drifting``: moves from one topic to the next over the months;
- ``disliking``: reads broadly, but one topic is received badly and fades;
- ``curator``: once a week picks four or five of that week's new papers, mostly the widely read ones; it is
  also replayed without a refit among each week's new papers, to judge the default blend alone;
- ``imported``: the ``popular`` group, but its history was imported today, so every popularity reading is
  dated today: a replay knows no count at any past share, and the fit made today estimates them
  (``estimate_back``); the bench compares those estimates with the true counts.

The catalog has the gaps real data has: a quarter of the papers have no popularity at all, a quarter are
read only from some months after publication on, the rest from three days after publication, monthly. The
groups themselves pick by how widely read a paper really is, known or not.

It writes a Slack export of the seven channels and a catalog with the popularity readings, imports both,
embeds the catalog with the bundled model (kept under ``--home`` for the next run), and prints, per kind,
``paperping eval``'s table (precision@5, recall@10, MRR, topics in the top 10), then a summary of the
calibrated ranker against the best single feature and the default blend.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

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
START = datetime(2019, 5, 1, tzinfo=UTC)
KINDS = ("popular", "niche", "authors", "drifting", "disliking", "curator", "imported")
MEMBERS = ["U01", "U02", "U03", "U04", "U05"]


def topics_of(d: dict[str, Any]) -> set[str]:
    text = (d["title"] + " " + d["abstract"][:400]).lower()
    return {t for t, words in TOPICS.items() if any(w in text for w in words)}


def load_papers(data: Path, seed: int) -> list[dict[str, Any]]:
    """The catalog, each paper with a publication day spread over its month's quarter (the ACL data gives
    months only), a popularity that grows after publication (``_true``: what the field reads) and the
    readings a knowledge base would have of it: none for a quarter of the papers, monthly from some months
    after publication for another quarter, monthly from three days after publication for the rest."""
    from bot.demo.build_data import pub_date

    with gzip.open(data, "rt") as fh:
        papers = [json.loads(line) for line in fh]
    rng = random.Random(seed)
    end = START + timedelta(days=800)
    for p in papers:
        day = pub_date(p) + timedelta(days=rng.randrange(90))
        p["publication_date"] = day.isoformat()
        final = math.exp(rng.gauss(2.0, 1.4))
        truth = []
        reading = day + timedelta(days=3)
        while reading < end.date():
            age = (reading - day).days / 30.0
            truth.append([reading.isoformat(), round(final * (1 - math.exp(-age / 5.0)), 1)])
            reading += timedelta(days=30)
        p["_true"] = truth
        gap = rng.random()
        if gap < 0.25:
            known: list[list[Any]] = []
        elif gap < 0.5:
            since = (day + timedelta(days=rng.randrange(60, 300))).isoformat()
            known = [r for r in truth if r[0] >= since]
        else:
            known = truth
        p["popularity_history"] = known
        p["popularity"] = known[-1][1] if known else None
        p["_topics"] = sorted(topics_of(p))
    return papers


def popularity_on(p: dict[str, Any], day: date) -> float:
    """How widely read the paper really was on ``day`` (what the groups go by, known to PaperPing or not)."""
    value = 0.0
    for d, v in p["_true"]:
        if date.fromisoformat(d) > day:
            break
        value = v
    return value


Chooser = Callable[[list[dict[str, Any]], date, random.Random], dict[str, Any]]


class Group:
    """A simulated group: what it likes (with a reception that reinforces it) and how it picks a paper."""

    def __init__(self, kind: str, papers: list[dict[str, Any]], rng: random.Random) -> None:
        self.kind = kind
        self.rng = rng
        self.topic_weight: dict[str, float] = dict.fromkeys(TOPICS, 0.05)
        counts: dict[str, int] = {}
        for p in papers:
            for a in p["authors"]:
                counts[a] = counts.get(a, 0) + 1
        prolific = sorted((a for a, c in counts.items() if c >= 5), key=lambda a: (-counts[a], a))
        self.followed = {a: 1.0 for a in rng.sample(prolific, min(30, len(prolific)))}
        if kind == "niche":
            self.topic_weight.update(summ=1.0, qa=1.0)
        elif kind == "disliking":
            self.topic_weight.update(mt=1.0, parse=1.0, ner=1.0, sent=1.0, dialog=1.0)
        elif kind == "drifting":
            self.topic_weight.update(mt=1.0)
        else:
            self.topic_weight.update(dict.fromkeys(TOPICS, 1.0))

    def interest(self, p: dict[str, Any]) -> float:
        return max((self.topic_weight[t] for t in p["_topics"]), default=0.02)

    def drift(self, day: date) -> None:
        if self.kind != "drifting":
            return
        months = (day - START.date()).days / 30.0
        phase = ("mt", "bias", "dialog", "summ")[min(3, int(months // 6))]
        for t in TOPICS:
            self.topic_weight[t] *= 0.97
        self.topic_weight[phase] = max(self.topic_weight[phase], 1.0)

    def pick(self, fresh: list[dict[str, Any]], day: date) -> dict[str, Any]:
        if self.kind == "curator":
            weights = [(popularity_on(p, day) + 0.5) ** 2.5 for p in fresh]
        elif self.kind in ("popular", "imported"):
            weights = [(popularity_on(p, day) + 0.5) ** 1.6 for p in fresh]
        elif self.kind == "authors":
            weights = [sum(self.followed.get(a, 0.0) for a in p["authors"]) + 0.01 for p in fresh]
        else:
            weights = [self.interest(p) ** 2 for p in fresh]
        return self.rng.choices(fresh, weights=weights)[0]

    def receive(self, p: dict[str, Any], day: date) -> tuple[int, int, bool]:
        """(positive reactions, negative reactions, a reply) from the other members."""
        if self.kind in ("popular", "imported", "curator"):
            liking = min(0.9, 0.15 + 0.15 * math.log1p(popularity_on(p, day)))
        elif self.kind == "authors":
            liking = 0.85 if any(a in self.followed for a in p["authors"]) else 0.15
        else:
            liking = min(0.9, self.interest(p))
        if self.kind == "disliking" and "parse" in p["_topics"]:
            liking = 0.05
        positive = sum(self.rng.random() < liking for _ in MEMBERS[1:])
        negative = sum(self.rng.random() < (0.6 if liking < 0.1 else 0.03) for _ in MEMBERS[1:])
        reply = self.rng.random() < liking * 0.5
        # reception reinforces (or fades) what the group picks next
        score = positive - 1.5 * negative
        for t in p["_topics"]:
            self.topic_weight[t] = max(0.01, min(2.0, self.topic_weight[t] * (1.0 + 0.08 * score)))
        for a in p["authors"]:
            if a in self.followed:
                self.followed[a] = max(0.05, min(3.0, self.followed[a] * (1.0 + 0.1 * score)))
        return positive, negative, reply


def simulate(kind: str, papers: list[dict[str, Any]], months: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(f"{seed}-{kind}")
    group = Group(kind, papers, rng)
    end = START + timedelta(days=30 * months)
    shared: set[str] = set()
    messages: list[dict[str, Any]] = []
    day = START
    while day < end:
        day += timedelta(days=7 if kind == "curator" else rng.choice([1, 2, 2, 3]))
        group.drift(day.date())
        window = {"authors": 365, "curator": 7}.get(kind, 150)
        fresh = [
            p
            for p in papers
            if p["acl_id"] not in shared
            and day.date() - timedelta(days=window) <= date.fromisoformat(p["publication_date"]) < day.date()
        ]
        for i in range(rng.choice([4, 5]) if kind == "curator" else 1):
            if not fresh:
                break
            paper = group.pick(fresh, day.date())
            fresh.remove(paper)
            shared.add(paper["acl_id"])
            messages += share(group, paper, day, i, rng)
    return messages


def share(group: Group, paper: dict[str, Any], day: datetime, i: int, rng: random.Random) -> list[dict[str, Any]]:
    """The message sharing ``paper`` (the ``i``-th of the day), its reactions and maybe a reply."""
    messages: list[dict[str, Any]] = []
    ts = day.replace(hour=rng.randint(9, 17)).timestamp() + 120 * i
    sharer = rng.choice(MEMBERS)
    msg: dict[str, Any] = {
        "type": "message",
        "user": sharer,
        "ts": f"{ts:.6f}",
        "text": f"<https://aclanthology.org/{paper['acl_id']}/|{paper['title']}>",
    }
    positive, negative, reply = group.receive(paper, day.date())
    others = [m for m in MEMBERS if m != sharer]
    reactions = []
    if positive:
        reactions.append({"name": "+1", "users": others[:positive], "count": positive})
    if negative:
        reactions.append({"name": "-1", "users": others[-negative:], "count": negative})
    if reactions:
        msg["reactions"] = reactions
    messages.append(msg)
    if reply:
        msg.update(thread_ts=msg["ts"], reply_count=1)
        messages.append(
            {
                "type": "message",
                "user": others[0],
                "ts": f"{ts + 600:.6f}",
                "thread_ts": msg["ts"],
                "text": "Worth reading: the evaluation section in particular.",
            }
        )
    return messages


def summary(reports: dict[str, Any]) -> str:
    from socialrag.recommender.rank.evaluate import BLEND, CALIBRATED, CALIBRATED_DIVERSE, SINGLE

    lines = [
        f"{'kind':<11}{'metric':<8}{'calibrated':>11}{'+diversity':>11}{'blend':>8}{'best single':>13}  feature",
        "-" * 80,
    ]
    gains = []
    for kind, report in reports.items():
        r = report.results
        for metric in ("p5", "r10", "mrr"):
            best = max(SINGLE, key=lambda n, m=metric: getattr(r[n], m))
            cal, div, blend = (getattr(r[n], metric) for n in (CALIBRATED, CALIBRATED_DIVERSE, BLEND))
            lines.append(
                f"{kind:<11}{metric:<8}{cal:>11.3f}{div:>11.3f}{blend:>8.3f}"
                f"{getattr(r[best], metric):>13.3f}  {best.removesuffix(' alone')}"
            )
            if metric == "mrr":
                gains.append((cal, blend))
    mean_cal = sum(c for c, _ in gains) / len(gains)
    mean_blend = sum(b for _, b in gains) / len(gains)
    lines.append(
        f"mean MRR: calibrated {mean_cal:.3f}, default blend {mean_blend:.3f} "
        f"(x{mean_cal / mean_blend if mean_blend else float('inf'):.2f})"
    )
    return "\n".join(lines)


MODEL = "all-MiniLM-L6-v2"


def replay_imported(
    conn: Any, cid: str, papers: list[dict[str, Any]], end: datetime, args: argparse.Namespace
) -> tuple[Any, str]:
    """The ``imported`` channel: every popularity reading dated at the import (``end``), as a history imported
    today has them. Returns the replay and a check of the fit made today: its popularity weight with the
    counts at past shares estimated from today's, without them, and with the true dated counts; and how close
    the estimates are to the true counts."""
    from dataclasses import replace

    import numpy as np

    from socialrag.recommender.rank.evaluate import replay
    from socialrag.recommender.rank.features import FEATURES
    from socialrag.recommender.rank.history import build_history
    from socialrag.recommender.rank.refit import load_universe
    from socialrag.recommender.rank.training import training_set
    from socialrag.recommender.rank.universe import estimate_back
    from socialrag.recommender.retrieve.context import load_channel_context
    from socialrag.storage.embeddings import load_embedded_ids
    from socialrag.storage.papers import load_identities

    ctx = load_channel_context(conn, "T0LAB", cid, datetime.now(UTC), MODEL)
    true = load_universe(conn, MODEL, [*ctx.papers, *load_embedded_ids(conn, MODEL)], ("T0LAB", cid))
    by_acl = {p["acl_id"]: p for p in papers}
    acl = load_identities(conn, [int(i) for i in true.ids])
    rows = [by_acl.get(acl.get(int(pid), {}).get("acl", "")) for pid in true.ids]
    at = end.timestamp()
    today = replace(
        true,
        reading_start=np.arange(len(rows) + 1),
        reading_t=np.full(len(rows), at),
        reading_v=np.array([popularity_on(p, end.date()) if p else 0.0 for p in rows]),
    )
    dated = replace(
        true,
        reading_start=np.cumsum([0] + [len(p["_true"]) if p else 0 for p in rows]),
        reading_t=np.array([_epoch(d) for p in rows if p for d, _ in p["_true"]]),
        reading_v=np.array([v for p in rows if p for _, v in p["_true"]]),
    )
    history = build_history(ctx, today, 60.0)
    report = replay(history, window_days=args.window_days)
    pop = FEATURES.index("popularity")
    weights = {}
    for name, universe, known_by in (("estimated", today, at), ("unknown", today, None), ("true", dated, None)):
        pairs = training_set(build_history(ctx, universe, 60.0), known_by=known_by)
        weights[name] = pairs.fit(now=end).weights[pop]
    errors, estimates, truths = [], [], []
    for k, row in enumerate(history.rows):
        t, p = history.member_first[k], rows[row]
        if p is None or np.isnan(t):
            continue
        guess = estimate_back(popularity_on(p, end.date()), at, t, today.published[row])
        real = popularity_on(p, datetime.fromtimestamp(t, UTC).date())
        errors.append(abs(math.log((guess + 1) / (real + 1))))
        estimates.append(guess)
        truths.append(real)
    rho = np.corrcoef(np.argsort(np.argsort(estimates)), np.argsort(np.argsort(truths)))[0, 1]
    check = (
        f"fit today, popularity weight: {weights['estimated']:.2f} with past counts estimated from today's, "
        f"{weights['unknown']:.2f} with them unknown, {weights['true']:.2f} with the true dated counts\n"
        f"estimates at {len(errors)} shares against the true counts then: median |log ratio| "
        f"{float(np.median(errors)):.2f}, Spearman {rho:.2f}"
    )
    return report, check


CURATOR_POOL_DAYS = 7  # a curator picks among the week's new papers


def print_curator_without_refit(db: Any, cid: str) -> None:
    """The curator's channel before any refit: the default blend alone, judged among each week's new papers (the
    pool the curator chooses from), beside popularity known by then and the other plain rankings. A change to the
    default blend is judged here too: it must not cost a channel that follows what its field reads."""
    from socialrag.recommender.rank.evaluate import evaluate_channel

    with db.connection() as conn:
        report = evaluate_channel(conn, "T0LAB", cid, MODEL, window_days=CURATOR_POOL_DAYS, refit_every=None)
    print(f"## curator without a refit, among each week's new papers ({CURATOR_POOL_DAYS} days)")
    print(report.table())
    print()


def _epoch(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def open_home(home: Path, data: Path, months: int, seed: int) -> tuple[Any, Any, list[dict[str, Any]], dict[str, Any]]:
    """The simulated channels' database under ``home`` (built on the first run, reused after): the database, its
    embedded server (``cleanup()`` when done), the catalog's papers, and each kind's channel id, members and
    messages."""
    from bot.slack.workspace_export import import_export
    from socialrag.db import migrated_database, start_embedded
    from socialrag.knowledge.embed import Embedder, embed_pending
    from socialrag.knowledge.papers.local_catalog import import_catalog
    from tests.support.exports import user, write_export

    reuse = bench_home(home, "replay")
    papers = load_papers(data, seed)
    channels = {kind: (f"C{i + 1}", MEMBERS, simulate(kind, papers, months, seed)) for i, kind in enumerate(KINDS)}
    uri, server = start_embedded(home / "pgdata")
    db = migrated_database(uri, "replay")
    if not reuse:
        catalog = home / "catalog.jsonl"
        catalog.write_text("\n".join(json.dumps({k: v for k, v in p.items() if k[0] != "_"}) for p in papers))
        import_catalog(db, catalog)
        export = write_export(home / "labs.zip", channels, [user(u, f"member{u[1:]}") for u in MEMBERS])
        import_export(db, export, progress=False)
        embed_pending(db, Embedder())
        (home / "bench-built-replay").touch()
    return db, server, papers, channels


def bench_home(home: Path, name: str) -> bool:
    """Whether ``home`` holds a bench's complete database ``name`` to reuse (False: a new home, to build). A home
    with a database the bench did not finish building, or a lab's own home, is refused: the bench would change it."""
    if (home / f"bench-built-{name}").exists():
        return True
    if (home / "pgdata").exists():
        raise SystemExit(f"{home} holds a database this bench did not build (or did not finish): give a new --home")
    home.mkdir(parents=True, exist_ok=True)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--months", type=int, default=22)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--window-days", type=int, default=365, help="candidates published in the year before")
    parser.add_argument("--home", type=Path, help="keep the database here (a second run reuses it)")
    parser.add_argument("--data", type=Path, default=ACL, help="ACL Anthology JSON lines (default: the demo's)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="replay only these kinds")
    args = parser.parse_args()
    from socialrag.recommender.rank.evaluate import evaluate_channel

    home = args.home or Path(tempfile.mkdtemp(prefix="paperping-replay-"))
    db, server, papers, channels = open_home(home, args.data, args.months, args.seed)
    try:
        print(f"catalog: {len(papers)} ACL Anthology papers; {args.months} months; {len(MEMBERS)} members a channel\n")
        reports = {}
        for kind, (cid, _, messages) in channels.items():
            if kind not in args.kinds:
                continue
            started = time.perf_counter()
            with db.connection() as conn:
                if kind == "imported":
                    report, check = replay_imported(conn, cid, papers, START + timedelta(days=30 * args.months), args)
                else:
                    report = evaluate_channel(conn, "T0LAB", cid, MODEL, window_days=args.window_days)
            reports[kind] = report
            shares = sum(1 for m in messages if m.get("thread_ts", m["ts"]) == m["ts"])
            print(f"## {kind} ({shares} shares; replayed in {time.perf_counter() - started:.1f} s)")
            print(report.table())
            if report.fit is not None:
                from socialrag.recommender.rank.calibrate import describe

                print(describe(report.fit))
            if kind == "imported":
                print(check)
            print()
            if kind == "curator":
                print_curator_without_refit(db, cid)
        print(summary(reports))
    finally:
        server.cleanup()
        if args.home is None:  # a home of its own: nothing of it is kept
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
