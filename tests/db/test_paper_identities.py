"""Which stored paper a record is: two stored papers are merged when one record names both, unless their titles say
they are two papers (an arXiv entry whose authors gave another paper's DOI, say). arXiv answers in its real Atom
shape over a mocked transport; the database is real."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bot.slack.workspace_export import import_export
from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge.papers.arxiv import ArxivApi
from socialrag.knowledge.papers.resolve import refresh_metadata
from socialrag.models import Paper
from socialrag.names import titles_agree
from tests.support.exports import msg, user, write_export

T0 = 1_700_000_000.0
NOW = datetime(2024, 6, 1, tzinfo=UTC)

# arXiv id -> (title, the DOI its authors gave)
ENTRIES = {
    "2401.11111": ("Retrieval for Reading Groups in Chat", "10.1000/folding"),  # another paper's DOI
    "2403.33333": ("Summaries That Cite Their Sources", "10.1000/summaries"),  # its published version
    "2404.44444": ("Sparse Attention at Scale", "10.1000/sparse"),  # a DOI nothing stored has
}


def atom(request: httpx.Request) -> httpx.Response:
    wanted = str(request.url)
    entries = "".join(
        f"""<entry><id>http://arxiv.org/abs/{ident}v1</id><published>2024-01-30T18:59:59Z</published>
        <title>{title}</title><summary>About {title}.</summary><author><name>Ana Lopez</name></author>
        <arxiv:doi>{doi}</arxiv:doi></entry>"""
        for ident, (title, doi) in ENTRIES.items()
        if ident in wanted
    )
    return httpx.Response(
        200,
        text=f"""<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom"
        xmlns:arxiv="http://arxiv.org/schemas/atom">{entries}</feed>""",
    )


def arxiv() -> ArxivApi:
    kw: dict[str, Any] = {"transport": httpx.MockTransport(atom), "sleep": lambda s: None, "min_interval": 0.0}
    return ArxivApi("https://arxiv.test/api/", **kw)


def shares(tmp_path: Path) -> Path:
    messages = [
        msg(T0, "U1", "<https://arxiv.org/abs/2401.11111|a preprint>"),
        msg(T0 + 60, "U2", "the folding paper https://doi.org/10.1000/folding"),
        msg(T0 + 120, "U1", "<https://arxiv.org/abs/2403.33333|summaries>"),
        msg(T0 + 180, "U2", "published: https://doi.org/10.1000/summaries"),
        msg(T0 + 240, "U1", "<https://arxiv.org/abs/2404.44444|sparse>"),
    ]
    return write_export(
        tmp_path / "e.zip", {"lab": ("C1", ["U1", "U2"], messages)}, [user("U1", "ana"), user("U2", "ben")]
    )


def paper_of(db: Database, scheme: str, value: str) -> int | None:
    with db.connection() as conn:
        return storage.papers.load_paper_ids(conn, [(scheme, value)]).get((scheme, value))


def title_of(db: Database, paper_id: int | None) -> str | None:
    with db.connection() as conn:
        row = conn.execute("SELECT title FROM papers WHERE id = %s", (paper_id,)).fetchone()
    return row[0] if row else None


def test_titles_agree_across_versions_and_tell_two_papers_apart() -> None:
    assert titles_agree("Attention Is All You Need", "Attention is all you need.")
    assert titles_agree("Summaries That Cite Their Sources", "Summaries that cite their sources: a study")
    assert not titles_agree("Retrieval for Reading Groups in Chat", "Protein Folding with Graph Networks")
    assert titles_agree(None, "Protein Folding with Graph Networks"), "a title unknown tells nothing"
    assert titles_agree("Do As I Can, Not As I Say", "Do As I Can, Not As I Say: Grounding Language in Robots")
    assert titles_agree("注意力机制", "注意力机制的研究"), "a script without spaces: its characters are its words"
    # a title the record's authors write can tell nothing apart only where nothing is written
    assert not titles_agree("注意力机制", "Protein Folding with Graph Networks"), "no word of the other script"
    assert not titles_agree("Is It So?", "Protein Folding with Graph Networks"), "only short words"
    assert not titles_agree("?!", "Protein Folding with Graph Networks"), "no word at all"
    assert not titles_agree("Sparse Attention for Long Documents", "Attention Is All You Need"), "one word of two"


def test_an_author_given_doi_of_another_paper_merges_nothing(db: Database, tmp_path: Path) -> None:
    import_export(db, shares(tmp_path), progress=False)
    with db.connection() as conn:  # the DOI papers' own records came first (Crossref, say)
        storage.papers.record_papers(
            conn,
            [
                Paper(ids={"doi": "10.1000/folding"}, source="crossref", title="Protein Folding with Graph Networks"),
                Paper(ids={"doi": "10.1000/summaries"}, source="crossref", title="Summaries that cite their sources"),
            ],
        )
    folding = paper_of(db, "doi", "10.1000/folding")
    sparse_before = paper_of(db, "arxiv", "2404.44444")
    result = refresh_metadata(db, [arxiv()], Settings(home=Path("/nonexistent")), now=NOW)
    assert result.found == 3

    preprint = paper_of(db, "arxiv", "2401.11111")
    assert preprint != folding and paper_of(db, "doi", "10.1000/folding") == folding, "two papers stay two"
    assert title_of(db, folding) == "Protein Folding with Graph Networks", "the other paper keeps its title"
    assert title_of(db, preprint) == "Retrieval for Reading Groups in Chat"
    with db.connection() as conn:
        shared = conn.execute(
            "SELECT m.ts, mp.paper_id FROM messages m JOIN message_papers mp ON mp.message_id = m.id ORDER BY m.ts"
        ).fetchall()
    by_ts = {ts: pid for ts, pid in shared}
    assert by_ts[f"{T0 + 60:.6f}"] == folding, "the folding paper's share still links the folding paper"
    # a preprint and its published version, titled alike, are one paper as before
    assert paper_of(db, "arxiv", "2403.33333") == paper_of(db, "doi", "10.1000/summaries")
    assert by_ts[f"{T0 + 120:.6f}"] == by_ts[f"{T0 + 180:.6f}"]
    # the paper asked about takes its answer, and a DOI nothing held joins it
    assert paper_of(db, "arxiv", "2404.44444") == sparse_before == paper_of(db, "doi", "10.1000/sparse")


def test_a_found_record_does_not_take_over_another_paper(db: Database) -> None:
    """A candidate source's record (no paper asked about) whose claimed DOI is a stored paper of another title is
    a paper of its own; the stored one keeps its title. A source's own identities are taken as given, and a
    record whose every identity names that paper is that paper."""
    with db.connection() as conn:
        (folding,) = storage.papers.record_papers(
            conn,
            [Paper(ids={"doi": "10.1000/folding"}, source="crossref", title="Protein Folding with Graph Networks")],
        )
        (found,) = storage.papers.record_papers(
            conn,
            [
                Paper(
                    ids={"arxiv": "2402.22222", "doi": "10.1000/folding"},
                    source="arxiv",
                    title="Vision Transformers for Satellite Images",
                    claims=("doi",),
                )
            ],
        )
    assert found != folding and paper_of(db, "arxiv", "2402.22222") == found
    assert paper_of(db, "doi", "10.1000/folding") == folding
    assert title_of(db, folding) == "Protein Folding with Graph Networks"
    with db.connection() as conn:
        (same,) = storage.papers.record_papers(
            conn, [Paper(ids={"doi": "10.1000/folding"}, source="openalex", title="Retitled by Its Publisher")]
        )
    assert same == folding, "a record naming only that paper is that paper"
    with db.connection() as conn:  # Semantic Scholar's own identities: one paper, whatever the titles
        (s2,) = storage.papers.record_papers(
            conn,
            [Paper(ids={"s2": "f" * 40, "doi": "10.1000/folding"}, source="semanticscholar", title="Something Else")],
        )
    assert s2 == folding


def test_an_authors_title_in_another_script_or_of_short_words_takes_over_no_paper(db: Database) -> None:
    """An arXiv entry's authors write both its title and its DOI: a title folding leaves no long word of (another
    script, only short words, only signs), or one sharing a single word of a short title, no longer agrees with
    every stored title, so a DOI naming another paper neither merges it nor retitles it."""
    with db.connection() as conn:
        (attention,) = storage.papers.record_papers(
            conn, [Paper(ids={"doi": "10.1000/attention"}, source="crossref", title="Attention Is All You Need")]
        )
    for n, title in enumerate(["注意力机制", "Is It So?", "?!", "Sparse Attention for Long Documents"]):
        ident = f"2405.{n:05d}"
        with db.connection() as conn:
            (found,) = storage.papers.record_papers(
                conn,
                [Paper(ids={"arxiv": ident, "doi": "10.1000/attention"}, source="arxiv", title=title, claims=("doi",))],
            )
        assert found != attention and paper_of(db, "arxiv", ident) == found, title
        assert paper_of(db, "doi", "10.1000/attention") == attention, title
        assert title_of(db, attention) == "Attention Is All You Need", title
