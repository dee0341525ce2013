"""Paper vectors kept on disk across homes: computed once per model and public text on this machine.

A new home (a replay, a second workspace's database, an evaluation run) importing the same catalog finds its
vectors here instead of encoding 18,000 abstracts again. Only public paper text (title and abstract) is kept:
members' words, which some papers without metadata are embedded from, never reach this folder.

Layout: ``ROOT/<model>/<shard>.npz``, each shard an uncompressed ``.npz`` with ``hashes`` (the md5 of each text,
as the knowledge base keys it) and ``vectors`` (float32), at most ``SHARD_ROWS`` rows. A shard is written to a
temporary name and renamed, so a reader never sees half of one, and two processes never write the same file. A
shard that cannot be read (cut short, another format, another dimension) is skipped with a warning: it costs an
encoding, never an answer. The index of hashes is bounded (``MAX_ENTRIES``); past it nothing more is written.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import uuid
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

SHARD_ROWS = 4096
MAX_ENTRIES = 2_000_000  # about 3 GB of float32 vectors of 384 dimensions; the index itself stays near 250 MB
_HASH = re.compile(rb"^[0-9a-f]{32}$")


def model_folder(model: str) -> str:
    """A folder name for a model name or path that is safe on every file system and tells models apart."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.")[:60] or "model"
    return f"{readable}-{hashlib.sha256(model.encode()).hexdigest()[:8]}"


class VectorCache:
    """The vectors of one model under ``root``; safe to share between threads and processes."""

    def __init__(self, root: Path, model: str) -> None:
        self.folder = root / model_folder(model)
        self._lock = threading.Lock()
        self._index: dict[str, tuple[Path, int]] | None = None
        self._shards_seen: set[Path] = set()
        self._dimension: int | None = None

    def get(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors on disk for these text hashes (the ones not there are left out)."""
        with self._lock:
            index = self._load_index()
            wanted: dict[Path, list[tuple[str, int]]] = {}
            for h in dict.fromkeys(hashes):
                where = index.get(h) or self._refresh(index).get(h)
                if where is not None:
                    wanted.setdefault(where[0], []).append((h, where[1]))
            out: dict[str, np.ndarray] = {}
            for shard, rows in wanted.items():
                vectors = self._read_vectors(shard)
                if vectors is None:
                    continue
                out.update((h, vectors[row].copy()) for h, row in rows if row < len(vectors))
            return out

    def put(self, vectors: Mapping[str, np.ndarray]) -> int:
        """Keep these vectors (by text hash); returns how many were new. A folder that cannot be written is
        logged and left alone: the caller has its vectors either way."""
        with self._lock:
            index = self._refresh(self._load_index())
            new = [(h, v) for h, v in vectors.items() if h not in index and _HASH.match(h.encode())]
            room = MAX_ENTRIES - len(index)
            if room < len(new):
                log.warning("embedding cache %s is full (%d vectors): %d not kept", self.folder, len(index), len(new))
                new = new[: max(0, room)]
            written = 0
            for start in range(0, len(new), SHARD_ROWS):
                part = new[start : start + SHARD_ROWS]
                try:
                    shard = self._write(part)
                except OSError as exc:
                    log.warning("embedding cache %s not written: %s", self.folder, exc)
                    break
                index.update((h, (shard, row)) for row, (h, _) in enumerate(part))
                self._shards_seen.add(shard)
                written += len(part)
            return written

    @property
    def dimension(self) -> int | None:
        """The length of the vectors kept, once a shard has been read or written (None before)."""
        with self._lock:
            self._load_index()
            return self._dimension

    def __len__(self) -> int:
        with self._lock:
            return len(self._refresh(self._load_index()))

    # ----- the files -------------------------------------------------------------------------------------

    def _load_index(self) -> dict[str, tuple[Path, int]]:
        if self._index is None:
            self._index = {}
            self._refresh(self._index)
        return self._index

    def _refresh(self, index: dict[str, tuple[Path, int]]) -> dict[str, tuple[Path, int]]:
        """Add the shards another process wrote since the last look."""
        try:
            shards = sorted(p for p in self.folder.glob("*.npz") if p not in self._shards_seen)
        except OSError:
            return index
        for shard in shards:
            self._shards_seen.add(shard)
            hashes = self._read_hashes(shard)
            if hashes is None or len(index) + len(hashes) > MAX_ENTRIES:
                continue
            for row, h in enumerate(hashes):
                index.setdefault(h, (shard, row))
        return index

    def _read_hashes(self, shard: Path) -> list[str] | None:
        try:
            with np.load(shard, allow_pickle=False) as data:
                raw = data["hashes"]
                shape = data["vectors"].shape if self._dimension is None else None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            log.warning("embedding cache: %s skipped (%s)", shard, exc)
            return None
        if shape is not None:
            self._dimension = int(shape[1]) if len(shape) == 2 else None
        if raw.dtype.kind not in "US" or raw.ndim != 1 or raw.shape[0] > SHARD_ROWS:
            log.warning("embedding cache: %s skipped (not a shard of text hashes)", shard)
            return None
        return [h.decode() if isinstance(h, bytes) else str(h) for h in raw.tolist()]

    def _read_vectors(self, shard: Path) -> np.ndarray | None:
        try:
            with np.load(shard, allow_pickle=False) as data:
                vectors = np.asarray(data["vectors"], dtype=np.float32)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            log.warning("embedding cache: %s skipped (%s)", shard, exc)
            return None
        if vectors.ndim != 2 or (self._dimension is not None and vectors.shape[1] != self._dimension):
            log.warning("embedding cache: %s skipped (vectors of another shape)", shard)
            return None
        return vectors

    def _write(self, part: list[tuple[str, np.ndarray]]) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        tmp, shard = self.folder / f".{name}.tmp", self.folder / f"{name}.npz"
        hashes = np.array([h for h, _ in part], dtype="S32")
        vectors = np.stack([np.asarray(v, dtype=np.float32) for _, v in part])
        try:
            with open(tmp, "wb") as fh:
                np.savez(fh, hashes=hashes, vectors=vectors)
            os.replace(tmp, shard)
        finally:
            tmp.unlink(missing_ok=True)
        if self._dimension is None:
            self._dimension = int(vectors.shape[1])
        return shard
