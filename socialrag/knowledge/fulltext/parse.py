"""One entry point for the three formats, with the size bound every one keeps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from socialrag.knowledge.fulltext.model import MAX_BYTES, FullText, FullTextError

LEAST_TEXT = 150  # characters of body text a full text has at least (a real body has thousands)

Kind = Literal["jats", "html", "pdf"]


def parse_fulltext(data: bytes, kind: Kind, seconds: float | None = None) -> FullText:
    """``data`` read as ``kind``; ``FullTextError`` with a sentence saying why when it cannot be. ``seconds``: the
    time the caller has left, which the reading of a PDF or a web page (each in a process of its own) keeps to
    (``TimeUp``)."""
    if len(data) > MAX_BYTES:
        raise FullTextError(f"the file has {len(data) // 1_000_000} MB; at most {MAX_BYTES // 1_000_000} MB is read")
    if not data.strip():
        raise FullTextError("the file is empty")
    return _checked(lambda: _parse(data, kind, seconds))


def parse_article(article: Any) -> FullText:
    """A JATS ``<article>`` element already parsed (PubMed Central's answer, its names made plain) read as
    ``parse_fulltext`` reads a JATS file."""
    from socialrag.knowledge.fulltext.jats import read_article

    return _checked(lambda: read_article(article))


def _checked(parse: Callable[[], FullText]) -> FullText:
    try:
        paper = parse()
    except FullTextError:
        raise
    except Exception as exc:  # a crafted file can reach any corner of a parser: said, never raised as itself
        raise FullTextError(f"the file cannot be read ({type(exc).__name__}: {str(exc)[:200]})") from None
    if paper.chars < LEAST_TEXT:
        raise FullTextError("the file holds no body text (a landing page, or an abstract only)")
    return paper


def _parse(data: bytes, kind: Kind, seconds: float | None) -> FullText:
    if kind == "jats":
        from socialrag.knowledge.fulltext.jats import parse_jats

        return parse_jats(data)
    if kind == "html":
        from socialrag.knowledge.fulltext.html import parse_page

        return parse_page(data, seconds)
    if kind == "pdf":
        if not data.startswith(b"%PDF-"):
            raise FullTextError("the file is not a PDF")
        from socialrag.knowledge.fulltext.pdf import parse_pdf

        return parse_pdf(data, seconds)
    raise FullTextError(f"no reader for {kind!r}")
