"""A small real-data knowledge base for recommender tests: ACL Anthology papers (authors and venues that
recur) as the catalog, and a lab channel that shared, liked, disliked and discussed some of them."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from bot.slack.workspace_export import import_export
from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.embed import Embedder, embed_pending
from socialrag.knowledge.papers.local_catalog import import_catalog
from tests.support.exports import msg, user, write_export
from tests.support.fixtures import ACL_DATA

AS_OF = datetime(2021, 1, 15, tzinfo=UTC)
NEUBIG = "Graham Neubig"
SHARED = {
    "weight": "2020.acl-main.249",  # Weight Poisoning Attacks on Pretrained Models (Neubig)
    "deceive": "2020.acl-main.432",  # Learning to Deceive with Attention-Based Explanations (Neubig)
    "tabert": "2020.acl-main.745",  # TaBERT (Neubig)
}
CITING = "2020.acl-main.169"  # a Neubig paper that, in this base, cites the weight-poisoning paper
CITING_SENTENCE = "Poisoned pre-trained weights can plant backdoors that survive fine-tuning [12]."


def catalog_lines(n_others: int = 90) -> list[dict[str, Any]]:
    chosen: list[dict[str, Any]] = []
    others = 0
    with gzip.open(ACL_DATA, "rt") as fh:
        for line in fh:
            d = json.loads(line)
            if NEUBIG in d["authors"] and d["year"] == 2020 and len([c for c in chosen if NEUBIG in c["authors"]]) < 25:
                chosen.append(d)
            elif d["acl_id"].startswith("2020.acl-main.") and others < n_others:
                chosen.append(d)
                others += 1
    for d in chosen:
        if d["acl_id"] == CITING:
            d["references"] = [f"acl:{SHARED['weight']}"]
        d["publication_date"] = "2020-07-05"
    return chosen


class CachedEmbedder(Embedder):
    """The real model, with answers remembered across the tests of one session."""

    cache: ClassVar[dict[str, np.ndarray]] = {}

    def encode(self, texts, *, batch_size: int = 64):  # type: ignore[no-untyped-def]
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            self.cache.update(zip(todo, super().encode(todo, batch_size=batch_size), strict=True))
        return np.stack([self.cache[t] for t in texts])


def t(day: str, hour: int = 10) -> float:
    return datetime.fromisoformat(f"{day}T{hour:02d}:00:00+00:00").timestamp()


def lab_messages(others: list[str]) -> list[dict[str, Any]]:
    w, d, tb = SHARED["weight"], SHARED["deceive"], SHARED["tabert"]
    return [
        msg(
            t("2020-11-02"),
            "U2",
            f"<https://aclanthology.org/{w}/|Weight poisoning> scary and well done",
            thread_ts=f"{t('2020-11-02'):.6f}",
            reply_count=2,
            reactions=[
                {"name": "+1", "users": ["U3", "U4"], "count": 2},
                {"name": "eyes", "users": ["U1"], "count": 1},
            ],
        ),
        msg(t("2020-11-02", 11), "U3", "the RIPPLe regulariser is a neat trick", thread_ts=f"{t('2020-11-02'):.6f}"),
        msg(t("2020-11-02", 12), "U1", "we are following up on this", thread_ts=f"{t('2020-11-02'):.6f}"),
        msg(
            t("2020-11-20"),
            "U3",
            f"https://doi.org/10.18653/v1/{d}",
            reactions=[{"name": "heart", "users": ["U2"], "count": 1}],
        ),
        msg(
            t("2020-12-01"),
            "U2",
            f"<https://www.aclweb.org/anthology/{tb}.pdf|TaBERT>",
            reactions=[{"name": "+1", "users": ["U4"], "count": 1}],
        ),
        msg(
            t("2020-12-10"),
            "U4",
            f"<https://aclanthology.org/{others[0]}/>",
            reactions=[{"name": "-1", "users": ["U2", "U3"], "count": 2}],
        ),
        msg(
            t("2020-12-15"),
            "U3",
            f"<https://aclanthology.org/{others[1]}/> and <https://aclanthology.org/{others[2]}/>",
            reactions=[{"name": "eyes", "users": ["U2"], "count": 1}],
        ),
        msg(t("2021-02-01"), "U2", f"<https://aclanthology.org/{others[3]}/|after the replay point>"),
    ]


def build_lab(db: Database, tmp_path: Path, embedder: Embedder) -> dict[str, Any]:
    lines = catalog_lines()
    others = [d["acl_id"] for d in lines if NEUBIG not in d["authors"]]
    path = tmp_path / "catalog.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in lines) + "\n")
    import_catalog(db, path)
    users = [user("U1", "graham"), user("U2", "ben"), user("U3", "chen"), user("U4", "dee")]
    export = write_export(
        tmp_path / "lab.zip", {"nlp-lab": ("C1", ["U1", "U2", "U3", "U4"], lab_messages(others))}, users
    )
    import_export(db, export, domain="lab", progress=False)
    embed_pending(db, embedder)
    with db.connection() as conn:
        citing = conn.execute(
            "SELECT paper_id FROM paper_ids WHERE scheme = 'acl' AND value = %s", (CITING,)
        ).fetchone()
        # the sentence Semantic Scholar's references endpoint would give for this citation
        storage.citations.record_reference_contexts(conn, citing[0], {f"acl:{SHARED['weight']}": (CITING_SENTENCE,)})
        storage.settings.upsert_member_setting(conn, "T0LAB", "U1", confirmed_names=["graham neubig"])
        storage.settings.upsert_member_setting(conn, "T0LAB", "U4", mentions_enabled=False)
        ids = dict(conn.execute("SELECT value, paper_id FROM paper_ids WHERE scheme = 'acl'").fetchall())
    return {"ids": ids, "others": others, "lines": lines}
