"""The pieces every link form shares: a ``PaperRef`` from an identifier, DOIs that belong to arXiv or the ACL
Anthology, arXiv and ACL Anthology ids, and the handler type of one site's link forms."""

from __future__ import annotations

import re
from collections.abc import Callable

from socialrag.models import PaperRef

TRAILING = ".,;:!?'\"*_~"
ARXIV_NEW = r"[0-9]{4}\.[0-9]{4,5}"
ARXIV_OLD = r"[a-z][a-z\-]+(?:\.[a-z]{2})?/[0-9]{7}"
_ARXIV_ID = re.compile(rf"^({ARXIV_NEW}|{ARXIV_OLD})(v[0-9]+)?$", re.IGNORECASE)
_ACL_NEW = re.compile(r"^([0-9]{4}\.[a-z0-9\-]+\.[0-9]+)$", re.IGNORECASE)
_ACL_OLD = re.compile(r"^([A-Z][0-9]{2}-[0-9]{4})$", re.IGNORECASE)
_DOI = re.compile(r"^10\.[0-9]{4,9}/\S+$")
# The longest identifier kept, in UTF-8 bytes: as long as the longest link read (``links.MAX_URL_CHARS``), and under
# the 2,700 bytes or so Postgres can index. Real ones run to a few dozen characters; a longer one (a crafted
# ``doi:`` in a message, which runs to the next space, a link's path in a script of three bytes a letter, a source's
# runaway id) would fail every write that holds it: a whole page of a channel's history, read again and failing
# again, or a batch of lookups.
MAX_ID_BYTES = 2048

# One site's link forms: (path, query, url, label) -> the paper, or None when the URL is not a paper page.
Handler = Callable[[str, dict[str, list[str]], str, "str | None"], "PaperRef | None"]


def ref(scheme: str, value: str, url: str, label: str | None, version: int | None = None) -> PaperRef:
    return PaperRef(scheme=scheme, value=value, url=url, label=label, version=version)


def fits_index(value: str) -> bool:
    """Whether an identifier's value is short enough to keep (``MAX_ID_BYTES``)."""
    return len(value.encode("utf-8", "replace")) <= MAX_ID_BYTES


def segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def normalize_arxiv_id(raw: str) -> str | None:
    """An arXiv id as PaperPing keeps it (no version, old-style archive lowered), or None."""
    raw = raw.strip().removesuffix(".pdf")
    m = _ARXIV_ID.match(raw)
    if not m:
        return None
    ident = m.group(1)
    if "/" in ident:
        archive, number = ident.split("/", 1)
        return f"{archive.lower()}/{number}"
    return ident


def doi_ref(doi: str, label: str | None, url: str | None = None, version: int | None = None) -> PaperRef | None:
    """A DOI as an identity: ACL and arXiv DOIs become ``acl:`` and ``arxiv:`` ids, any other is lowered."""
    doi = doi.strip().rstrip(TRAILING)
    if not _DOI.match(doi):
        return None
    lowered = doi.lower()
    shown = url or f"https://doi.org/{doi}"
    if lowered.startswith("10.18653/v1/"):
        acl = acl_id(doi.split("/", 2)[2])
        if acl:
            return ref("acl", acl, shown, label)
    if lowered.startswith("10.48550/arxiv."):
        ident = normalize_arxiv_id(doi.split("/", 1)[1][len("arxiv.") :])
        if ident:
            return ref("arxiv", ident, shown, label)
    return ref("doi", lowered, shown, label, version)


def doi_identity(doi: str) -> tuple[str, str] | None:
    """A DOI as PaperPing's identity: ACL and arXiv DOIs become ``acl:`` and ``arxiv:`` ids."""
    found = doi_ref(doi, None)
    return (found.scheme, found.value) if found else None


def acl_id(raw: str) -> str | None:
    """An ACL Anthology id (``2020.acl-main.1``, ``P19-1001``) from a path's last segment, or None."""
    raw = raw.strip().removesuffix("/")
    for suffix in (".pdf", ".bib", ".xml"):
        raw = raw.removesuffix(suffix)
    if _ACL_NEW.match(raw):
        return raw.lower()
    if _ACL_OLD.match(raw):
        return raw.upper()
    return None
