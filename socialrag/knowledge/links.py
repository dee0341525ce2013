"""Paper links in message text, turned into canonical identifiers. Pure: text in, ``PaperRef`` out.

The same paper shared as an arXiv abstract page, its PDF, a Hugging Face papers page or an alphaXiv page
becomes one ``arxiv:`` identifier; DOIs that belong to arXiv or the ACL Anthology become those identifiers.
A link that is not a paper (a list page, a volume, a profile, a repository) gives nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from html import unescape
from urllib.parse import parse_qs, unquote, urlsplit

from socialrag.models import PaperRef

# Slack wraps links as <url> or <url|label>; <@U..>, <#C..> and <!here> are not links.
_SLACK_LINK = re.compile(r"<(https?://[^>|\s]+)(?:\|([^>]*))?>", re.IGNORECASE)
_BARE_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_TEXT_ARXIV = re.compile(r"\barxiv:\s?((?:\d{4}\.\d{4,5}|[a-z][a-z\-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?)", re.IGNORECASE)
_TEXT_DOI = re.compile(r"\bdoi:\s?(10\.\d{4,9}/[^\s<>\"']+)", re.IGNORECASE)
_TRAILING = ".,;:!?'\"*_~"

ARXIV_NEW = r"\d{4}\.\d{4,5}"
ARXIV_OLD = r"[a-z][a-z\-]+(?:\.[a-z]{2})?/\d{7}"
_ARXIV_ID = re.compile(rf"^({ARXIV_NEW}|{ARXIV_OLD})(v\d+)?$", re.IGNORECASE)
_ACL_NEW = re.compile(r"^(\d{4}\.[a-z0-9\-]+\.\d+)$", re.IGNORECASE)
_ACL_OLD = re.compile(r"^([A-Z]\d{2}-\d{4})$", re.IGNORECASE)
_S2_HEX = re.compile(r"^[0-9a-f]{40}$")
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")


def find_paper_refs(text: str) -> tuple[PaperRef, ...]:
    """Every distinct paper a message's text links to, in order of first appearance."""
    if not text or ("http" not in text and ":" not in text):
        return ()
    found: dict[str, PaperRef] = {}
    for url, label in _iter_links(text):
        ref = parse_paper_url(url, label)
        if ref is not None and ref.key not in found:
            found[ref.key] = ref
    lowered = text.lower()
    if "arxiv:" in lowered or "doi:" in lowered:
        for ref in _iter_text_ids(_SLACK_LINK.sub(" ", text)):
            found.setdefault(ref.key, ref)
    return tuple(found.values())


def _iter_links(text: str) -> Iterator[tuple[str, str | None]]:
    consumed: list[tuple[int, int]] = []
    for m in _SLACK_LINK.finditer(text):
        consumed.append(m.span())
        label = unescape(m.group(2)).strip() if m.group(2) else None
        if label and (label.startswith(("http://", "https://")) or label == m.group(1)):
            label = None
        yield unescape(m.group(1)), label or None
    for m in _BARE_URL.finditer(text):
        if any(a <= m.start() < b for a, b in consumed):
            continue
        yield _strip_trailing(unescape(m.group(0))), None


def _iter_text_ids(text: str) -> Iterator[PaperRef]:
    for m in _TEXT_ARXIV.finditer(text):
        ident = normalize_arxiv_id(m.group(1))
        if ident:
            yield PaperRef("arxiv", ident, f"https://arxiv.org/abs/{ident}")
    for m in _TEXT_DOI.finditer(text):
        ref = _doi_ref(_strip_trailing(m.group(1)), None)
        if ref:
            yield ref


def _strip_trailing(url: str) -> str:
    while url and url[-1] in _TRAILING:
        url = url[:-1]
    # A closing bracket belongs to the URL only when the URL opened one.
    for close, open_ in ((")", "("), ("]", "["), ("}", "{")):
        while url.endswith(close) and url.count(close) > url.count(open_):
            url = url[:-1]
            while url and url[-1] in _TRAILING:
                url = url[:-1]
    return url


def parse_paper_url(url: str, label: str | None = None) -> PaperRef | None:
    """The paper a single URL points at, or None when it is not a paper page."""
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
            ref = handler(path, query, url, label)
            if ref is not None:
                return ref
    # any publisher: a DOI in the query string (PLOS ``article?id=10.1371/...``) or after ``/doi/`` in the path
    return _doi_in_query(query, url, label) or _doi_in_path(path, url, label)


def normalize_arxiv_id(raw: str) -> str | None:
    raw = raw.strip().removesuffix(".pdf")
    m = _ARXIV_ID.match(raw)
    if not m:
        return None
    ident = m.group(1)
    if "/" in ident:
        archive, number = ident.split("/", 1)
        return f"{archive.lower()}/{number}"
    return ident


def _ref(scheme: str, value: str, url: str, label: str | None) -> PaperRef:
    return PaperRef(scheme=scheme, value=value, url=url, label=label)


def _segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def _arxiv(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    segs = _segments(path)
    if len(segs) >= 2 and segs[0] in {"abs", "pdf", "html", "format", "papers", "overview"}:
        ident = normalize_arxiv_id("/".join(segs[1:3]) if not re.match(ARXIV_NEW, segs[1]) else segs[1])
        if ident:
            return _ref("arxiv", ident, url, label)
    return None


def _arxiv_mirror(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """Hugging Face papers, alphaXiv, ar5iv: pages about one arXiv paper."""
    segs = _segments(path)
    if len(segs) >= 2 and segs[0] in {"papers", "abs", "overview", "html", "pdf", "paper"}:
        rest = segs[1:3]
        ident = normalize_arxiv_id(rest[0]) or normalize_arxiv_id("/".join(rest))
        if ident:
            return _ref("arxiv", ident, url, label)
    if len(segs) == 1:
        ident = normalize_arxiv_id(segs[0])
        if ident:
            return _ref("arxiv", ident, url, label)
    return None


def _doi_ref(doi: str, label: str | None, url: str | None = None) -> PaperRef | None:
    doi = doi.strip().rstrip(_TRAILING)
    if not _DOI.match(doi):
        return None
    lowered = doi.lower()
    shown = url or f"https://doi.org/{doi}"
    if lowered.startswith("10.18653/v1/"):
        acl = _acl_id(doi.split("/", 2)[2])
        if acl:
            return _ref("acl", acl, shown, label)
    if lowered.startswith("10.48550/arxiv."):
        ident = normalize_arxiv_id(doi.split("/", 1)[1][len("arxiv.") :])
        if ident:
            return _ref("arxiv", ident, shown, label)
    return _ref("doi", lowered, shown, label)


def doi_identity(doi: str) -> tuple[str, str] | None:
    """A DOI as PaperPing's identity: ACL and arXiv DOIs become ``acl:`` and ``arxiv:`` ids."""
    ref = _doi_ref(doi, None)
    return (ref.scheme, ref.value) if ref else None


def _doi_org(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    return _doi_ref(path.lstrip("/"), label, url)


def _acl_id(raw: str) -> str | None:
    raw = raw.strip().removesuffix("/")
    for suffix in (".pdf", ".bib", ".xml"):
        raw = raw.removesuffix(suffix)
    if _ACL_NEW.match(raw):
        return raw.lower()
    if _ACL_OLD.match(raw):
        return raw.upper()
    return None


def _acl(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    segs = _segments(path)
    if segs and segs[0] == "anthology":
        segs = segs[1:]
    if not segs or segs[0] in {"volumes", "events", "people", "venues", "sigs", "search", "info"}:
        return None
    acl = _acl_id(segs[-1])
    return _ref("acl", acl, url, label) if acl else None


def _openreview(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    if path.rstrip("/") in {"/forum", "/pdf", "/attachment"} and query.get("id"):
        ident = query["id"][0].strip()
        if re.fullmatch(r"[A-Za-z0-9_\-]{5,}", ident):
            return _ref("openreview", ident, url, label)
    return None


def _semantic_scholar(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    segs = _segments(path)
    for seg in segs:
        m = re.fullmatch(r"corpusid:(\d+)", seg, re.IGNORECASE)
        if m:
            return _ref("corpus", m.group(1), url, label)
    if len(segs) == 2 and re.fullmatch(r"[0-9a-f]{4}", segs[0]) and re.fullmatch(r"[0-9a-f]{36}\.pdf", segs[1]):
        return _ref("s2", segs[0] + segs[1][:36], url, label)  # pdfs.semanticscholar.org/<4>/<36>.pdf
    if len(segs) >= 2 and segs[0] in {"paper", "reader"}:
        last = segs[-1].lower()
        if _S2_HEX.match(last):
            return _ref("s2", last, url, label)
    if len(segs) >= 2 and segs[0] == "arxiv":
        ident = normalize_arxiv_id("/".join(segs[1:]))
        return _ref("arxiv", ident, url, label) if ident else None
    corpus = query.get("corpusId") or query.get("corpusid")
    if corpus and corpus[0].isdigit():
        return _ref("corpus", corpus[0], url, label)
    return None


def _acm(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(r"^/doi/(?:abs/|pdf/|full/|fullHtml/|epdf/|book/|proceedings/)?(10\.\d{4,9}/.+?)/?$", path)
    if m:
        return _doi_ref(m.group(1), label, url)
    if path.startswith("/citation.cfm") and query.get("id"):
        ident = query["id"][0].split(".")[-1]
        if ident.isdigit():
            return _ref("acm", ident, url, label)
    return None


def _rxiv(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(
        r"^/content/(?:early/\d{4}/\d{2}/\d{2}/)?(?:10\.1101/)?((?:\d{4}\.\d{2}\.\d{2}\.)?\d{6,})(?:v\d+)?", path
    )
    return _doi_ref("10.1101/" + m.group(1), label, url) if m else None


def _ncbi(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.search(r"/(PMC\d+)/?", path, re.IGNORECASE)
    if m:
        return _ref("pmcid", m.group(1).upper(), url, label)
    m = re.match(r"^/(?:pubmed/)?(\d{4,9})/?$", path)
    if m:
        return _ref("pmid", m.group(1), url, label)
    return None


def _europepmc(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(r"^/(?:article|abstract)/(MED|PMC)/(PMC)?(\d+)", path, re.IGNORECASE)
    if not m:
        return None
    if m.group(1).upper() == "PMC":
        return _ref("pmcid", "PMC" + m.group(3), url, label)
    return _ref("pmid", m.group(3), url, label)


def _neurips(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.search(r"/(\d{4})/(?:hash|file)/([0-9a-f]{32})-", path)
    if m:
        return _ref("neurips", f"{m.group(1)}/{m.group(2)}", url, label)
    m = re.match(r"^/paper/(\d{3,5})-[a-z0-9\-]+?(?:\.pdf)?/?$", path)
    if m:
        return _ref("neurips", m.group(1), url, label)
    return None


def _pmlr(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(r"^/(v\d+)/([a-z0-9\-]+?\d{2}[a-z]{0,2})(?:\.html|\.pdf|/\2\.pdf|/\2-supp\.pdf)?/?$", path)
    if m:
        return _ref("pmlr", f"{m.group(1)}/{m.group(2)}", url, label)
    return None


def _cvf(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.search(r"/(?:html|papers)/(?:[^/]+/)?([A-Za-z0-9_\-]+_paper)\.(?:html|pdf)$", path)
    if m:
        return _ref("cvf", m.group(1), url, label)
    return None


def _ieee(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.search(r"/document/(\d+)", path)
    if m:
        return _ref("ieee", m.group(1), url, label)
    if query.get("arnumber") and query["arnumber"][0].isdigit():
        return _ref("ieee", query["arnumber"][0], url, label)
    return None


def _springer(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(
        r"^/(?:article|chapter|content/pdf|referenceworkentry|rwe|protocol)/(10\.\d{4,9}/[^?#]+?)(?:\.pdf)?/?$", path
    )
    return _doi_ref(m.group(1), label, url) if m else None


def _nature(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    m = re.match(r"^/articles/([a-z0-9\-.]+?)(?:\.pdf)?/?$", path, re.IGNORECASE)
    if m and re.search(r"\d", m.group(1)):
        return _doi_ref("10.1038/" + m.group(1), label, url)
    return None


def _acm_delivery(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """``delivery.acm.org/10.1145/<bucket>/<article id>/<file>.pdf``: the ACM DL's old PDF links."""
    m = re.match(r"^/10\.\d{4,9}/\d+/(\d+)/[^/]+\.pdf$", path, re.IGNORECASE)
    return _ref("acm", m.group(1), url, label) if m else None


def _ijcai(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """IJCAI proceedings: ``/proceedings/2019/0123[.pdf]`` (a DOI from 2017 on), ``/Proceedings/16/Papers/123.pdf``."""
    m = re.match(r"^/proceedings/(\d{2}|\d{4})/(?:papers/)?0*(\d{1,4})(?:\.pdf)?/?$", path, re.IGNORECASE)
    if not m:
        return None
    year = int(m.group(1))
    year += 0 if year >= 1000 else 2000 if year < 50 else 1900
    if year >= 2017:
        return _doi_ref(f"10.24963/ijcai.{year}/{int(m.group(2))}", label, url)
    return _ref("ijcai", f"{year}/{int(m.group(2))}", url, label)


def _ojs(scheme: str) -> _Handler:
    """Open Journal Systems pages of one journal (TACL, AAAI): ``.../article/view/<id>[/<file>]``."""

    def handler(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
        m = re.search(r"/article/(?:view|download)/(\d+)(?:/\d+)?(?:\.pdf)?/?$", path)
        return _ref(scheme, m.group(1), url, label) if m else None

    return handler


def _mit_press(path: str, query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    """MIT Press journals (TACL, Computational Linguistics): ``/tacl/article/doi/10.1162/tacl_a_00313/43538/``."""
    m = re.search(r"/(10\.1162/[A-Za-z0-9_.\-]+)", path)
    return _doi_ref(m.group(1), label, url) if m else None


_QUERY_DOI = re.compile(r"^(?:doi:)?(10\.\d{4,9}/[^\s&#]+)$", re.IGNORECASE)
_PATH_DOI = re.compile(r"/doi/(?:abs/|full/|pdf/|epdf/|pdfdirect/|fullHtml/|reader/|book/)?(10\.\d{4,9}/[^?#]+?)/?$")


def _doi_in_query(query: dict[str, list[str]], url: str, label: str | None) -> PaperRef | None:
    for key in ("id", "doi", "DOI", "articleid"):
        for value in query.get(key, ()):
            m = _QUERY_DOI.match(value.strip())
            if m:
                return _doi_ref(m.group(1), label, url)
    return None


def _doi_in_path(path: str, url: str, label: str | None) -> PaperRef | None:
    m = _PATH_DOI.search(path)
    return _doi_ref(m.group(1).removesuffix(".pdf"), label, url) if m else None


_Handler = Callable[[str, dict[str, list[str]], str, "str | None"], "PaperRef | None"]
_HOSTS: tuple[tuple[str, _Handler], ...] = (
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
    ("biorxiv.org", _rxiv),
    ("medrxiv.org", _rxiv),
    ("ncbi.nlm.nih.gov", _ncbi),
    ("europepmc.org", _europepmc),
    ("papers.nips.cc", _neurips),
    ("proceedings.neurips.cc", _neurips),
    ("neurips.cc", _neurips),
    ("proceedings.mlr.press", _pmlr),
    ("openaccess.thecvf.com", _cvf),
    ("ieeexplore.ieee.org", _ieee),
    ("link.springer.com", _springer),
    ("nature.com", _nature),
    ("delivery.acm.org", _acm_delivery),
    ("ijcai.org", _ijcai),
    ("transacl.org", _ojs("tacl")),
    ("ojs.aaai.org", _ojs("aaai")),
    ("aaai.org", _ojs("aaai")),
    ("direct.mit.edu", _mit_press),
    ("mitpressjournals.org", _mit_press),
)
