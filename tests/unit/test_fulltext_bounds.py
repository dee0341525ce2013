"""Full texts built to cost the reader as much as they can, each within the 20 MB a file may have: an XML bomb,
a million empty elements, elements nested far deeper than a paper's, a start tag of hundreds of thousands of
attributes. Each is refused as it is parsed, said as the paper's note (unreadable: looked for again after 30 days),
and nothing else is lost: the reader goes on with the next place, and the next paper."""

from __future__ import annotations

from pathlib import Path

import pytest

from socialrag.knowledge.fulltext import html, parse_fulltext
from socialrag.knowledge.fulltext.model import MAX_ELEMENTS, MAX_NESTING
from socialrag.knowledge.papers.fulltext_source import Location, read_fetched
from socialrag.knowledge.papers.web_hosts import Fetched
from tests.support.fulltext_hosts import Answer, Web
from tests.support.pdfs import text_pdf
from tests.unit.test_fulltext_hosts import ARXIV, PAGE_LINES, PMC, reader

WORDS = b"A paragraph of the paper long enough to be its body text, as a real paper's paragraphs are. " * 4
JATS = Location("pmc", "jats", PMC)
PAGE = Location("arxiv", "html", "https://arxiv.test/html/2401.00001")


def _jats(body: bytes) -> bytes:
    return b"<article><body><sec><title>Methods</title><p>" + WORDS + b"</p>" + body + b"</sec></body></article>"


def _page(body: bytes) -> bytes:
    return b"<html><head><title>T</title></head><body><h2>Methods</h2><p>" + WORDS + b"</p>" + body + b"</body></html>"


def _read(location: Location, body: bytes) -> tuple[str, str]:
    kind = "text/xml" if location.kind == "jats" else "text/html"
    got = read_fetched(location, Fetched(location.url, kind, body), 60.0)
    return got.status, got.note or ""


def test_a_billion_laughs_is_refused_unread_in_xml_and_never_expanded_in_html() -> None:
    laughs = b'<!DOCTYPE article [<!ENTITY a0 "' + WORDS + b'">'
    laughs += b"".join(b'<!ENTITY a%d "%s">' % (i, b"&a%d;" % (i - 1) * 10) for i in range(1, 10)) + b"]>"
    status, note = _read(JATS, laughs + _jats(b"<p>&a9;</p>"))
    assert status == "unreadable" and "document type of its own" in note, note
    page = parse_fulltext(laughs.replace(b"article", b"html", 1) + _page(b"<p>&a9;</p>"), "html")
    assert page.chars < 2 * len(WORDS), page.chars


@pytest.mark.parametrize(
    ("location", "body"),
    [(JATS, _jats(b"<p/>" * 1_000_000)), (PAGE, _page(b"<br>" * 1_000_000))],
    ids=["jats", "html"],
)
def test_a_file_of_a_million_empty_elements_is_refused_as_it_is_parsed(location: Location, body: bytes) -> None:
    """Four bytes an element: 20 MB of XML was five million ElementTree elements, gigabytes of memory."""
    status, note = _read(location, body)
    assert status == "unreadable" and f"more than {MAX_ELEMENTS:,} elements" in note, note


@pytest.mark.parametrize(
    ("location", "body"),
    [
        (JATS, _jats(b"<p>" + b"<b>" * 100_000 + WORDS + b"</b>" * 100_000 + b"</p>")),
        (PAGE, _page(b"<div>" * 100_000 + b"<p>" + WORDS + b"</p>" + b"</div>" * 100_000)),
        (PAGE, _page(b"<div>" * (MAX_NESTING + 10) + b"<span></span>" * 100 + b"</div>" * (MAX_NESTING + 10))),
    ],
    ids=["jats", "html", "html just past the bound"],
)
def test_elements_nested_deeper_than_a_paper_are_refused_with_how_deep(location: Location, body: bytes) -> None:
    status, note = _read(location, body)
    assert status == "unreadable" and f"nests elements more than {MAX_NESTING} deep" in note, note


def test_a_start_tag_of_a_million_attributes_is_refused_as_it_is_parsed() -> None:
    tag = b"<p " + b" ".join(b'a%d=""' % i for i in range(1_000_000)) + b"/>"
    status, note = _read(JATS, _jats(tag))
    assert status == "unreadable" and f"more than {MAX_ELEMENTS:,} elements and attributes" in note, note


def test_an_html_start_tag_of_distinct_attributes_is_stopped_by_the_pages_own_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``lxml``'s HTML parser compares each attribute of a tag with every one before it, inside its C code, before
    a count can see the tag: 200,000 attributes in 2 MB were most of a minute, and ten times as many hours."""
    monkeypatch.setattr(html, "PAGE_SECONDS", 3.0)
    tag = b"<p " + b" ".join(b'a%d=""' % i for i in range(200_000)) + b"></p>"
    status, note = _read(PAGE, _page(tag))
    assert status == "unreadable" and note == "arXiv (HTML): the page took more than 3 s to read", note


def test_a_paper_nested_as_deep_as_the_bound_allows_is_read_whole() -> None:
    deep = MAX_NESTING - 10
    inner = b"<p>" + b"<b>" * deep + WORDS + b"<i>x</i>" * 10_000 + b"</b>" * deep + b"</p>"
    paper = parse_fulltext(_jats(inner), "jats")
    assert [s.heading for s in paper.sections] == ["Methods"]
    assert paper.sections[0].paragraphs[1].count("x") >= 10_000
    page = parse_fulltext(_page(b"<div>" * deep + b"<p>" + WORDS + b"</p>" + b"</div>" * deep), "html")
    assert [len(s.paragraphs) for s in page.sections] == [2]


def test_after_a_refused_file_the_reader_goes_on_to_the_next_place_and_paper() -> None:
    web = Web()
    web.on("https://arxiv.test/html/2401.00001", Answer(200, _page(b"<br>" * 1_000_000), "text/html"))
    web.on("https://arxiv.test/pdf/2401.00001", Answer(200, text_pdf(PAGE_LINES), "application/pdf"))
    got = reader(web).read(ARXIV)
    assert (got.status, got.kind) == ("read", "pdf"), got.note


@pytest.mark.parametrize("location", [PAGE, Location("openalex", "pdf", "https://host.test/paper.pdf")])
def test_a_reader_process_that_cannot_start_is_the_hosts_fault_not_the_files(
    location: Location, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interpreter the reading process runs is gone (the virtual environment replaced under a running
    PaperPing) or the host cannot start a process: the paper is read another time (later), not marked unreadable
    for 30 days."""
    body = _page(b"") if location.kind == "html" else text_pdf([["Methods", WORDS.decode()]])
    monkeypatch.setattr("sys.executable", "/nonexistent/paperping/python3")
    status, note = _read(location, body)
    assert status == "later", (status, note)
    assert "process" in note, note


def test_a_reading_process_is_given_none_of_paperpings_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file is read in a process of its own because a crafted file may take its parser over: that process gets
    where Python finds PaperPing's code and nothing else, so no Slack token, database address or API key."""
    from socialrag.knowledge.fulltext.apart import run_apart

    for name in ("SLACK_BOT_TOKEN", "DATABASE_URL", "OPENAI_API_KEY", "PAPERPING_TOKEN_KEY"):
        monkeypatch.setenv(name, "secret")
    answer = run_apart("tests.support.env_worker", [], b"%PDF", 30, None, "file")
    assert set(answer["names"]) <= {"PYTHONPATH", "PYTHONUTF8", "LC_CTYPE"}, answer


def test_a_reading_process_imports_nothing_from_the_folder_paperping_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m`` would put the current folder first on the reading process's import path, ahead of the
    installed parser (`paperping run` puts it on none of its own): a ``pypdf.py`` left in that folder must not be
    what reads a PDF."""
    from socialrag.knowledge.fulltext.apart import run_apart

    planted = '{"pages": ["planted"], "count": 1, "title": "planted"}'
    (tmp_path / "pypdf.py").write_text(
        f"import os, sys\nsys.stdout.write({planted!r})\nsys.stdout.flush()\nos._exit(0)\n"
    )
    monkeypatch.chdir(tmp_path)
    pdf = text_pdf([["Methods", WORDS.decode()]])
    answer = run_apart("socialrag.knowledge.fulltext.pdf_worker", ["60"], pdf, 30, None, "PDF")
    assert answer.get("title") != "planted" and "planted" not in answer.get("pages", []), answer
    assert any("Methods" in page for page in answer["pages"]), answer
