"""The embedding cache every home on a machine shares: what one writes another reads, exactly; a broken file
costs an encoding, never an answer; the cache has a bound."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from socialrag.knowledge import vector_cache
from socialrag.knowledge.vector_cache import VectorCache, model_folder


def _vectors(n: int, seed: int = 0, dim: int = 8) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        hashlib.md5(f"text {seed} {i}".encode()).hexdigest(): rng.normal(size=dim).astype(np.float32) for i in range(n)
    }


def test_what_one_home_writes_another_reads_exactly(tmp_path: Path) -> None:
    first, second = VectorCache(tmp_path, "m"), VectorCache(tmp_path, "m")
    assert second.get(list(_vectors(3))) == {}, "the second reads the folder before anything is there"
    made = _vectors(5000)
    assert first.put(made) == 5000
    assert len(list(first.folder.glob("*.npz"))) == 2, "at most SHARD_ROWS vectors a file"
    got = second.get([*made, "0" * 32])
    assert set(got) == set(made)
    assert all(np.array_equal(got[h], v) for h, v in made.items())
    assert first.put(made) == 0, "a vector already kept is not written again"
    assert second.dimension == 8
    assert VectorCache(tmp_path, "other model").get(list(made)) == {}, "models never mix"


def test_a_broken_or_foreign_file_is_skipped_and_the_rest_still_serves(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path, "m")
    good = _vectors(4)
    cache.put(good)
    (cache.folder / "cut-short.npz").write_bytes(b"PK\x03\x04 not really a zip")
    np.savez(cache.folder / "no-hashes.npz", vectors=np.zeros((2, 8), dtype=np.float32))
    np.savez(cache.folder / "pickled.npz", hashes=np.array([{"x": 1}], dtype=object), vectors=np.zeros((1, 8)))
    wrong_dim = {"f" * 32: np.ones(3, dtype=np.float32)}
    np.savez(cache.folder / "other-dim.npz", hashes=np.array(list(wrong_dim), dtype="S32"), vectors=np.ones((1, 3)))
    fresh = VectorCache(tmp_path, "m")
    got = fresh.get([*good, "f" * 32])
    assert set(got) == set(good), "the vectors of another dimension are not handed out"


def test_only_text_hashes_are_kept_and_the_cache_has_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = VectorCache(tmp_path, "m")
    assert cache.put({"../../etc/passwd": np.ones(8, dtype=np.float32)}) == 0
    monkeypatch.setattr(vector_cache, "MAX_ENTRIES", 10)
    assert cache.put(_vectors(25)) == 10
    assert cache.put(_vectors(5, seed=1)) == 0
    assert len(VectorCache(tmp_path, "m")) == 10


def test_an_unwritable_folder_loses_nothing(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    cache = VectorCache(blocked, "m")
    assert cache.put(_vectors(3)) == 0
    assert cache.get(list(_vectors(3))) == {}


def test_model_folders_are_safe_names() -> None:
    assert model_folder("all-MiniLM-L6-v2").startswith("all-MiniLM-L6-v2-")
    odd = model_folder("../../some/path with spaces")
    assert "/" not in odd and not odd.startswith(".")
    assert model_folder("a/b") != model_folder("a-b")
