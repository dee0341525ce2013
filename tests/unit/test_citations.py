"""The reading list's reference files: BibTeX that a BibTeX parser reads back whole, with clean keys, RIS and
CSL-JSON; a hostile title or name stays inside its field."""

from __future__ import annotations

import json

import bibtexparser

from socialrag.reading.citations import Reference, citation_keys, render, to_bibtex, to_csl_json, to_ris

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
    assert "here" not in hostile["title"] and "\n" not in hostile["title"]
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
