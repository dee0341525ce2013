"""A paper's full text kept in Postgres (``storage.fulltext``): its passages in order with their sections, found by
their words among the papers asked about only, replaced whole when read again, and gone with the paper when a
purge or forget-me drops it."""

from __future__ import annotations

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.fulltext import parse_fulltext, passages
from socialrag.models import Paper
from tests.unit.test_fulltext import JATS


def test_passages_are_kept_searched_within_the_papers_asked_about_and_go_with_their_paper(db: Database) -> None:
    paper = parse_fulltext(JATS, "jats")
    pieces = [(p.section, p.text) for p in passages(paper)]
    # the section's three short paragraphs run on into one passage
    assert pieces[1] == (
        "2 Materials and Methods › 2.1 Datasets",
        "We used the LabThreads dataset of 1,200 threads. Each thread was read twice. Threads with fewer than two "
        "replies were set aside before the counting began.",
    )
    with db.connection() as conn:
        ours, other = storage.papers.record_papers(
            conn,
            [Paper(ids={"doi": "10.1/ours"}, source="t", title="Ours"), Paper(ids={"doi": "10.1/x"}, source="t")],
        )
        storage.fulltext.save_fulltext(
            conn, ours, status="read", kind="jats", licence=paper.licence, source_url="https://e.org/a.xml",
            passages=pieces,
        )  # fmt: skip
        storage.fulltext.save_fulltext(conn, other, status="read", kind="pdf", passages=[("1 Intro", "LabThreads too")])
        state = storage.fulltext.load_fulltext_state(conn, ours)
        assert state is not None and state.status == "read" and state.licence == paper.licence
        kept = storage.fulltext.load_passages(conn, ours)
        assert [(p.section, p.text) for p in kept] == pieces and [p.n for p in kept] == list(range(len(pieces)))
        found = storage.fulltext.search_passages(conn, [ours], ["LabThreads", "&|!"])
        assert [(p.paper_id, p.n) for p, _ in found] == [(ours, 1)], "only the papers asked about"
        # read again: replaced whole; a paper with no open full text says so, with no passage
        storage.fulltext.save_fulltext(conn, ours, status="none", note="no open-access copy found")
        assert storage.fulltext.load_passages(conn, ours) == []
        assert storage.fulltext.load_fulltext_state(conn, ours).status == "none"  # type: ignore[union-attr]
        # a purge or forget-me that drops a paper (``drop_orphaned_papers``) drops its full text with it
        storage.fulltext.save_fulltext(conn, ours, status="read", kind="jats", passages=pieces)
        conn.execute("DELETE FROM papers WHERE id = %s", (ours,))
        assert storage.fulltext.load_passages(conn, ours) == []
        assert storage.fulltext.load_fulltext_state(conn, ours) is None
        assert storage.fulltext.load_passages(conn, other), "another paper's stays"
