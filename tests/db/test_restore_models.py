"""``paperping restore`` of a home that embeds with a model other than the default: the vector indexes PaperPing
makes for that model as it embeds (papers' and passages') pass the check and are restored; an index named like a
model's but defined otherwise (another operator class, another condition) is refused as a whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from bot.cli import main
from socialrag.cli.archive import backup_database
from socialrag.db import Database
from socialrag.pgtools import with_dbname
from socialrag.storage.embeddings import ensure_vector_index, index_name
from socialrag.storage.fulltext import ensure_passage_index, passage_index_name
from tests.support.pghomes import restore_target

pytestmark = pytest.mark.slow

MODEL = "BAAI/bge-small-en-v1.5"
TARGET = "pp_restore_models"


@pytest.fixture
def target(pg_server_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The restores' DATABASE_URL: a home not made yet."""
    with restore_target(pg_server_uri, TARGET, tmp_path / "home", monkeypatch) as home:
        yield home


def _home_with_a_paper(db: Database) -> psycopg.Connection:
    conn = psycopg.connect(db.conninfo, autocommit=True)
    conn.execute("INSERT INTO teams (team_id) VALUES ('T1')")
    conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('T1', 'C1', 'lab')")
    conn.execute("INSERT INTO papers (title) VALUES ('Social RAG')")
    return conn


def _indexes(conninfo: str) -> set[str]:
    with psycopg.connect(conninfo) as conn:
        return {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%hnsw%'")}


def test_a_home_embedded_with_a_second_model_restores_with_its_indexes(
    db: Database, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _home_with_a_paper(db) as conn:
        ensure_vector_index(conn, MODEL, 384)  # what embedding under PAPERPING_EMBED_MODEL does
        ensure_passage_index(conn, MODEL, 384)
        vector = str(np.linspace(0.1, 1.0, 384, dtype=np.float32).tolist())
        conn.execute(
            "INSERT INTO paper_embeddings (paper_id, model, embedding, content_hash)"
            " SELECT id, %(m)s, %(v)s::vector, 'h' FROM papers",
            {"m": MODEL, "v": vector},
        )
    backup_database(db.conninfo, tmp_path / "second-model.dump")
    db.close()
    assert main(["restore", str(tmp_path / "second-model.dump")]) == 0, capsys.readouterr().err
    assert {index_name(MODEL), passage_index_name(MODEL)} <= _indexes(target)
    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT model FROM paper_embeddings").fetchall() == [(MODEL,)]


@pytest.mark.parametrize(
    "definition",
    [
        "USING hnsw ((embedding::vector(3)) vector_l2_ops) WHERE model = 'x'",  # another operator class
        "USING hnsw ((embedding::vector(3)) vector_cosine_ops) WHERE model = 'x' OR true",  # another condition
        "USING hnsw ((embedding::vector(3)) vector_cosine_ops)",  # no condition at all
    ],
)
def test_an_index_named_like_a_models_but_made_otherwise_is_refused(
    definition: str, db: Database, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _home_with_a_paper(db) as conn:
        conn.execute(f"CREATE INDEX {index_name('x')} ON paper_embeddings {definition}")
    backup_database(db.conninfo, tmp_path / "odd-index.dump")
    db.close()
    assert main(["restore", str(tmp_path / "odd-index.dump")]) == 2
    err = capsys.readouterr().err
    assert "nothing was restored" in err and "INDEX public paper_embeddings_hnsw_x" in err, err
    with psycopg.connect(with_dbname(target, "postgres")) as conn:
        assert conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'pp_restore_models%'").fetchone() == (
            0,
        )


def test_a_file_naming_more_model_indexes_than_a_home_has_is_refused_before_any_is_built(
    db: Database, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from socialrag.cli.restore_check import MOST_MODEL_INDEXES

    with _home_with_a_paper(db) as conn:  # each would be built in the check's reference home
        for k in range(MOST_MODEL_INDEXES + 1):
            ensure_vector_index(conn, f"model-{k}", 3)
    backup_database(db.conninfo, tmp_path / "many.dump")
    db.close()
    assert main(["restore", str(tmp_path / "many.dump")]) == 2
    err = capsys.readouterr().err
    assert f"vector indexes of embedding models; a PaperPing home has at most {MOST_MODEL_INDEXES}" in err, err
