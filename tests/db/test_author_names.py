"""Author names are cleaned and bounded where papers are stored, whatever the source: a record past every parser's
checks (a source's answer as it is), Semantic Scholar's through the real client, and the local catalog. A NUL
byte or a runaway name used to cost the whole paper (the database refused it); markup, invisible characters and
thousands of authors were stored as they came."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

from socialrag.db import Database
from socialrag.knowledge.papers.local_catalog import import_catalog
from socialrag.knowledge.papers.source import MAX_AUTHORS, MAX_NAME
from socialrag.knowledge.queue_worker import Indexer, IndexerConfig
from socialrag.models import Author
from tests.db.test_malformed_records import GOOD, ODD, AnsweringSource, DigestEmbedder, share_links, stored
from tests.unit.test_author_names import HOSTILE, harmless

# a name of 4,000 letters no pattern repeats: its key was too long for the authors' index, whatever compression did
RUNAWAY = "".join(random.Random(7).choices(string.ascii_letters, k=4000))


def names_of(db: Database) -> list[str]:
    with db.connection() as conn:
        return [r[0] for r in conn.execute("SELECT name FROM authors ORDER BY id").fetchall()]


def ada(name: str) -> bool:
    """Her name, all that is left of a hostile one."""
    return "Ada Byron" in name and harmless(name)


def test_names_past_every_parser_are_cleaned_where_papers_are_stored(db: Database) -> None:
    """A source's answer as it is, past any parser's checks: the paper is stored, its names cleaned, the runaway
    one cut, and ``MAX_AUTHORS`` of its two thousand authors kept, in their order."""
    many = [Author(f"Member {i} of a collaboration") for i in range(2000)]
    listed = (Author("A\x00B"), Author(RUNAWAY), *(Author(n, affiliations=(n,)) for n in HOSTILE), *many)
    share_links(db, f"arxiv:{ODD} arxiv:{GOOD}")
    indexer = Indexer(db, DigestEmbedder(), [AnsweringSource({"authors": listed})], IndexerConfig(max_attempts=1))
    done = indexer.run_batch()
    assert done is not None and done.looked_up == 2 and done.not_found == 0, done
    kept = stored(db, "arxiv")[ODD][2]
    assert len(kept) == MAX_AUTHORS and kept[:2] == ["AB", RUNAWAY[:MAX_NAME]]
    assert all(ada(n) for n in kept[2 : 2 + len(HOSTILE)]), kept[: 2 + len(HOSTILE)]
    assert all(harmless(n) for n in names_of(db))
    with db.connection() as conn:
        places = [p for (row,) in conn.execute("SELECT affiliations FROM paper_authors").fetchall() for p in row]
    assert places and all(harmless(p) for p in places), places


def test_names_in_a_catalog_are_cleaned(db: Database, tmp_path: Path) -> None:
    line: dict[str, Any] = {"acl_id": "2024.acl-long.1", "title": "A paper", "authors": [*HOSTILE, 7, "<!here>"]}
    path = tmp_path / "catalog.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    report = import_catalog(db, path)
    assert report.papers == 1 and not report.problems, report.problems
    kept = stored(db, "acl")["2024.acl-long.1"][2]
    assert len(kept) == len(HOSTILE) and all(ada(n) for n in kept), kept
    assert all(harmless(n) for n in names_of(db))
