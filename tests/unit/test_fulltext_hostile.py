"""Files crafted against the full-text reader, each built here and served where a real host would serve it: a
DOCTYPE whose default attribute would be copied onto every paragraph. Each is said as the paper's note, and costs
no more than a real paper."""

from __future__ import annotations

from tests.support.fulltext_hosts import Answer, Web
from tests.unit.test_fulltext_hosts import PMC, reader


def test_pmcs_answer_with_a_default_attribute_in_its_doctype_is_unreadable_and_never_copied() -> None:
    """No entity at all: a 50 KB default attribute on ``<p>`` and 2,000 empty paragraphs would be 100 MB once parsed
    (a megabyte and thousands more fill any memory)."""
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE OAI-PMH [<!ATTLIST p x CDATA "' + b"A" * 50_000 + b'">]>'
        b"<OAI-PMH><GetRecord><record><metadata><article><body><sec><title>M</title>" + b"<p/>" * 2_000
        + b"</sec></body></article></metadata></record></GetRecord></OAI-PMH>"
    )  # fmt: skip
    web = Web()
    web.on(PMC, Answer(200, bomb, "text/xml"))
    got = reader(web).read({"pmcid": "PMC3460867"})
    assert got.status == "unreadable" and got.passages == ()
    assert "PubMed Central" in (got.note or "") and "document type of its own" in (got.note or ""), got.note
