"""An identifier too long for the database's index, from a member's message or a source's answer, is not kept: it
used to fail every write that held it, a whole page of a channel's history (read again, and failing again, so the
channel's older history was never read) or the paper that carried it in a batch of lookups."""

from __future__ import annotations

import random
import string

from socialrag.db import Database
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.knowledge.queue_worker import Indexer
from tests.db.test_malformed_records import DigestEmbedder, share_links, stored
from tests.support.scholar_standin import ScholarStandIn

_RNG = random.Random(11)
# no pattern repeats, so that no compression brings them under the index's limit
LETTERS = "".join(_RNG.choices(string.ascii_letters + string.digits, k=3000))
HAN = "".join(chr(_RNG.randrange(0x4E00, 0x9FFF)) for _ in range(1000))  # 3 bytes each


def test_a_message_with_an_overlong_identifier_keeps_its_other_papers(db: Database) -> None:
    text = (
        f"doi:10.1234/{LETTERS} and <https://doi.org/10.5555/{HAN}|this one> "
        "and the real one https://arxiv.org/abs/2401.01234"
    )
    share_links(db, text)  # raised the database's "index row size" error, for the whole page
    with db.connection() as conn:
        keys = conn.execute("SELECT scheme || ':' || value FROM paper_ids").fetchall()
    assert keys == [("arxiv:2401.01234",)]


def test_an_overlong_identifier_in_an_answer_costs_neither_its_paper_nor_the_others(db: Database) -> None:
    scholar = ScholarStandIn().start()
    try:
        papers = scholar.papers[:2]
        papers[0]["references"] = [
            {"paperId": "f" * 40, "externalIds": {"DOI": f"10.5555/{HAN}"}},
            {"paperId": "e" * 40, "externalIds": {"ArXiv": "2401.00003"}},
        ]
        papers[0]["authors"] = [{"name": "Ada Lovelace", "authorId": LETTERS}]
        share_links(db, " ".join(f"https://aclanthology.org/{p['externalIds']['ACL']}" for p in papers))
        done = Indexer(db, DigestEmbedder(), [SemanticScholar(scholar.url, min_interval=0)]).run_batch()
        assert done is not None and done.looked_up == 2 and done.errors == []
        found = stored(db, "acl")
        assert found[papers[0]["externalIds"]["ACL"]] == (papers[0]["title"], papers[0]["year"], ["Ada Lovelace"])
        with db.connection() as conn:
            cited = conn.execute("SELECT cited_scheme, cited_value FROM paper_references ORDER BY 1, 2").fetchall()
            author_ids = conn.execute("SELECT s2_author_id FROM authors WHERE name = 'Ada Lovelace'").fetchall()
        assert ("arxiv", "2401.00003") in cited and all(len(v.encode()) <= 2048 for _, v in cited)
        assert author_ids == [(None,)]
    finally:
        scholar.stop()
