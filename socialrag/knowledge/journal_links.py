"""The link forms of journals and the life sciences: bioRxiv and medRxiv (with the version a link names),
PubMed, PMC and Europe PMC, Nature, Springer, eLife, Frontiers, BMC, Cell Press and ScienceDirect (Elsevier's
PII), The Lancet, Oxford Academic, and any publisher that writes the DOI in its URL (Science, PNAS, PLOS,
Wiley, Taylor & Francis...), all read from the URL alone: no page is fetched."""

from __future__ import annotations

import re

from socialrag.knowledge.link_ids import Handler, doi_ref, ref, segments
from socialrag.models import PaperRef

_RXIV = re.compile(
    r"^/content/(?:early/[0-9]{4}/[0-9]{2}/[0-9]{2}/)?(?:10\.1101/)?"
    r"((?:[0-9]{4}\.[0-9]{2}\.[0-9]{2}\.)?[0-9]{6,})(?:v([0-9]+))?",
    re.IGNORECASE,
)
# Elsevier's publisher item id as Cell Press, ScienceDirect and The Lancet write it: ``S0092-8674(20)30401-0``,
# ``S0092867420304010``, ``PIIS0140-6736(20)30183-5``; kept as its 17 characters, upper case
_PII = re.compile(r"^(?:PII)?(S[0-9X]{4}-?[0-9X]{4}\(?[0-9]{2}\)?[0-9]{5}-?[0-9X])$", re.IGNORECASE)
# a DOI inside a path, up to the views publishers add after it (``/full``, ``/abstract``, ``/pdf``, ``.pdf``); the
# DOI runs to the end of the path, so these are searched only after the path's last ``?`` or ``#`` (see _search_tail)
_DOI_IN_PATH = re.compile(r"/(10\.[0-9]{4,9}/[^?#]+?)(?:/(?:full|fulltext|abstract|pdf|epdf|meta|html))?(?:\.pdf)?/?$")
_QUERY_DOI = re.compile(r"^(?:doi:)?(10\.[0-9]{4,9}/[^\s&#]+)$", re.IGNORECASE)
_PATH_DOI = re.compile(
    r"/doi/(?:abs/|full/|pdf/|epdf/|pdfdirect/|fullHtml/|reader/|book/|suppl/)?(10\.[0-9]{4,9}/[^?#]+?)/?$"
)


def _search_tail(pattern: re.Pattern[str], path: str) -> re.Match[str] | None:
    """``pattern.search(path)`` for a pattern whose match runs to the end of the path with no ``?`` or ``#`` in it.

    Only the part after the last ``?`` or ``#`` (an unquoted ``%3F``) can hold such a match. Searching the whole path
    would try every ``/10.`` before that character and scan to it each time, which is quadratic in the path's length;
    in the tail the first place that starts a DOI matches, so the work is linear."""
    return pattern.search(path, max(path.rfind("?"), path.rfind("#")) + 1)


def pii(raw: str) -> str | None:
    """Elsevier's PII in its plain 17-character form, or None."""
    m = _PII.match(raw.strip())
    return re.sub(r"[-()]", "", m.group(1)).upper() if m else None


def _rxiv(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = _RXIV.match(path)
    if not m:
        return None
    return doi_ref("10.1101/" + m.group(1), label, url, int(m.group(2)) if m.group(2) else None)


def _ncbi(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.search(r"/(PMC[0-9]+)/?", path, re.IGNORECASE)
    if m:
        return ref("pmcid", m.group(1).upper(), url, label)
    m = re.match(r"^/(?:pubmed/)?([0-9]{4,9})/?$", path)
    if m:
        return ref("pmid", m.group(1), url, label)
    return None


def _europepmc(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(r"^/(?:article|abstract|api/fulltextRepo)/(MED|PMC)/(PMC)?([0-9]+)", path, re.IGNORECASE)
    if not m:
        return None
    if m.group(1).upper() == "PMC":
        return ref("pmcid", "PMC" + m.group(3), url, label)
    return ref("pmid", m.group(3), url, label)


def _springer(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(
        r"^/(?:article|chapter|content/pdf|referenceworkentry|rwe|protocol)/(10\.[0-9]{4,9}/[^?#]+?)(?:\.pdf)?/?$", path
    )
    return doi_ref(m.group(1), label, url) if m else None


def _nature(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(r"^/articles/([a-z0-9\-.]+?)(?:\.pdf)?/?$", path, re.IGNORECASE)
    if m and re.search(r"[0-9]", m.group(1)):
        return doi_ref("10.1038/" + m.group(1), label, url)
    return None


def _elife(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """eLife: ``/articles/12345``, ``/articles/12345v2``, ``/reviewed-preprints/12345`` and
    ``/download/.../elife-12345-v1.pdf``, all the DOI ``10.7554/eLife.12345``."""
    m = re.match(r"^/(?:articles|reviewed-preprints)/([0-9]{4,6})(?:v([0-9]+))?(?:/|\.pdf)?$", path)
    if m is None:
        m = re.search(r"/elife-([0-9]{4,6})-v([0-9]+)\.pdf$", path)
    if m is None:
        return None
    return doi_ref(f"10.7554/eLife.{int(m.group(1)):05d}", label, url)


def _doi_after_articles(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """Frontiers (``/articles/10.3389/...`` or ``/journals/X/articles/10.3389/.../full``) and BMC
    (``/articles/10.1186/...``): the DOI is in the path."""
    m = _search_tail(_DOI_IN_PATH, path)
    return doi_ref(m.group(1), label, url) if m else None


def _pii_page(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """Cell Press (``/cell/fulltext/S0092-8674(20)30401-0``), ScienceDirect (``/science/article/pii/S...``),
    Elsevier's link hub (``/retrieve/pii/S...``), The Lancet (``/article/PIIS0140-6736(20)30183-5/fulltext``),
    and a PDF link's ``?pii=``. The DOI is not in these URLs: Crossref finds it from the PII."""
    for value in query.get("pii", ()):
        if found := pii(value):
            return ref("pii", found, url, label)
    for seg in segments(path):
        if found := pii(seg):
            return ref("pii", found, url, label)
    return _doi_in_path(path, url, label)


def _oup(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """Oxford Academic: ``/JOURNAL/article/doi/10.1093/...`` carries the DOI; ``/JOURNAL/article/VOL/ISSUE/PAGE/ID``
    only the site's article number (an ``oup:`` identity)."""
    m = re.search(r"/article(?:-abstract|-pdf|-lookup)?/doi/(10\.[0-9]{4,9}/[^/]+/[^/?#]+)", path)
    if m:
        return doi_ref(m.group(1).removesuffix(".pdf"), label, url)
    m = re.match(r"^/([a-z0-9\-]+)/article(?:-abstract|-pdf)?/(?:[^/]+/){2,3}([0-9]{5,})(?:/|$)", path)
    return ref("oup", f"{m.group(1)}/{m.group(2)}", url, label) if m else None


def doi_in_query(query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """PLOS's ``article?id=10.1371/...`` and the like: a DOI as a query value."""
    for key in ("id", "doi", "DOI", "articleid"):
        for value in query.get(key, ()):
            m = _QUERY_DOI.match(value.strip())
            if m:
                return doi_ref(m.group(1), label, url)
    return None


def _doi_in_path(path: str, url: str, label: str | None) -> PaperRef | None:
    m = _search_tail(_PATH_DOI, path)
    return doi_ref(m.group(1).removesuffix(".pdf"), label, url) if m else None


def doi_anywhere(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """Any publisher: a DOI in the query string or after ``/doi/`` in the path (Science, PNAS, Wiley, T&F...)."""
    return doi_in_query(query, url, label) or _doi_in_path(path, url, label)


JOURNAL_HOSTS: tuple[tuple[str, Handler], ...] = (
    ("biorxiv.org", _rxiv),
    ("medrxiv.org", _rxiv),
    ("ncbi.nlm.nih.gov", _ncbi),
    ("europepmc.org", _europepmc),
    ("link.springer.com", _springer),
    ("nature.com", _nature),
    ("elifesciences.org", _elife),
    ("frontiersin.org", _doi_after_articles),
    ("biomedcentral.com", _doi_after_articles),
    ("cell.com", _pii_page),
    ("sciencedirect.com", _pii_page),
    ("linkinghub.elsevier.com", _pii_page),
    ("thelancet.com", _pii_page),
    ("jbc.org", _pii_page),
    ("academic.oup.com", _oup),
)
