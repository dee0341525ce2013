"""A web page read into sections by ``parse_html`` in a process of its own (``python -m
socialrag.knowledge.fulltext.html_worker``), so that what ``lxml``'s parser does inside its C code (where the
element budget does not reach) is bounded by that process's CPU seconds, memory and deadline: the page on standard
input, a JSON object on standard output (the ``FullText``'s fields), or ``error``, the sentence saying why not."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict


def main() -> None:
    from socialrag.knowledge.fulltext.apart import limit

    if len(sys.argv) > 2:
        limit(int(sys.argv[1]), int(sys.argv[2]))
    from socialrag.knowledge.fulltext.html import parse_html
    from socialrag.knowledge.fulltext.model import FullTextError

    try:
        out = asdict(parse_html(sys.stdin.buffer.read()))
    except FullTextError as exc:
        out = {"error": str(exc)[:300]}
    except Exception as exc:  # a crafted page can reach any corner of the parser: said, never raised as itself
        out = {"error": f"the page cannot be read ({type(exc).__name__}: {str(exc)[:200]})"}
    sys.stdout.write(json.dumps(out))


if __name__ == "__main__":
    main()
