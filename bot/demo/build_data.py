"""Maintainers' script: write the demo's data into ``bot/demo/data/`` from the ACL Anthology file.

``python -m bot.demo.build_data PATH/acl-anthology-2016-2021.jsonl.gz`` writes a catalog of 3,000+ real papers,
a Slack export of a fictional lab channel that shares 40+ of them in every ACL link form PaperPing parses,
an illustrative Semantic Scholar-shaped reference list (demo data, not the papers' real citations), and the
embeddings of every text the demo indexes (computed with the bundled model), so the demo embeds nothing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import sys
import tempfile
import zipfile
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
TEAM = "T0DEMO"
CHANNEL = ("C0DEMO", "nlp-reading")
MEMBERS = {  # id -> (display name, interests before November, after)
    "U01AMARA": ("amara", ("qa",), ("summ", "faith")),
    "U02BEN": ("ben", ("qa", "dialog"), ("dialog",)),
    "U03CHIARA": ("chiara", ("summ",), ("summ", "faith")),
    "U04DEV": ("dev", ("qa",), ("bias",)),
    "U05ELENA": ("elena", ("dialog",), ("faith",)),
    "U06FARID": ("farid", ("qa",), ("qa", "summ")),
    "U07GRACE": ("grace", ("bias",), ("bias", "faith")),
    "U08HIRO": ("hiro", ("summ",), ("summ",)),
    "U09INES": ("ines", ("qa", "summ"), ("faith",)),
    "U10JONAS": ("jonas", ("dialog",), ("dialog", "bias")),
    "U11MATT": ("matt.g", ("qa",), ("qa",)),
}
AUTHOR_MEMBER = ("U11MATT", "Matt Gardner")  # the member who is an author (linked with /paperping link-author)
TOPICS = {
    "qa": ("question answering", "reading comprehension"),
    "summ": ("summarization",),
    "faith": ("faithful", "hallucinat", "factual consistency"),
    "dialog": ("dialogue", "conversational"),
    "bias": ("gender bias", "social bias", "stereotyp"),
}
MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        1,
    )
}
START, DRIFT, END = (
    datetime(2020, 7, 6, tzinfo=UTC),
    datetime(2020, 10, 15, tzinfo=UTC),
    datetime(2021, 1, 8, tzinfo=UTC),
)
REPLIES = (
    "Nice, the error analysis in section 5 is worth a look.",
    "Do they release the data?",
    "I tried something similar last year; the baseline is stronger than it looks.",
    "Good find. The ablations are thin though.",
    "Adding this to the reading group list.",
    "How does this compare to what we discussed last week?",
)


def pub_date(d: dict[str, Any]) -> date:
    month = next((MONTHS[w] for w in re.findall(r"[a-z]+", str(d.get("month") or "").lower()) if w in MONTHS), 6)
    return date(int(d["year"]), month, 1)


def topics_of(d: dict[str, Any]) -> set[str]:
    text = (d["title"] + " " + d["abstract"][:500]).lower()
    return {t for t, words in TOPICS.items() if any(w in text for w in words)}


def link(d: dict[str, Any], i: int) -> str:
    """The ACL link forms PaperPing parses, in turn (with and without labels, trailing punctuation)."""
    acl, title = d["acl_id"], d["title"]
    short = title if len(title) < 60 else title[:57] + "..."
    forms = [
        f"<https://aclanthology.org/{acl}/|{title}>",
        f"https://aclanthology.org/{acl}.pdf",
        f"<https://www.aclweb.org/anthology/{acl}|{short}>",
        f"https://www.aclweb.org/anthology/{acl}.pdf.",
        f"<https://doi.org/10.18653/v1/{acl}>",
        f"(http://dx.doi.org/10.18653/v1/{acl})",
        f"<https://aclanthology.org/{acl}.bib|bib>",
        f"<https://aclanthology.org/{acl}|{short}>",
    ]
    return forms[i % len(forms)]


EXTRA_SHARES = [  # papers outside the catalog, in the other forms; offline they keep their label and text
    ("<https://arxiv.org/abs/1810.04805v2|BERT: Pre-training of Deep Bidirectional Transformers>", "qa"),
    ("https://arxiv.org/pdf/1910.13461.pdf BART, for the summarization folks", "summ"),
    ("<https://huggingface.co/papers/2005.11401|Retrieval-Augmented Generation for Knowledge-Intensive NLP>", "qa"),
    ("<https://openreview.net/forum?id=SkeHuCVFDr|ELECTRA>", "qa"),
    (
        "<https://www.semanticscholar.org/paper/204e3073870fae3d05bcbc2f6a8e263d9b72e776|Attention Is All You Need>",
        "dialog",
    ),
    (
        "<https://proceedings.neurips.cc/paper/2020/hash/1457c0d6bfcb4967418bfb8ac142f64a-Abstract.html|"
        "Language Models are Few-Shot Learners>",
        "qa",
    ),
    ("CLIP, for the multimodal crowd: https://proceedings.mlr.press/v139/radford21a.html", "qa"),
    ("<https://www.alphaxiv.org/abs/1910.10683|T5> with the discussion view, and arxiv:1910.10683 for the PDF", "summ"),
    ("<https://dl.acm.org/doi/10.1145/3442188.3445922|On the Dangers of Stochastic Parrots>", "bias"),
    ("<https://doi.org/10.1145/3290605.3300233|Guidelines for Human-AI Interaction> (CHI)", "dialog"),
    ("<https://www.nature.com/articles/nature14539|Deep learning> the review everyone cites", "qa"),
    (
        "<https://openaccess.thecvf.com/content_cvpr_2016/html/He_Deep_Residual_Learning_CVPR_2016_paper.html|ResNet>",
        "qa",
    ),
    (
        "<https://link.springer.com/article/10.1007/s11263-015-0816-y|ImageNet Large Scale Visual Recognition>",
        "qa",
    ),
]


def choose(papers: list[dict[str, Any]], rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    recent = [p for p in papers if p["year"] in (2019, 2020)]
    by_topic: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in recent:
        for t in topics_of(p):
            by_topic[t].append(p)
    gardner = [p for p in recent if AUTHOR_MEMBER[1] in p["authors"] and "qa" in topics_of(p)][:4]
    lapata = [p for p in recent if "Mirella Lapata" in p["authors"] and "summ" in topics_of(p)][:3]
    shared: dict[str, dict[str, Any]] = {p["acl_id"]: p for p in gardner[:2] + lapata}
    for topic, n in (("qa", 12), ("summ", 10), ("faith", 7), ("dialog", 6), ("bias", 5)):
        for p in rng.sample(by_topic[topic], min(n, len(by_topic[topic]))):
            shared.setdefault(p["acl_id"], p)
    rest = [p for p in recent if p["acl_id"] not in shared]
    rng.shuffle(rest)
    catalog = list(shared.values()) + gardner[2:] + rest[: 3000 - len(shared)]
    return list(shared.values()), list({p["acl_id"]: p for p in catalog}.values())


def when(rng: random.Random, day: datetime) -> float:
    return (day + timedelta(hours=rng.randint(9, 17), minutes=rng.randint(0, 59))).timestamp()


def build_messages(shared: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Shares in time order with the drift of interests, reactions, replies, and some chatter."""
    early = [p for p in shared if topics_of(p) & {"qa", "dialog"}]
    late = [p for p in shared if p not in early]
    order = early + late
    days = sorted(START + timedelta(days=rng.uniform(0, (END - START).days)) for _ in order)
    messages: list[dict[str, Any]] = []
    for i, (paper, day) in enumerate(zip(order, days, strict=True)):
        phase = 1 if day < DRIFT else 2
        fans = [u for u, (_, a, b) in MEMBERS.items() if topics_of(paper) & set(a if phase == 1 else b)]
        sharer = rng.choice(fans or list(MEMBERS))
        ts = when(rng, day)
        note = rng.choice(["", "Worth a read: ", "For Thursday's reading group ", "New from the ACL folks: "])
        msg: dict[str, Any] = {"type": "message", "user": sharer, "ts": f"{ts:.6f}", "text": note + link(paper, i)}
        reactions: dict[str, list[str]] = defaultdict(list)
        for u in MEMBERS:
            if u == sharer:
                continue
            if u in fans and rng.random() < 0.6:
                reactions[rng.choice(["+1", "heart", "fire", "bookmark"])].append(u)
            elif rng.random() < 0.06:
                reactions[rng.choice(["-1", "thinking_face", "eyes"])].append(u)
        if reactions:
            msg["reactions"] = [{"name": e, "users": us, "count": len(us)} for e, us in reactions.items()]
        messages.append(msg)
        if rng.random() < 0.45:
            n = rng.randint(1, 3)
            msg.update(thread_ts=msg["ts"], reply_count=n)
            for k in range(n):
                messages.append(
                    {
                        "type": "message",
                        "user": rng.choice(fans or list(MEMBERS)),
                        "ts": f"{ts + 600 * (k + 1):.6f}",
                        "thread_ts": msg["ts"],
                        "parent_user_id": sharer,
                        "text": rng.choice(REPLIES),
                    }
                )
    for text, topic in EXTRA_SHARES:
        day = START + timedelta(days=rng.uniform(0, (DRIFT - START).days if topic not in ("summ", "bias") else 100))
        fans = [u for u, (_, a, _b) in MEMBERS.items() if topic in a] or list(MEMBERS)
        messages.append(
            {
                "type": "message",
                "user": rng.choice(fans),
                "ts": f"{when(rng, day):.6f}",
                "text": text,
                "reactions": [{"name": "+1", "users": fans[:2], "count": len(fans[:2])}],
            }
        )
    for _ in range(30):  # chatter that PaperPing reads and never stores
        day = START + timedelta(days=rng.uniform(0, (END - START).days))
        messages.append(
            {
                "type": "message",
                "user": rng.choice(list(MEMBERS)),
                "ts": f"{when(rng, day):.6f}",
                "text": rng.choice(
                    [
                        "Reading group moves to 3pm today.",
                        "Anyone up for lunch?",
                        "Slides from yesterday are in the drive.",
                        "Congrats on the submission!",
                    ]
                ),
            }
        )
    return sorted(messages, key=lambda m: float(m["ts"]))


def write_export(path: Path, messages: list[dict[str, Any]]) -> None:
    users = [
        {
            "id": u,
            "team_id": TEAM,
            "name": n,
            "real_name": n,
            "tz": "Europe/Berlin",
            "profile": {"display_name": n, "real_name": n},
        }
        for u, (n, _, _) in MEMBERS.items()
    ]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("users.json", json.dumps(users, indent=1))
        zf.writestr(
            "channels.json",
            json.dumps(
                [
                    {
                        "id": CHANNEL[0],
                        "name": CHANNEL[1],
                        "members": list(MEMBERS),
                        "purpose": {"value": "Papers we read (fictional demo channel)"},
                    }
                ]
            ),
        )
        days: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for m in messages:
            days[datetime.fromtimestamp(float(m["ts"]), UTC).strftime("%Y-%m-%d")].append(m)
        for day, items in sorted(days.items()):
            zf.writestr(f"{CHANNEL[1]}/{day}.json", json.dumps(items, indent=1))


def references(shared: list[dict[str, Any]], catalog: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Illustrative citing relations from unshared catalog papers to shared ones (demo data)."""
    shared_ids = {p["acl_id"] for p in shared}
    out = []
    for topic in ("summ", "faith", "qa"):
        targets = [p for p in shared if topic in topics_of(p)]
        citing = [p for p in catalog if p["acl_id"] not in shared_ids and topic in topics_of(p) and p["year"] == 2020]
        for src in rng.sample(citing, min(2, len(citing))):
            dst = rng.choice(targets)
            out.append(
                {
                    "demo_data": True,
                    "citingPaper": {"externalIds": {"ACL": src["acl_id"]}, "title": src["title"]},
                    "citedPaper": {"externalIds": {"ACL": dst["acl_id"]}, "title": dst["title"]},
                    "contexts": [f"We compare against the approach of {dst['title']} on the same benchmark."],
                }
            )
    return out


def main() -> None:
    source = Path(sys.argv[1])
    rng = random.Random(2021)
    with gzip.open(source, "rt") as fh:
        papers = [json.loads(line) for line in fh]
    shared, catalog = choose(papers, rng)
    for p in catalog:
        p["publication_date"] = pub_date(p).isoformat()
    DATA.mkdir(parents=True, exist_ok=True)
    with gzip.open(DATA / "catalog.jsonl.gz", "wt") as fh:
        for p in catalog:
            fh.write(json.dumps(p) + "\n")
    messages = build_messages(shared, rng)
    write_export(DATA / "lab-export.zip", messages)
    (DATA / "references.json").write_text(json.dumps(references(shared, catalog, rng), indent=1))
    compute_embeddings()
    print(f"{len(catalog)} catalog papers, {len(shared)} shared, {len(messages)} messages")


def compute_embeddings() -> None:
    """Index the demo exactly as ``paperping demo`` does and save the vector of every text it embeds."""
    from bot.demo.extras import QUESTION
    from bot.demo.workflow import prepare
    from socialrag.db import Database, _with_dbname, ensure_database, start_embedded
    from socialrag.knowledge import Embedder
    from socialrag.storage.embeddings import load_channel_pending, load_pending

    home = Path(tempfile.mkdtemp())
    uri, server = start_embedded(home / "pgdata")
    try:
        ensure_database(uri, "demo")
        db = Database(_with_dbname(uri, "demo"))
        db.migrate()
        prepare(db, embed=False, say=print)
        with db.connection() as conn:
            texts = {h: t for _, t, h, _ in load_pending(conn, "all-MiniLM-L6-v2")}
            texts.update((c.content_hash, c.text) for c in load_channel_pending(conn, "all-MiniLM-L6-v2"))
        texts[hashlib.md5(QUESTION.encode()).hexdigest()] = QUESTION  # the member's question the demo asks
        vectors = Embedder().encode(list(texts.values()))
        np.savez_compressed(DATA / "embeddings.npz", hashes=np.array(list(texts)), vectors=vectors.astype(np.float16))
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
