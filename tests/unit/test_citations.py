"""The reading list's reference files: BibTeX that a BibTeX parser reads back whole, with clean keys, RIS and
CSL-JSON; a hostile title or name stays inside its field."""

from __future__ import annotations

import json
import time

import bibtexparser

from socialrag.reading.references import Reference, citation_keys, named, render, to_bibtex, to_csl_json, to_ris

ATTENTION = Reference(
    1,
    "Attention Is All You Need",
    ("Ashish Vaswani", "Noam Shazeer"),
    2017,
    "NeurIPS",
    "https://arxiv.org/abs/1706.03762",
    {"arxiv": "1706.03762"},
)
HOSTILE = Reference(
    2,
    "Evil } title\n@misc{x, title={y}} \\end <!here> 100% & $ _",
    ("Zoë Ünicode", "Smith, John"),
    None,
    None,
    "https://x.org/a}b",
    {"doi": "10.1000/abc}"},
)
BARE = Reference(3, "The attention again", ("A. Vaswani",), 2017, None, None, {"doi": "10.18653/v1/N19-1423"})


def test_bibtex_parses_back_whole_with_clean_keys() -> None:
    text = to_bibtex([ATTENTION, HOSTILE, BARE])
    db = bibtexparser.loads(text)
    assert [e["ID"] for e in db.entries] == ["vaswani2017attention", "unicodeevil", "vaswani2017attentiona"]
    first, hostile, bare = db.entries
    assert first["ENTRYTYPE"] == "inproceedings" and first["booktitle"] == "NeurIPS"
    assert first["author"] == "Vaswani, Ashish and Shazeer, Noam" and first["eprint"] == "1706.03762"
    assert first["url"] == "https://arxiv.org/abs/1706.03762"
    # the hostile title is one field of one entry: nothing of it opened another entry or field
    assert hostile["ENTRYTYPE"] == "misc" and set(hostile) == {"ENTRYTYPE", "ID", "title", "author"}
    assert "<!here>" in hostile["title"] and "\n" not in hostile["title"], "kept exactly, on one line"
    assert bare["doi"] == "10.18653/v1/N19-1423" and "year" in bare


def test_keys_are_ascii_and_distinct_and_unknowns_are_left_out() -> None:
    keys = citation_keys([Reference(9, "", ()), Reference(10, "2020 results", ()), ATTENTION, ATTENTION])
    assert keys == ["paper9", "p2020", "vaswani2017attention", "vaswani2017attentiona"]
    ris = to_ris([ATTENTION, HOSTILE])
    assert ris.count("TY  - ") == 2 and ris.count("ER  - ") == 2
    assert "PY  -" not in ris.split("ER  - ")[1], "an unknown year is not written"
    assert "UR  - https://x.org" not in ris, "an address that could end a field is left out"
    items = json.loads(to_csl_json([ATTENTION, HOSTILE]))
    assert items[0]["issued"] == {"date-parts": [[2017]]} and "issued" not in items[1]
    assert items[1]["author"][1] == {"family": "Smith", "given": "John"}
    assert render([ATTENTION], "csl-json") == to_csl_json([ATTENTION])


def test_exact_titles_and_organisation_names_survive_both_formats() -> None:
    """The export's cleaning dropped bare domains and angle-bracket text ("Learning from Reddit.com and x<y and z>w"
    became "Learning from and xw"), and an author named with "and" broke the author list ("Jones, Smith and and
    Doe"). Titles are kept exactly, escaped for each format; an organisation is one braced name."""
    import rispy
    from pybtex.database import parse_string

    title = "Learning from Reddit.com and x<y and z>w: 100% of {braces} & $math$"
    ref = Reference(7, title, ("Ann Jones", "BigScience Workshop and Friends", "Doe, Jane"), 2022, "ACL", None, {})
    bib = parse_string(to_bibtex([ref]), "bibtex")
    (entry,) = bib.entries.values()
    names = [str(p) for p in entry.persons["author"]]
    assert len(names) == 3 and names[0] == "Jones, Ann" and names[2] == "Doe, Jane"
    assert "BigScience Workshop and Friends" in names[1]
    shown = entry.fields["title"]
    for kept in ("Reddit.com", "x<y and z>w", r"100\%", r"\textbraceleft{}braces\textbraceright{}", r"\&", r"\$math\$"):
        assert kept in shown, (kept, shown)
    (record,) = rispy.loads(to_ris([ref]))
    assert record["title"] == title, "RIS keeps the exact title"
    assert (
        record["authors"] == ["Jones, Ann", "Workshop and Friends, BigScience", "Doe, Jane"]
        or len(record["authors"]) == 3
    )
    assert not to_ris([ref]).startswith("1."), "no numbered line before a record"


def test_a_name_with_many_commas_or_none_left_keeps_the_file_whole() -> None:
    """A source's author name such as "King, Martin Luther, Jr., III" made pybtex refuse the whole list (too many
    commas), so no member of the channel could export it; a name left empty (only markup or control characters)
    wrote a stray "and" that glued the next two authors into one. Each name now stays one author, and an empty
    one is left out, in every format."""
    import rispy
    from pybtex.database import parse_string

    names = ("King, Martin Luther, Jr., III", "\x00\x0b", "<!here>", "Ann Jones", "Doe, Jane")
    ref = Reference(8, "A title", names, 2020, None, None, {})
    entry = next(iter(parse_string(to_bibtex([ref, BARE]), "bibtex").entries.values()))
    authors = [str(p) for p in entry.persons["author"]]
    assert len(authors) == 3 and authors[1:] == ["Jones, Ann", "Doe, Jane"], authors
    assert "King" in authors[0] and "III" in authors[0]
    assert len(bibtexparser.loads(to_bibtex([ref, BARE])).entries) == 2
    (record,) = rispy.loads(to_ris([ref]))
    assert len(record["authors"]) == 3 and record["authors"][1:] == ["Jones, Ann", "Doe, Jane"]
    (item,) = json.loads(to_csl_json([ref]))
    assert [a["family"] for a in item["author"]] == ["King", "Jones", "Doe"]


def test_a_paper_with_a_thousand_authors_lists_the_first_hundred() -> None:
    """A technical report with 1,300 authors (as large model reports have) wrote every name into each format
    and each Zotero item: one saved paper made a file of hundreds of kilobytes and an item Zotero may refuse. The
    first hundred are written, then BibTeX's "and others"."""
    import rispy
    from pybtex.database import parse_string

    ref = Reference(9, "A large report", tuple(f"Author{i} Person{i}" for i in range(1300)), 2023, None, None, {})
    (entry,) = parse_string(to_bibtex([ref]), "bibtex").entries.values()
    names = [str(p) for p in entry.persons["author"]]
    assert len(names) == 101 and names[0] == "Person0, Author0" and names[-1] == "others"
    (record,) = rispy.loads(to_ris([ref]))
    assert len(record["authors"]) == 100
    (item,) = json.loads(to_csl_json([ref]))
    assert len(item["author"]) == 100 and len(named(ref.authors)) == 100, "Zotero's creators are these too"


def test_addresses_and_identifiers_are_written_as_they_are() -> None:
    """A link's ``%``, ``_``, ``#``, ``~`` and ``&`` are part of the address: written escaped for LaTeX
    (``\\%``, ``\\_``), biblatex and reference managers would read an address that does not exist."""
    odd = Reference(
        4,
        "100% sure_ly",
        (),
        2024,
        None,
        "https://openreview.net/forum?id=ab_CD%20x&y=1#z~w",
        {"doi": "10.1000/x_y%2F#1", "arxiv": "1706.03762"},
    )
    entry = bibtexparser.loads(to_bibtex([odd])).entries[0]
    assert entry["url"] == "https://openreview.net/forum?id=ab_CD%20x&y=1#z~w"
    assert entry["doi"] == "10.1000/x_y%2F#1" and entry["eprint"] == "1706.03762"
    assert entry["title"] == r"{100\% sure\_ly}", "the title is still LaTeX"


def test_a_key_shared_by_hundreds_of_papers_stays_distinct() -> None:
    """Past ``zz`` (703 papers of one first author, year and first word, or of none) the keys go on to ``aaa``."""
    keys = citation_keys([Reference(i, "Untitled") for i in range(2000)])
    assert len(set(keys)) == 2000
    assert keys[:3] == ["untitled", "untitleda", "untitledb"] and keys[703] == "untitledaaa"


def test_fields_of_a_megabyte_are_read_only_as_far_as_they_are_written() -> None:
    """A source's title, venue and 150 names of 1 MB each: every format is written in moments, each field capped."""
    mb = 1_000_000
    names = tuple(("Open Consortium " if i % 2 else "Ann ") + "^" * mb for i in range(150))
    huge = Reference(9, "\\" * mb, names, 2020, "}" * mb, None, {})
    for fmt in ("bibtex", "ris", "csl-json"):
        started = time.monotonic()
        text = render([huge, ATTENTION], fmt)
        assert time.monotonic() - started < 5, fmt
        assert len(text.encode()) < 500_000, fmt
    assert len(bibtexparser.loads(render([huge, ATTENTION], "bibtex")).entries) == 2
