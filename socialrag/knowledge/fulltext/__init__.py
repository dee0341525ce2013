"""A paper's open-access full text, read into sections (issue 56's first part: the parsers).

``parse_fulltext(data, kind)`` reads a JATS XML file (PubMed Central, bioRxiv, medRxiv), an arXiv HTML page
(LaTeXML's) or a PDF (``pypdf``) into a ``FullText``: the title, the sections in order (each its heading and
paragraphs), the references apart, and the licence the file states. Every parser is bounded: at most ``MAX_BYTES``
of input, ``MAX_PAGES`` pages of a PDF, ``MAX_CHARS`` of text kept, and an XML file whose DOCTYPE declares anything
of its own (an entity, a default attribute) is refused unread, an XML or HTML file is refused as it is parsed past
``MAX_ELEMENTS`` elements and attributes or ``MAX_NESTING`` deep, and a PDF or a web page is read in a process of
its own with limits on its time and memory. What cannot be read raises ``FullTextError`` with a
sentence saying why; nothing here fetches or stores.
"""

from socialrag.knowledge.fulltext.model import (
    MAX_BYTES,
    MAX_CHARS,
    MAX_ELEMENTS,
    MAX_NESTING,
    MAX_PAGES,
    MAX_PASSAGES,
    FullText,
    FullTextError,
    Passage,
    Section,
    TimeUp,
    passages,
)
from socialrag.knowledge.fulltext.parse import parse_article, parse_fulltext

__all__ = [
    "MAX_BYTES",
    "MAX_CHARS",
    "MAX_ELEMENTS",
    "MAX_NESTING",
    "MAX_PAGES",
    "MAX_PASSAGES",
    "FullText",
    "FullTextError",
    "Passage",
    "Section",
    "TimeUp",
    "parse_article",
    "parse_fulltext",
    "passages",
]
