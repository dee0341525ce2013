"""A paper no source knows is embedded from the words members wrote about it. Those words stay with their
channel: each channel that shares such a paper gets a vector of its own, made from its messages only, read by
its own ranking only, and gone with a deletion, forget-me or a purge."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge.intake import index_messages
from socialrag.knowledge.links import find_paper_refs
from socialrag.knowledge.live import record_deletion
from socialrag.knowledge.papers.resolve import open_sources
from socialrag.knowledge.queue_worker import Indexer, IndexerConfig
from socialrag.knowledge.shared_pace import DatabasePace
from socialrag.models import Channel, Member, Message
from socialrag.recommender.retrieve.context import load_channel_context
from tests.db.test_indexing import NOW
from tests.support.labbase import CachedEmbedder
from tests.support.scholar_standin import ScholarStandIn, source_urls

LAB, PARTNER = "T0LAB", "T0PARTNER"
UNKNOWN = "https://aclanthology.org/2099.nowhere-1.7"
LAB_WORDS = f"{UNKNOWN} our draft on protein folding with graph networks, not public yet"
PARTNER_WORDS = f"{UNKNOWN} robots learning to grasp from a few demonstrations"
LAB_MORE = f"{UNKNOWN} the second half covers the folding benchmarks"


def _share(team: str, ts: str, text: str, user: str) -> Message:
    return Message(team, "C1", ts, user, text, NOW - timedelta(days=2), papers=find_paper_refs(text))


def _vectors(db: Database, embedder: CachedEmbedder, pid: int) -> dict[str, np.ndarray | None]:
    with db.connection() as conn:
        return {
            team: load_channel_context(conn, team, "C1", NOW, embedder.model_name).vectors.get(pid)
            for team in (LAB, PARTNER)
        }


def _close(vector: np.ndarray | None, embedder: CachedEmbedder, text: str) -> bool:
    return vector is not None and float(vector @ embedder.encode([text])[0]) > 0.999


def _words_on_disk(db: Database, folder: Path) -> set[str]:
    """The hashes of channel texts (members' words) found in the embedding cache's files."""
    with db.connection() as conn:
        words = {r[0] for r in conn.execute("SELECT content_hash FROM channel_text_embeddings").fetchall()}
    assert words, "the test needs a vector made from members' words"
    on_disk = set()
    for shard in folder.rglob("*.npz"):
        with np.load(shard) as data:
            on_disk |= {h.decode() for h in data["hashes"].tolist()}
    return words & on_disk


def test_each_channel_embeds_an_unknown_paper_from_its_own_words(db: Database, tmp_path: Path) -> None:
    scholar = ScholarStandIn().start()
    embedder = CachedEmbedder(cache=tmp_path / "shared-vectors")
    try:
        with db.connection() as conn:
            for team in (LAB, PARTNER):
                storage.workspaces.upsert_team(conn, team)
                storage.workspaces.upsert_channel(conn, Channel(team, "C1", "papers"))
            storage.workspaces.upsert_members(conn, [Member(LAB, "U1", "ana"), Member(PARTNER, "UP", "pat")])
            index_messages(conn, [_share(LAB, "1.0", LAB_WORDS, "U1"), _share(PARTNER, "1.0", PARTNER_WORDS, "UP")])
            pid = conn.execute("SELECT paper_id FROM paper_ids WHERE value = '2099.nowhere-1.7'").fetchone()[0]
        settings = Settings(home=tmp_path, **source_urls(scholar.url))  # type: ignore[arg-type]
        settings = settings.with_changes(crossref_api_url=scholar.url + "crossref/")
        indexer = Indexer(db, embedder, open_sources(settings, DatabasePace(db)), IndexerConfig(max_attempts=5))
        indexer.run()

        seen = _vectors(db, embedder, pid)
        assert _close(seen[LAB], embedder, LAB_WORDS), "the lab's ranking reads a vector of the lab's words"
        assert _close(seen[PARTNER], embedder, PARTNER_WORDS), "and the partner's of the partner's, nothing mixed"
        with db.connection() as conn:
            public = conn.execute("SELECT count(*) FROM paper_embeddings WHERE paper_id = %s", (pid,)).fetchone()[0]
            progress = storage.queue.load_index_progress(conn, LAB, "C1", embedder.model_name)
        assert public == 0, "no vector made from members' words is shared by every workspace"
        assert _words_on_disk(db, tmp_path / "shared-vectors") == set(), "nor kept in the cache every home shares"
        assert progress.embedded == 1

        # a second share in the lab: the lab's vector follows its words, the partner's stays as it was
        with db.connection() as conn:
            index_messages(conn, [_share(LAB, "2.0", LAB_MORE, "U1")])
        indexer.run()
        seen = _vectors(db, embedder, pid)
        assert _close(seen[LAB], embedder, f"{LAB_WORDS}\n{LAB_MORE}")
        assert _close(seen[PARTNER], embedder, PARTNER_WORDS)

        # the first share is deleted: its words leave the lab's vector at once, which is made again from the rest
        with db.connection() as conn:
            record_deletion(conn, LAB, "C1", "1.0")
        assert _vectors(db, embedder, pid)[LAB] is None
        indexer.run()
        assert _close(_vectors(db, embedder, pid)[LAB], embedder, LAB_MORE)

        # the partner's member asks to be forgotten: the partner's vector goes, the lab's stays
        with db.connection() as conn:
            storage.privacy.forget_member(conn, PARTNER, "UP")
        seen = _vectors(db, embedder, pid)
        assert seen[PARTNER] is None and _close(seen[LAB], embedder, LAB_MORE)
        indexer.close()
    finally:
        scholar.stop()
