"""One entry point for the three formats, with the size bound every one keeps."""

from __future__ import annotations

from typing import Literal

from socialrag.knowledge.fulltext.model import MAX_BYTES, FullText, FullTextError

Kind = Literal["jats", "html", "pdf"]


def parse_fulltext(data: bytes, kind: Kind) -> FullText:
    """``data`` read as ``kind``; ``FullTextError`` with a sentence saying why when it cannot be."""
    if len(data) > MAX_BYTES:
        raise FullTextError(f"the file has {len(data) // 1_000_000} MB; at most {MAX_BYTES // 1_000_000} MB is read")
    if not data.strip():
        raise FullTextError("the file is empty")
    if kind == "jats":
        from socialrag.knowledge.fulltext.jats import parse_jats

        return parse_jats(data)
    if kind == "html":
        from socialrag.knowledge.fulltext.html import parse_html

        return parse_html(data)
    if kind == "pdf":
        if not data.startswith(b"%PDF-"):
            raise FullTextError("the file is not a PDF")
        from socialrag.knowledge.fulltext.pdf import parse_pdf

        return parse_pdf(data)
    raise FullTextError(f"no reader for {kind!r}")
