"""Which stored paper a record is: two stored papers are merged when one record names both, unless only a DOI an
arXiv entry's authors gave links them and the stored paper's title and authors do not show it to be the entry's.
arXiv answers in its real Atom shape (over a mocked transport, or the stand-in's server); the database is real."""

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
from socialrag.models import Author, Paper
from socialrag.names import authors_agree, titles_agree
from tests.support.exports import msg, user, write_export
from tests.support.scholar_standin import ScholarStandIn

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
    return lab_export(tmp_path, messages)


def lab_export(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    """A Slack export of #lab (C1) with ana (U1) and ben (U2) holding ``messages``."""
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


def test_authors_agree_by_a_family_name_in_common() -> None:
    assert authors_agree(["Mei Tanaka", "Priya Raman"], ["Raman, Priya"]), "either way of writing a name"
    assert authors_agree(["Hinrich Schütze"], ["H. Schutze"]), "accents and initials"
    assert not authors_agree(["Ivan Petrov"], ["Jumper, John", "Hassabis, Demis"])
    assert not authors_agree([], ["Jumper, John"]), "authors unknown show nothing"
    assert authors_agree(["王小明"], ["王小明"]) and not authors_agree(["王小明"], ["李华"]), "another script, whole"


def test_an_author_given_doi_of_another_paper_merges_nothing(db: Database, tmp_path: Path) -> None:
    import_export(db, shares(tmp_path), progress=False)
    with db.connection() as conn:  # the DOI papers' own records came first (Crossref, say)
        storage.papers.record_papers(
            conn,
            [
                Paper(ids={"doi": "10.1000/folding"}, source="crossref", title="Protein Folding with Graph Networks"),
                Paper(
                    ids={"doi": "10.1000/summaries"},
                    source="crossref",
                    title="Summaries that cite their sources",
                    authors=(Author("Ana López"), Author("Ben Okafor")),
                ),
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


def entry(ident: str, title: str, doi: str, names: tuple[str, ...], journal: str) -> str:
    """An arXiv entry as arXiv's API writes it; the DOI and the journal reference are its authors'."""
    people = "".join(f"<author><name>{n}</name></author>" for n in names)
    return f"""<entry xmlns:arxiv="http://arxiv.org/schemas/atom"><id>http://arxiv.org/abs/{ident}v2</id>
    <updated>2024-11-02T17:31:05Z</updated><published>2024-10-01T09:12:44Z</published>
    <title>{title}</title><summary>  We present {title.lower()}, evaluated on CASP14 targets.</summary>{people}
    <arxiv:doi>{doi}</arxiv:doi><link title="doi" href="http://dx.doi.org/{doi}" rel="related"/>
    <arxiv:journal_ref>{journal}</arxiv:journal_ref>
    <link href="http://arxiv.org/abs/{ident}v2" rel="alternate" type="text/html"/>
    <arxiv:primary_category term="q-bio.BM" scheme="http://arxiv.org/schemas/atom"/>
    <category term="q-bio.BM" scheme="http://arxiv.org/schemas/atom"/></entry>"""


ALPHAFOLD = "Highly accurate protein structure prediction with AlphaFold"
GRAPHS = "Graph Transformers for Molecular Property Prediction"
ROSETTA = "Accurate prediction of protein structures and interactions using a three-track neural network"


def test_an_arxiv_entry_copying_a_papers_title_and_doi_takes_over_nothing(db: Database, tmp_path: Path) -> None:
    """Anyone can post to arXiv: an entry giving a known paper's title and DOI under other authors, or a DOI whose
    paper is not known yet, stays a paper of its own, and the DOI stays with the paper that owns it. A preprint
    whose DOI is its published version (the same title, an author in common) is that paper, as before."""
    messages = [
        msg(T0, "U2", "the AlphaFold paper https://doi.org/10.1038/s41586-021-03819-2"),
        msg(T0 + 60, "U1", "<https://arxiv.org/abs/2410.01234|structure prediction>"),
        msg(T0 + 120, "U1", "<https://arxiv.org/abs/2405.04321|graph transformers>"),
        msg(T0 + 180, "U2", "published: https://doi.org/10.1038/s42256-024-00812-5"),
        msg(T0 + 240, "U2", "https://doi.org/10.1126/science.abj8754"),
        msg(T0 + 300, "U1", "<https://arxiv.org/abs/2411.05555|three tracks>"),
    ]
    import_export(db, lab_export(tmp_path, messages), progress=False)
    real = Paper(
        ids={"doi": "10.1038/s41586-021-03819-2"},
        source="crossref",
        title=ALPHAFOLD,
        abstract="Proteins are essential to life.",
        authors=(Author("Jumper, John"), Author("Evans, Richard"), Author("Hassabis, Demis")),
    )
    published = Paper(
        ids={"doi": "10.1038/s42256-024-00812-5"},
        source="crossref",
        title=GRAPHS + ".",
        authors=(Author("Tanaka, Mei"), Author("Raman, Priya")),
    )
    with db.connection() as conn:
        storage.papers.record_papers(conn, [real, published])
    alphafold, science = paper_of(db, "doi", real.ids["doi"]), paper_of(db, "doi", "10.1126/science.abj8754")
    scholar = ScholarStandIn(rows=[]).start()
    scholar.arxiv_entries = "".join(
        [
            entry("2410.01234", ALPHAFOLD, real.ids["doi"], ("Ivan Petrov",), "Nature 596, 583-589 (2021)"),
            entry("2405.04321", GRAPHS, published.ids["doi"], ("Mei Tanaka", "Priya Raman"), "Nat. Mach. Intell."),
            entry("2411.05555", ROSETTA, "10.1126/science.abj8754", ("Ivan Petrov",), "Science 373 (2021)"),
        ]
    )
    try:
        api = ArxivApi(scholar.url + "api/", min_interval=0)
        assert refresh_metadata(db, [api], Settings(home=Path("/nonexistent")), now=NOW).found == 3
    finally:
        scholar.stop()

    impostor = paper_of(db, "arxiv", "2410.01234")
    assert impostor != alphafold and paper_of(db, "doi", real.ids["doi"]) == alphafold, "two papers stay two"
    with db.connection() as conn:
        assert storage.papers.load_identities(conn, [impostor or 0])[impostor or 0] == {"arxiv": "2410.01234"}
        row = conn.execute("SELECT title, abstract FROM papers WHERE id = %s", (alphafold,)).fetchone()
        names = conn.execute(
            "SELECT a.name FROM paper_authors pa JOIN authors a ON a.id = pa.author_id WHERE pa.paper_id = %s"
            " ORDER BY pa.position",
            (alphafold,),
        ).fetchall()
        shared = dict(
            conn.execute("SELECT m.ts, mp.paper_id FROM messages m JOIN message_papers mp ON mp.message_id = m.id")
        )
    assert row == (ALPHAFOLD, "Proteins are essential to life."), "the real paper keeps its text"
    assert [n for (n,) in names] == ["Jumper, John", "Evans, Richard", "Hassabis, Demis"]
    assert shared[f"{T0:.6f}"] == alphafold and shared[f"{T0 + 60:.6f}"] == impostor, "each share keeps its paper"
    # a DOI whose paper PaperPing knows nothing of yet shows nothing: it stays with the share that named it
    assert paper_of(db, "arxiv", "2411.05555") != science == paper_of(db, "doi", "10.1126/science.abj8754")
    # the preprint of a published paper, its authors in common, is one paper with it
    assert paper_of(db, "arxiv", "2405.04321") == paper_of(db, "doi", published.ids["doi"])
    assert shared[f"{T0 + 120:.6f}"] == shared[f"{T0 + 180:.6f}"]


def test_a_claim_is_checked_against_what_its_batch_says(db: Database) -> None:
    """A preprint and its published version shared before either had metadata, answered in one batch (arXiv's
    entry first): the published version's record is taken first, so the entry's DOI finds its title and authors."""
    doi, ident = "10.1038/s42256-024-00812-5", "2405.04321"
    with db.connection() as conn:
        keys = storage.papers.ensure_papers(conn, [("arxiv", ident), ("doi", doi)])
        names = (Author("Mei Tanaka"), Author("Priya Raman"))
        preprint = Paper(ids={"arxiv": ident, "doi": doi}, source="arxiv", title=GRAPHS, authors=names, claims=("doi",))
        version = Paper(ids={"doi": doi}, source="crossref", title=GRAPHS, authors=names[::-1])
        got = storage.papers.record_papers(
            conn, [preprint, version], anchors=[keys[("arxiv", ident)], keys[("doi", doi)]]
        )
    assert got[0] == got[1] == paper_of(db, "arxiv", ident) == paper_of(db, "doi", doi)
