"""Indexing after new history: paper metadata from the online sources, then embeddings."""

from __future__ import annotations

import argparse

from socialrag.config import Settings
from socialrag.db import Database


def run_indexing(args: argparse.Namespace, settings: Settings, db: Database) -> None:
    """After new history: paper metadata (unless offline or told not to), then embeddings."""
    if not getattr(args, "no_metadata", False):
        if settings.offline:
            print("offline: paper metadata will be looked up on a later run")
        else:
            from socialrag.knowledge import build_sources, refresh_metadata

            with build_sources(settings) as sources:
                result = refresh_metadata(db, sources, settings)
            print(f"metadata: {result.found} papers found, {result.missing} not found yet (retried later)")
    if not getattr(args, "no_embed", False):
        embed_all(settings, db)


def embed_all(settings: Settings, db: Database) -> None:
    """Embed what lacks a vector now; what is done leaves the queue that `paperping run` works from."""
    from datetime import UTC, datetime

    from socialrag import storage
    from socialrag.knowledge import Embedder, embed_pending

    embedder = Embedder(settings.embed_model, device=settings.embed_device)
    done = embed_pending(db, embedder, batch_size=settings.embed_batch)
    with db.connection() as conn:
        storage.queue.drop_indexed(conn, embedder.model_name, datetime.now(UTC))
    print(f"embeddings: {done.embedded} papers embedded, {done.reused} reused, {done.unchanged} unchanged")
