"""Paper links in message text, turned into canonical identifiers. Pure: text in, ``PaperRef`` out.

The same paper shared as an arXiv abstract page, its PDF, a Hugging Face papers page or an alphaXiv page
becomes one ``arxiv:`` identifier; DOIs that belong to arXiv or the ACL Anthology become those identifiers; a
journal's landing page becomes its DOI (or PMID, PMCID, PII) from the URL alone. A link that is not a paper
(a list page, a volume, a profile, a repository) gives nothing. The sites' forms live in ``cs_links`` and
``journal_links``; the shared pieces in ``link_ids``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from urllib.parse import parse_qs, unquote, urlsplit

from socialrag.knowledge.cs_links import CS_HOSTS
from socialrag.knowledge.journal_links import JOURNAL_HOSTS, doi_anywhere
from socialrag.knowledge.link_ids import TRAILING, doi_identity, doi_ref, fits_index, normalize_arxiv_id, ref
from socialrag.models import PaperRef

__all__ = ["MAX_URL_CHARS", "doi_identity", "find_paper_refs", "normalize_arxiv_id", "parse_paper_url"]

# Slack wraps links as <url> or <url|label>; <@U..>, <#C..> and <!here> are not links. Slack writes a ``<`` in text
# as ``&lt;``, so neither part holds one: a ``<`` that never closes then stops the scan at the next ``<`` instead of
# sending it to the end of the message from every ``<``.
_SLACK_LINK = re.compile(r"<(https?://[^<>|\s]+)(?:\|([^<>]*))?>", re.IGNORECASE)
_BARE_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_TEXT_ARXIV = re.compile(
    r"\barxiv:\s?((?:[0-9]{4}\.[0-9]{4,5}|[a-z][a-z\-]+(?:\.[a-z]{2})?/[0-9]{7})(?:v[0-9]+)?)", re.IGNORECASE
)
_TEXT_DOI = re.compile(r"\bdoi:\s?(10\.[0-9]{4,9}/[^\s<>\"']+)", re.IGNORECASE)
_TEXT_PMID = re.compile(r"\bPMID:?\s?([0-9]{4,9})\b")
_TEXT_PMCID = re.compile(r"\b(PMC[0-9]{4,9})\b")
_HOSTS = (*CS_HOSTS, *JOURNAL_HOSTS)
# The longest URL read as a paper link. Paper pages, PDFs and DOI links run to a few hundred characters, and 2 KB is
# the length browsers and servers have long been held to; a longer "link" is not a paper, and reading one would let
# a single message (Slack allows 40 KB) cost as much as thousands of ordinary links.
MAX_URL_CHARS = 2048


def find_paper_refs(text: str) -> tuple[PaperRef, ...]:
    """Every distinct paper a message's text links to, in order of first appearance."""
    if not text or ("http" not in text and ":" not in text and "PMC" not in text):
        return ()
    found: dict[str, PaperRef] = {}
    for url, label in _iter_links(text):
        paper = parse_paper_url(url, label)
        if paper is not None and paper.key not in found:
            found[paper.key] = paper
    if any(word in text for word in ("arxiv:", "arXiv:", "ArXiv:", "doi:", "DOI:", "PMID", "PMC")):
        for paper in _iter_text_ids(_SLACK_LINK.sub(" ", text)):
            if fits_index(paper.value):  # a ``doi:`` runs to the next space: 40 KB of it is no identifier
                found.setdefault(paper.key, paper)
    return tuple(found.values())


def _iter_links(text: str) -> Iterator[tuple[str, str | None]]:
    for m in _SLACK_LINK.finditer(text):
        label = unescape(m.group(2)).strip() if m.group(2) else None
        if label and (label.startswith(("http://", "https://")) or label == m.group(1)):
            label = None
        if len(m.group(1)) <= MAX_URL_CHARS:
            yield unescape(m.group(1)), label or None
    # the bare URLs outside Slack's links: a link's place is blanked rather than looked up among the others
    for m in _BARE_URL.finditer(_SLACK_LINK.sub(" ", text)):
        if len(m.group(0)) <= MAX_URL_CHARS:
            yield _strip_trailing(unescape(m.group(0))), None


def _iter_text_ids(text: str) -> Iterator[PaperRef]:
    for m in _TEXT_ARXIV.finditer(text):
        ident = normalize_arxiv_id(m.group(1))
        if ident:
            yield ref("arxiv", ident, f"https://arxiv.org/abs/{ident}", None)
    for m in _TEXT_DOI.finditer(text):
        found = doi_ref(_strip_trailing(m.group(1)), None)
        if found:
            yield found
    for m in _TEXT_PMID.finditer(text):
        yield ref("pmid", m.group(1), f"https://pubmed.ncbi.nlm.nih.gov/{m.group(1)}/", None)
    for m in _TEXT_PMCID.finditer(text):
        yield ref("pmcid", m.group(1), f"https://pmc.ncbi.nlm.nih.gov/articles/{m.group(1)}/", None)


def _strip_trailing(url: str) -> str:
    # Works on an end index, each bracket counted once, so a run of thousands of ``)`` costs no more than reading it.
    end = _trim_end(url, len(url))
    # A closing bracket belongs to the URL only when the URL opened one.
    for close, open_ in ((")", "("), ("]", "["), ("}", "{")):
        extra = url.count(close, 0, end) - url.count(open_, 0, end)
        while extra > 0 and end and url[end - 1] == close:
            end = _trim_end(url, end - 1)
            extra -= 1
    return url[:end]


def _trim_end(url: str, end: int) -> int:
    while end and url[end - 1] in TRAILING:
        end -= 1
    return end


def parse_paper_url(url: str, label: str | None = None) -> PaperRef | None:
    """The paper a single URL points at, or None when it is not a paper page (or longer than ``MAX_URL_CHARS``, or
    its identifier longer than ``MAX_ID_BYTES``)."""
    if len(url) > MAX_URL_CHARS:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    path = unquote(parts.path)
    query = parse_qs(parts.query)
    for suffix, handler in _HOSTS:
        if host == suffix or host.endswith("." + suffix):
            found = handler(path, query, url, label)
            if found is not None:
                return found if fits_index(found.value) else None
    # any publisher: a DOI in the query string (PLOS ``article?id=10.1371/...``) or after ``/doi/`` in the path
    found = doi_anywhere(path, query, url, label)
    return found if found is not None and fits_index(found.value) else None
