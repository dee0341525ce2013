"""The local catalog (real ACL Anthology data) and the embedding cache (the real bundled model)."""

from __future__ import annotations

import gzip
import itertools
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bot.slack.workspace_export import import_export
from socialrag.db import Database
from socialrag.knowledge.embed import Embedder, embed_pending
from socialrag.knowledge.papers.local_catalog import import_catalog, iter_catalog, parse_reference
from tests.support.exports import msg, user, write_export
from tests.support.fixtures import ACL_DATA, ACL_PAPERS

T0 = 1_700_000_000.0


def acl_subset(tmp_path: Path, n: int, extra: list[str] | None = None) -> Path:
    path = tmp_path / "catalog.jsonl.gz"
    with gzip.open(ACL_DATA, "rt") as src, gzip.open(path, "wt") as dst:
        for line in itertools.islice(src, n):
            dst.write(line)
        for line in extra or []:
            dst.write(line + "\n")
    return path


def test_the_real_acl_sample_parses_as_it_is() -> None:
    problems: list[str] = []
    papers = list(iter_catalog(ACL_DATA, problems))
    assert len(papers) == ACL_PAPERS and problems == []
    assert all("acl" in p.ids and p.title and p.abstract for p in papers)


def test_catalog_import_is_idempotent_and_joins_authors_and_venues(db: Database, tmp_path: Path) -> None:
    bad = [
        '{"title": "no identifier"}',
        "not json",
        '{"doi": "10.1/x", "authors": "Ana"}',
        json.dumps(
            {
                "arxiv_id": "2401.01234v2",
                "title": "T",
                "popularity": 12,
                "references": ["acl:2016.gwc-1.1", "10.1145/1.2", "https://arxiv.org/abs/1706.03762", "garbage"],
                "unknown_field": 1,
            }
        ),
    ]
    path = acl_subset(tmp_path, 300, bad)
    report = import_catalog(db, path)
    assert report.papers == 301
    assert len(report.problems) == 3 and "line 301" in report.problems[0]
    with db.connection() as conn:
        before = conn.execute("SELECT count(*), string_agg(xmin::text, ',' ORDER BY id) FROM papers").fetchone()
        shared_authors = conn.execute(
            "SELECT count(*) FROM (SELECT author_id FROM paper_authors GROUP BY 1 HAVING count(*) > 1) a"
        ).fetchone()
        venues = conn.execute("SELECT count(*) FROM venues").fetchone()
        refs = conn.execute("SELECT cited_scheme, cited_value FROM paper_references ORDER BY 1, 2").fetchall()
    import_catalog(db, path)
    with db.connection() as conn:
        after = conn.execute("SELECT count(*), string_agg(xmin::text, ',' ORDER BY id) FROM papers").fetchone()
    assert before == after and before is not None and before[0] == 301
    assert shared_authors is not None and shared_authors[0] > 0
    assert venues is not None and 0 < venues[0] < 20
    assert refs == [("acl", "2016.gwc-1.1"), ("arxiv", "1706.03762"), ("doi", "10.1145/1.2")]


def test_popularity_is_read_as_it_was_known_then(db: Database, tmp_path: Path) -> None:
    """A replay sees the last popularity reading before its moment, never a later count."""
    from datetime import UTC, datetime

    from socialrag.storage.context_rows import load_paper_infos

    lines = [
        json.dumps(
            {
                "arxiv_id": "2001.00001",
                "title": "Growing",
                "popularity": 90,
                "popularity_history": [["2020-03-01", 5], ["2020-01-01", 1], ["2020-06-01", 40]],
            }
        ),
        json.dumps({"arxiv_id": "2001.00002", "title": "Bad", "popularity_history": [["soon", 3]]}),
        json.dumps({"arxiv_id": "2001.00003", "title": "Bad too", "popularity_history": {"2020-01-01": 3}}),
    ]
    path = tmp_path / "pop.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = import_catalog(db, path)
    assert report.papers == 1 and len(report.problems) == 2
    assert "line 2" in report.problems[0] and "popularity_history" in report.problems[0]
    with db.connection() as conn:
        (pid,) = conn.execute("SELECT paper_id FROM paper_ids WHERE value = '2001.00001'").fetchone()
        at = {
            d: load_paper_infos(conn, [pid], datetime(2020, m, d2, tzinfo=UTC))[pid].popularity
            for d, (m, d2) in {"first day": (1, 1), "february": (2, 15), "april": (4, 2), "july": (7, 1)}.items()
        }
        now = load_paper_infos(conn, [pid], datetime.now(UTC))[pid].popularity
        plain = load_paper_infos(conn, [pid])[pid].popularity
    assert at == {"first day": 1.0, "february": 1.0, "april": 5.0, "july": 40.0}
    assert now == plain == 90.0  # today's count was recorded when the paper was stored


def test_shared_link_and_catalog_entry_are_one_paper(db: Database, tmp_path: Path) -> None:
    export = write_export(
        tmp_path / "e.zip",
        {
            "lab": (
                "C1",
                ["U1"],
                [msg(T0, "U1", "<https://www.aclweb.org/anthology/2016.gwc-1.2.pdf|WSD for Russian WordNet>")],
            )
        },
        [user("U1", "ana")],
    )
    import_export(db, export, progress=False)
    import_catalog(db, acl_subset(tmp_path, 5))
    with db.connection() as conn:
        row = conn.execute(
            """SELECT p.title, p.in_catalog FROM message_papers mp JOIN papers p ON p.id = mp.paper_id"""
        ).fetchone()
    assert row == ("Word Sense Disambiguation in Monolingual Dictionaries for Building Russian WordNet", True)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("arXiv:1706.03762", "arxiv:1706.03762"),
        ("10.18653/v1/P19-1001", "doi:10.18653/v1/p19-1001"),
        ("1706.03762", "arxiv:1706.03762"),
    ],
)
def test_reference_forms(text: str, key: str) -> None:
    ref = parse_reference(text)
    assert ref is not None and ref.key == key


class CountingEmbedder(Embedder):
    def __init__(self, cache: Path | None = None) -> None:
        super().__init__(cache=cache)
        self.encoded = 0

    def encode(self, texts, *, batch_size: int = 64) -> np.ndarray:  # type: ignore[no-untyped-def]
        self.encoded += len(texts)
        return super().encode(texts, batch_size=batch_size)


@pytest.mark.slow
def test_embedding_cache_with_the_real_model(db: Database, tmp_path: Path) -> None:
    with gzip.open(ACL_DATA, "rt") as fh:
        head = json.loads(fh.readline())
    twin = json.dumps({"doi": "10.1234/twin", "title": head["title"], "abstract": head["abstract"]})
    import_catalog(db, acl_subset(tmp_path, 40, [twin]))
    embedder = CountingEmbedder()
    first = embed_pending(db, embedder, batch_size=16)
    assert (first.embedded, first.reused) == (40, 1), "a paper with the same text shares one encoding"
    assert embedder.encoded == 40
    second = embed_pending(db, embedder)
    assert (second.embedded, second.unchanged) == (0, 41) and embedder.encoded == 40
    with db.connection() as conn:
        conn.execute("UPDATE papers SET abstract = abstract || ' Revised.' WHERE id = (SELECT min(id) FROM papers)")
        dims = conn.execute("SELECT DISTINCT vector_dims(embedding) FROM paper_embeddings").fetchall()
        nearest = conn.execute(
            """SELECT p.title FROM paper_embeddings e JOIN papers p ON p.id = e.paper_id
                WHERE e.model = 'all-MiniLM-L6-v2'
                ORDER BY e.embedding::vector(384) <=> (SELECT embedding::vector(384) FROM paper_embeddings
                    WHERE paper_id = (SELECT min(id) FROM papers)) LIMIT 2"""
        ).fetchall()
    third = embed_pending(db, embedder)
    assert third.embedded == 1 and embedder.encoded == 41
    assert dims == [(384,)]
    assert nearest[0][0] == "Adverbs in Sanskrit Wordnet"


@pytest.mark.parametrize(
    ("month", "read"),
    [
        ("November", (11, None)),
        ("Sept", (9, None)),
        ("7", (7, None)),
        (12, (12, None)),
        ("05 August", (8, 5)),
        ("27--30 January", (1, 27)),
        ("October-November", (10, None)),
        ("October–November", (10, None)),
        ("13", None),
        ("", None),
        ("Spring", None),
        (None, None),
    ],
)
def test_month_as_the_acl_anthology_writes_it(month: object, read: tuple[int, int | None] | None) -> None:
    from socialrag.knowledge.papers.local_catalog import parse_month

    assert parse_month(month) == read


def test_a_date_known_to_the_month_or_year_is_offered_only_once_it_surely_existed(db: Database, tmp_path: Path) -> None:
    """The catalog's year and month used to become January 1 of the year: a replay of late August offered
    November's papers. Now a paper is a candidate from the last day it may have come out."""
    from datetime import UTC, datetime

    from socialrag.recommender.rank.history import pool_rows
    from socialrag.recommender.rank.universe import build_universe
    from socialrag.storage.context_rows import load_paper_infos
    from socialrag.storage.embeddings import load_catalog_neighbours, upsert_embeddings

    rows = [
        {"acl_id": "2020.emnlp-main.1", "title": "November paper", "year": 2020, "month": "November"},
        {"acl_id": "2020.acl-main.1", "title": "July paper", "year": 2020, "month": "7"},
        {"acl_id": "2020.lrec-1.1", "title": "A paper of 2020", "year": 2020},
        {
            "acl_id": "2020.coling-main.1",
            "title": "Dated",
            "year": 2020,
            "month": "December",
            "publication_date": "2020-12-08",
        },
    ]
    path = tmp_path / "dates.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_catalog(db, path)
    with db.connection() as conn:
        ids = dict(conn.execute("SELECT value, paper_id FROM paper_ids WHERE scheme = 'acl'").fetchall())
        found = {
            r[0]: (r[1], r[2], r[3])
            for r in conn.execute("SELECT id, publication_date::text, date_precision, available_on::text FROM papers")
        }
        vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
        upsert_embeddings(conn, "all-MiniLM-L6-v2", [(pid, f"h{pid}", vec) for pid in ids.values()])

        def offered(day: datetime) -> set[str]:
            got = load_catalog_neighbours(conn, "all-MiniLM-L6-v2", [vec], before=day, after=None, k=10)
            return {acl for acl, pid in ids.items() if pid in got}

        late_august = offered(datetime(2020, 8, 25, tzinfo=UTC))
        december = offered(datetime(2020, 12, 5, tzinfo=UTC))
        next_year = offered(datetime(2021, 1, 2, tzinfo=UTC))
        infos = load_paper_infos(conn, list(ids.values()))
    assert found[ids["2020.emnlp-main.1"]] == ("2020-11-01", "month", "2020-11-30")
    assert found[ids["2020.lrec-1.1"]] == (None, "year", "2020-12-31")
    assert found[ids["2020.coling-main.1"]] == ("2020-12-08", "day", "2020-12-08"), "a day beats a month"
    assert late_august == {"2020.acl-main.1"}, "November's papers are not offered in August"
    assert december == {"2020.acl-main.1", "2020.emnlp-main.1"}
    assert next_year == set(ids), "the year-only paper surely existed by the year's end"
    # the replay's own pool keeps the same rule
    universe = build_universe(infos, {pid: vec for pid in ids.values()})
    at = datetime(2020, 8, 25, tzinfo=UTC).timestamp()
    pool = {int(universe.ids[r]) for r in pool_rows(universe, at, 365, np.zeros(0, dtype=np.int64))}
    assert pool == {ids["2020.acl-main.1"]}


@pytest.mark.parametrize(
    ("zone", "moment", "offered"),
    [
        ("America/Los_Angeles", "2020-11-30T05:00:00+00:00", True),  # its midnight of Nov 30 is 08:00 UTC
        ("Pacific/Kiritimati", "2020-11-29T12:00:00+00:00", False),  # its midnight of Nov 30 is 10:00 UTC on Nov 29
    ],
)
def test_a_day_begins_at_midnight_utc_whatever_the_servers_time_zone(
    db: Database, zone: str, moment: str, offered: bool
) -> None:
    """A paper that surely existed from November 30 is offered from midnight UTC of that day, as the replay offers
    it, in a session of any time zone (an outside Postgres in another zone shifted a replay's days)."""
    from datetime import date

    from socialrag.models import Paper
    from socialrag.storage.embeddings import load_catalog_neighbours, load_catalog_window, upsert_embeddings
    from socialrag.storage.papers import record_papers

    vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
    at = datetime.fromisoformat(moment)
    with db.connection() as conn:
        paper = Paper(
            {"acl": "2020.emnlp-main.9"},
            "acl",
            "A November paper",
            publication_date=date(2020, 11, 1),
            date_precision="month",
        )
        (pid,) = record_papers(conn, [paper], in_catalog=True)
        upsert_embeddings(conn, "all-MiniLM-L6-v2", [(pid, "h", vec)])
        assert conn.execute("SELECT available_on::text FROM papers WHERE id = %s", (pid,)).fetchone() == ("2020-11-30",)
        conn.execute(f"SET TIME ZONE '{zone}'")
        near = load_catalog_neighbours(conn, "all-MiniLM-L6-v2", [vec], before=at, after=None, k=10)
        window = load_catalog_window(
            conn, "all-MiniLM-L6-v2", before=at, after=datetime(2020, 11, 30, tzinfo=UTC), most=10
        )
        late = load_catalog_window(conn, "all-MiniLM-L6-v2", before=datetime(2021, 1, 1, tzinfo=UTC), after=at, most=10)
    assert (pid in near) is offered
    assert (window == [pid]) is offered
    assert late == ([] if offered else [pid]), "a window from the same moment starts at the same midnight"


def test_a_date_a_source_gives_as_its_years_first_day_is_offered_in_a_replay_from_the_years_end(db: Database) -> None:
    """PubMed gives a paper known only to its year as January 1 of it: a replay (`recommend --as-of`) offers it from
    the year's last day, as the project's replay does, and serving offers it now."""
    from datetime import UTC, date, datetime

    from socialrag.models import Paper
    from socialrag.recommender.rank.universe import build_universe
    from socialrag.storage.context_rows import load_paper_infos
    from socialrag.storage.embeddings import load_catalog_neighbours, upsert_embeddings
    from socialrag.storage.papers import record_papers

    vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
    with db.connection() as conn:
        (pid,) = record_papers(
            conn,
            [
                Paper(
                    {"pmid": "123"},
                    "pubmed",
                    "A paper of 2020",
                    year=2020,
                    publication_date=date(2020, 1, 1),
                    date_precision="year",
                )
            ],
            in_catalog=True,
        )
        upsert_embeddings(conn, "all-MiniLM-L6-v2", [(pid, "h", vec)])
        stored = conn.execute("SELECT available_on FROM papers WHERE id = %s", (pid,)).fetchone()

        def offered(day: datetime, serving: bool) -> bool:
            found = load_catalog_neighbours(
                conn, "all-MiniLM-L6-v2", [vec], before=day, after=None, k=10, serving=serving
            )
            return pid in found

        march = datetime(2020, 3, 10, tzinfo=UTC)
        assert not offered(march, serving=False) and offered(march, serving=True)
        assert offered(datetime(2021, 1, 2, tzinfo=UTC), serving=False)
        infos = load_paper_infos(conn, [pid])
    assert stored == (date(2020, 12, 31),)
    universe = build_universe(infos, {pid: vec})
    assert universe.available[0] == datetime(2020, 12, 31, tzinfo=UTC).timestamp(), "the replay's own rule"


@pytest.mark.slow
def test_a_second_home_takes_the_catalog_vectors_from_the_shared_cache(
    db: Database, pg_server_uri: str, tmp_path: Path
) -> None:
    """Two homes (two databases) on one machine: the second import of the same catalog encodes nothing, and its
    vectors are the first home's, exactly."""
    import psycopg

    from socialrag.db import _with_dbname

    catalog = acl_subset(tmp_path, 30)
    cache = tmp_path / "cache"
    import_catalog(db, catalog)
    first = CountingEmbedder(cache)
    assert embed_pending(db, first).embedded == 30 and first.encoded == 30
    name = f"pp_second_home_{tmp_path.name[-12:].replace('-', '_')}"
    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "paperping_template"')
    other = Database(_with_dbname(pg_server_uri, name))
    try:
        import_catalog(other, catalog)
        second = CountingEmbedder(cache)
        done = embed_pending(other, second)
        assert (done.embedded, done.reused, second.encoded) == (0, 30, 0)
        query = "SELECT p.title, e.embedding::text FROM paper_embeddings e JOIN papers p ON p.id = e.paper_id"
        with db.connection() as conn, other.connection() as conn2:
            assert sorted(conn.execute(query).fetchall()) == sorted(conn2.execute(query).fetchall())
    finally:
        other.close()
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_refit_reads_papers_as_arrays_just_as_a_ranking_reads_their_rows(db: Database, tmp_path: Path) -> None:
    """A refit reads its ten thousand papers as arrays (``load_paper_arrays``), not as ``PaperInfo`` rows: every
    paper's dates (to the day, the month, the year, a year alone, nothing), venue (or none), authors in order and
    readings come out the same either way."""
    from socialrag.recommender.rank.universe import build_universe, universe_from_arrays
    from socialrag.storage.context_rows import load_paper_infos
    from socialrag.storage.embeddings import upsert_embeddings
    from socialrag.storage.rankers import load_paper_arrays, load_readings

    rows = [
        {"acl_id": "a.1", "title": "Day", "year": 2020, "month": "December", "publication_date": "2020-12-08",
         "authors": ["Ana Bell", "Chen Wu", "Dara Ek"], "venue": "EMNLP"},
        {"acl_id": "a.2", "title": "Month", "year": 2020, "month": "November", "authors": ["Dara Ek", "Ana Bell"],
         "venue": "EMNLP"},
        {"acl_id": "a.3", "title": "Year", "year": 2019, "authors": ["Eli Fox"], "venue": "ACL"},
        {"acl_id": "a.4", "title": "No venue, no authors", "year": 2021, "month": "2"},
    ]  # fmt: skip
    path = tmp_path / "arrays.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_catalog(db, path)
    with db.connection() as conn:
        undated = conn.execute("INSERT INTO papers (title) VALUES ('Nothing known') RETURNING id").fetchone()[0]
        ids = [r[0] for r in conn.execute("SELECT id FROM papers ORDER BY id DESC").fetchall()]
        conn.execute(
            "INSERT INTO paper_popularity (paper_id, observed_at, value) VALUES (%s, '2021-01-01', 4), "
            "(%s, '2021-03-01', 9), (%s, '2020-12-01', 2)",
            (ids[1], ids[1], ids[2]),
        )
        vectors = {pid: np.full(384, 1.0 + k, dtype=np.float32) for k, pid in enumerate(ids)}
        upsert_embeddings(conn, "all-MiniLM-L6-v2", [(pid, f"h{pid}", v) for pid, v in vectors.items()])
        readings = load_readings(conn, ids)
        by_rows = build_universe(load_paper_infos(conn, ids), vectors, readings)
        by_arrays = universe_from_arrays(load_paper_arrays(conn, ids), vectors, readings)
    assert sorted(by_rows.ids.tolist()) == sorted(by_arrays.ids.tolist()) == sorted(ids)
    assert undated in ids
    for pid in ids:
        a, b = by_rows.index[pid], by_arrays.index[pid]
        for field in ("published", "earliest", "available"):
            x, y = getattr(by_rows, field)[a], getattr(by_arrays, field)[b]
            assert (np.isnan(x) and np.isnan(y)) or x == y, (pid, field, x, y)
        authors = [u.author_ids[u.author_flat[u.author_start[r] : u.author_start[r + 1]]].tolist()
                   for u, r in ((by_rows, a), (by_arrays, b))]  # fmt: skip
        assert authors[0] == authors[1], pid
        venue = [u.venues[r] for u, r in ((by_rows, a), (by_arrays, b))]
        assert (venue[0] < 0) == (venue[1] < 0)
        at = datetime(2021, 2, 1, tzinfo=UTC).timestamp()
        x, y = by_rows.popularity_at(np.array([a]), at)[0], by_arrays.popularity_at(np.array([b]), at)[0]
        assert (np.isnan(x) and np.isnan(y)) or x == y
        assert np.array_equal(by_rows.vectors[a], by_arrays.vectors[b])
    assert by_rows.n_venues == by_arrays.n_venues == 2
    same_venue = [by_arrays.venues[by_arrays.index[p]] for p in ids[-2:]]  # the two EMNLP papers
    assert same_venue[0] == same_venue[1] >= 0
    assert np.isnan(by_arrays.published[by_arrays.index[undated]])


def test_stored_vectors_read_back_bit_for_bit(db: Database) -> None:
    """A refit reads thousands of vectors in pgvector's binary form, decoded all at once: each comes back exactly
    as stored (signs, tiny and huge values); a paper with no shared vector has its channel's own for that channel
    only; an unknown id is simply absent."""
    from socialrag.storage.embeddings import load_vectors, upsert_embeddings

    rng = np.random.default_rng(8)
    with db.connection() as conn:
        ids = [conn.execute("INSERT INTO papers (title) VALUES (%s) RETURNING id", (f"V{k}",)).fetchone()[0]
               for k in range(40)]  # fmt: skip
        stored = {pid: (rng.normal(size=384) * 10.0 ** rng.integers(-30, 30, 384)).astype(np.float32) for pid in ids}
        upsert_embeddings(conn, "all-MiniLM-L6-v2", [(pid, f"h{pid}", stored[pid]) for pid in ids[1:]])
        own = np.linspace(-1, 1, 384, dtype=np.float32)
        conn.execute("INSERT INTO teams (team_id) VALUES ('TV')")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('TV', 'CV', 'lab')")
        conn.execute(
            "INSERT INTO channel_text_embeddings (team_id, channel_id, paper_id, model, content_hash, embedding) "
            "VALUES ('TV', 'CV', %s, 'all-MiniLM-L6-v2', 'x', %s)",
            (ids[0], own),
        )
        everyone = load_vectors(conn, "all-MiniLM-L6-v2", [*ids, 10**9])
        in_channel = load_vectors(conn, "all-MiniLM-L6-v2", ids, channel=("TV", "CV"))
    assert sorted(everyone) == sorted(ids[1:])
    assert all(np.array_equal(everyone[pid], stored[pid]) and everyone[pid].dtype == np.float32 for pid in ids[1:])
    assert sorted(in_channel) == sorted(ids)
    assert np.array_equal(in_channel[ids[0]], own) and np.array_equal(in_channel[ids[1]], stored[ids[1]])
