"""The PDF's page texts, extracted in a process of its own (``python -m socialrag.knowledge.fulltext.pdf_worker``)
so that a crafted file's cost is bounded by that process's limits (CPU seconds, memory) and its deadline: the PDF on
standard input, a JSON object on standard output (``pages``: the text of each distinct page read, ``count``,
``title``), or ``error``."""

from __future__ import annotations

import io
import json
import logging
import sys

PAGE_CHARS = 200_000  # characters of one page's text kept


def extract(data: bytes, most_pages: int) -> dict[str, object]:
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        return {"error": "the PDF is encrypted"}
    pages, seen = [], set()
    count = len(reader.pages)
    for i in range(min(count, most_pages)):
        page = reader.pages[i]
        ref = getattr(page.indirect_reference, "idnum", None)
        if ref is not None and ref in seen:  # the same page listed again: read once
            continue
        seen.add(ref)
        pages.append((page.extract_text() or "")[:PAGE_CHARS])
    title = reader.metadata.title if reader.metadata else None
    return {"pages": pages, "count": count, "title": str(title)[:300] if title else None}


def main() -> None:
    from socialrag.knowledge.fulltext.apart import limit

    most = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    if len(sys.argv) > 3:
        limit(int(sys.argv[2]), int(sys.argv[3]))
    try:
        out = extract(sys.stdin.buffer.read(), most)
    except Exception as exc:
        out = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    sys.stdout.write(json.dumps(out))


if __name__ == "__main__":
    main()
