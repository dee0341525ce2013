"""The link forms of computer-science sites: arXiv and its mirrors, the ACL Anthology, OpenReview, Semantic
Scholar, the ACM DL, NeurIPS, PMLR, CVF, IEEE Xplore, IJCAI, OJS journals (TACL, AAAI) and MIT Press."""

from __future__ import annotations

import re

from socialrag.knowledge.link_ids import (
    ARXIV_NEW,
    Handler,
    acl_id,
    doi_ref,
    normalize_arxiv_id,
    ref,
    segments,
)
from socialrag.models import PaperRef
from socialrag.text import ascii_digits

_S2_HEX = re.compile(r"^[0-9a-f]{40}$")


def _arxiv(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    segs = segments(path)
    if len(segs) >= 2 and segs[0] in {"abs", "pdf", "html", "format", "papers", "overview"}:
        ident = normalize_arxiv_id("/".join(segs[1:3]) if not re.match(ARXIV_NEW, segs[1]) else segs[1])
        if ident:
            return ref("arxiv", ident, url, label)
    return None


def _arxiv_mirror(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """Hugging Face papers, alphaXiv, ar5iv: pages about one arXiv paper."""
    segs = segments(path)
    if len(segs) >= 2 and segs[0] in {"papers", "abs", "overview", "html", "pdf", "paper"}:
        rest = segs[1:3]
        ident = normalize_arxiv_id(rest[0]) or normalize_arxiv_id("/".join(rest))
        if ident:
            return ref("arxiv", ident, url, label)
    if len(segs) == 1:
        ident = normalize_arxiv_id(segs[0])
        if ident:
            return ref("arxiv", ident, url, label)
    return None


def _doi_org(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    return doi_ref(path.lstrip("/"), label, url)


def _acl(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    segs = segments(path)
    if segs and segs[0] == "anthology":
        segs = segs[1:]
    if not segs or segs[0] in {"volumes", "events", "people", "venues", "sigs", "search", "info"}:
        return None
    acl = acl_id(segs[-1])
    return ref("acl", acl, url, label) if acl else None


def _openreview(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    if path.rstrip("/") in {"/forum", "/pdf", "/attachment"} and query.get("id"):
        ident = query["id"][0].strip()
        if re.fullmatch(r"[A-Za-z0-9_\-]{5,}", ident):
            return ref("openreview", ident, url, label)
    return None


def _semantic_scholar(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    segs = segments(path)
    for seg in segs:
        m = re.fullmatch(r"corpusid:([0-9]+)", seg, re.IGNORECASE)
        if m:
            return ref("corpus", m.group(1), url, label)
    if len(segs) == 2 and re.fullmatch(r"[0-9a-f]{4}", segs[0]) and re.fullmatch(r"[0-9a-f]{36}\.pdf", segs[1]):
        return ref("s2", segs[0] + segs[1][:36], url, label)  # pdfs.semanticscholar.org/<4>/<36>.pdf
    if len(segs) >= 2 and segs[0] in {"paper", "reader"}:
        last = segs[-1].lower()
        if _S2_HEX.match(last):
            return ref("s2", last, url, label)
    if len(segs) >= 2 and segs[0] == "arxiv":
        ident = normalize_arxiv_id("/".join(segs[1:]))
        return ref("arxiv", ident, url, label) if ident else None
    corpus = query.get("corpusId") or query.get("corpusid")
    if corpus and ascii_digits(corpus[0]):
        return ref("corpus", corpus[0], url, label)
    return None


def _acm(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(r"^/doi/(?:abs/|pdf/|full/|fullHtml/|epdf/|book/|proceedings/)?(10\.[0-9]{4,9}/.+?)/?$", path)
    if m:
        return doi_ref(m.group(1), label, url)
    if path.startswith("/citation.cfm") and query.get("id"):
        ident = query["id"][0].split(".")[-1]
        if ident.isdigit():
            return ref("acm", ident, url, label)
    return None


def _neurips(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.search(r"/([0-9]{4})/(?:hash|file)/([0-9a-f]{32})-", path)
    if m:
        return ref("neurips", f"{m.group(1)}/{m.group(2)}", url, label)
    m = re.match(r"^/paper/([0-9]{3,5})-[a-z0-9\-]+?(?:\.pdf)?/?$", path)
    if m:
        return ref("neurips", m.group(1), url, label)
    return None


def _pmlr(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(r"^/(v[0-9]+)/([a-z0-9\-]+?[0-9]{2}[a-z]{0,2})(?:\.html|\.pdf|/\2\.pdf|/\2-supp\.pdf)?/?$", path)
    if m:
        return ref("pmlr", f"{m.group(1)}/{m.group(2)}", url, label)
    return None


def _cvf(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.search(r"/(?:html|papers)/(?:[^/]+/)?([A-Za-z0-9_\-]+_paper)\.(?:html|pdf)$", path)
    if m:
        return ref("cvf", m.group(1), url, label)
    return None


def _ieee(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.search(r"/document/([0-9]+)", path)
    if m:
        return ref("ieee", m.group(1), url, label)
    if query.get("arnumber") and ascii_digits(query["arnumber"][0]):
        return ref("ieee", query["arnumber"][0], url, label)
    return None


def _acm_delivery(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """``delivery.acm.org/10.1145/<bucket>/<article id>/<file>.pdf``: the ACM DL's old PDF links."""
    m = re.match(r"^/10\.[0-9]{4,9}/[0-9]+/([0-9]+)/[^/]+\.pdf$", path, re.IGNORECASE)
    return ref("acm", m.group(1), url, label) if m else None


def _ijcai(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """IJCAI proceedings: ``/proceedings/2019/0123[.pdf]`` (a DOI from 2017 on), ``/Proceedings/16/Papers/123.pdf``."""
    m = re.match(r"^/proceedings/([0-9]{2}|[0-9]{4})/(?:papers/)?0*([0-9]{1,4})(?:\.pdf)?/?$", path, re.IGNORECASE)
    if not m:
        return None
    year = int(m.group(1))
    year += 0 if year >= 1000 else 2000 if year < 50 else 1900
    if year >= 2017:
        return doi_ref(f"10.24963/ijcai.{year}/{int(m.group(2))}", label, url)
    return ref("ijcai", f"{year}/{int(m.group(2))}", url, label)


def _ojs(scheme: str) -> Handler:
    """Open Journal Systems pages of one journal (TACL, AAAI): ``.../article/view/<id>[/<file>]``."""

    def handler(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
        m = re.search(r"/article/(?:view|download)/([0-9]+)(?:/[0-9]+)?(?:\.pdf)?/?$", path)
        return ref(scheme, m.group(1), url, label) if m else None

    return handler


def _mit_press(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """MIT Press journals (TACL, Computational Linguistics): ``/tacl/article/doi/10.1162/tacl_a_00313/43538/``."""
    m = re.search(r"/(10\.1162/[A-Za-z0-9_.\-]+)", path)
    return doi_ref(m.group(1), label, url) if m else None


CS_HOSTS: tuple[tuple[str, Handler], ...] = (
    ("arxiv.org", _arxiv),
    ("ar5iv.org", _arxiv_mirror),
    ("ar5iv.labs.arxiv.org", _arxiv_mirror),
    ("huggingface.co", _arxiv_mirror),
    ("hf.co", _arxiv_mirror),
    ("alphaxiv.org", _arxiv_mirror),
    ("doi.org", _doi_org),
    ("aclanthology.org", _acl),
    ("aclweb.org", _acl),
    ("openreview.net", _openreview),
    ("semanticscholar.org", _semantic_scholar),
    ("dl.acm.org", _acm),
    ("papers.nips.cc", _neurips),
    ("proceedings.neurips.cc", _neurips),
    ("neurips.cc", _neurips),
    ("proceedings.mlr.press", _pmlr),
    ("openaccess.thecvf.com", _cvf),
    ("ieeexplore.ieee.org", _ieee),
    ("delivery.acm.org", _acm_delivery),
    ("ijcai.org", _ijcai),
    ("transacl.org", _ojs("tacl")),
    ("ojs.aaai.org", _ojs("aaai")),
    ("aaai.org", _ojs("aaai")),
    ("direct.mit.edu", _mit_press),
    ("mitpressjournals.org", _mit_press),
)
