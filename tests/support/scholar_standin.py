"""Local stand-ins of Semantic Scholar's Graph and Recommendations APIs and of the arXiv API, for tests and
benchmarks of ``paperping run``: real response shapes, answers drawn from the ACL Anthology sample in
``tests/data``, and the gaps real data has (no abstract, no citation count, no publication date).

Semantic Scholar: ``POST graph/v1/paper/batch``, ``GET graph/v1/paper/search`` (and ``search/bulk`` by venue and
year), ``GET graph/v1/paper/{id}/
references|citations`` (``citations`` holds what cites a paper), ``GET graph/v1/author/search``,
``author/{id}`` and ``author/{id}/papers`` (from ``authors``), ``POST recommendations/v1/papers``, ORCID's
``orcid/{id}/person`` (from ``orcid_names``) and ``GET recommendations/v1/papers/forpaper/{id}``
(the papers sharing most words with the positive seeds). ``min_interval`` makes it answer ``429`` with
``Retry-After`` to callers clearly faster than the service's published pace, as the real one does. arXiv answers an
empty Atom feed (or the entries it is given).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.fixtures import ACL_DATA

_WORD = re.compile(r"[a-z]{4,}")
_STOP = frozenset(
    [
        "with",
        "from",
        "that",
        "this",
        "their",
        "which",
        "these",
        "using",
        "based",
        "paper",
        "model",
        "models",
        "task",
        "tasks",
    ]
)


def s2_paper(row: dict[str, Any], index: int) -> dict[str, Any]:
    """One ACL Anthology row as Semantic Scholar's paper object; every 7th has no abstract, every 4th no
    citation count, every 5th no publication date."""
    acl = row["acl_id"]
    year = int(row["year"]) if str(row.get("year", "")).isdigit() else None
    return {
        "paperId": hashlib.sha1(acl.encode()).hexdigest(),
        "externalIds": {"ACL": acl, "CorpusId": 100000 + index},
        "corpusId": 100000 + index,
        "url": f"https://www.semanticscholar.org/paper/{hashlib.sha1(acl.encode()).hexdigest()}",
        "title": row["title"],
        "abstract": None if index % 7 == 3 else row.get("abstract"),
        "tldr": None,
        "venue": row.get("venue") or "",
        "publicationVenue": None,
        "year": year,
        "publicationDate": None if index % 5 == 4 or year is None else f"{year}-07-05",
        "citationCount": None if index % 4 == 1 else (index * 37) % 400,
        "authors": [
            {"authorId": str(abs(hash(name)) % 10**8), "name": name, "affiliations": [], "externalIds": None}
            for name in row.get("authors", [])
        ],
        "references": [],
    }


def load_acl_rows(path: Path = ACL_DATA) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh]


def source_urls(url: str) -> dict[str, str]:
    """The settings (field names) that point every metadata service at the stand-in at ``url``."""
    return {
        "s2_api_url": url,
        "arxiv_api_url": url + "api/",
        "crossref_api_url": url + "crossref/",
        "openalex_api_url": url + "openalex/",
        "pubmed_api_url": url + "pubmed/",
        "biorxiv_api_url": url + "biorxiv/",
    }


def source_env(url: str) -> dict[str, str]:
    """The same as environment variables, for ``paperping run`` in a subprocess."""
    return {name.upper(): value for name, value in source_urls(url).items()}


def nothing_found(path: str) -> tuple[int, Any, str]:
    """OpenAlex's, PubMed's and bioRxiv's answers when they know nothing, for a lab of another field."""
    if path.startswith("/pubmed/efetch"):
        return 200, "<PubmedArticleSet></PubmedArticleSet>", "text/xml"
    if path.startswith("/pubmed/"):
        return 200, {"esearchresult": {"count": "0", "idlist": []}}, "application/json"
    if path.startswith("/biorxiv/"):
        return 200, {"messages": [{"status": "no posts found"}], "collection": []}, "application/json"
    return 200, {"meta": {"count": 0}, "results": []}, "application/json"


class ScholarStandIn:
    """The server. ``papers`` maps every lookup key (``ACL:…``, ``CorpusId:…``, the 40-hex id) to a paper."""

    def __init__(self, rows: list[dict[str, Any]] | None = None, *, min_interval: float = 0.0) -> None:
        rows = rows if rows is not None else load_acl_rows()
        self.papers: list[dict[str, Any]] = [s2_paper(r, i) for i, r in enumerate(rows)]
        self.by_key: dict[str, dict[str, Any]] = {}
        for p in self.papers:
            self.by_key[p["paperId"]] = p
            self.by_key["ACL:" + p["externalIds"]["ACL"]] = p
            self.by_key[f"CorpusId:{p['corpusId']}"] = p
        self.words = {p["paperId"]: Counter(self._words(p)) for p in self.papers}
        df = Counter(w for counts in self.words.values() for w in counts)
        self.idf = {w: math.log(len(self.papers) / n) for w, n in df.items()}
        self.min_interval = min_interval
        self.asked: list[str] = []  # every id asked of the batch endpoint, in order
        self.requests: list[tuple[str, str]] = []
        self.rate_limited = 0
        self.refuse_all = False  # answer 429 to everything (Semantic Scholar rate-limiting PaperPing throughout)
        self.arxiv_entries = ""  # Atom <entry> elements the arXiv stand-in answers with
        self.citations: dict[str, list[dict[str, Any]]] = {}  # paperId -> the papers citing it
        self.citation_answers: dict[str, Any] = {}  # paperId -> a whole citations answer, as given (malformed ones)
        self.endless_citations: set[str] = set()  # paperIds whose citations come as empty pages, each naming a next
        # authorId -> {"name", "paperCount", "affiliations", "papers": [paper objects]}
        self.authors: dict[str, dict[str, Any]] = {}
        self.orcid_names: dict[str, tuple[str, str]] = {}  # ORCID -> (given names, family name) on its record
        self.author_refusal: tuple[int, Any] | None = None  # (status, body) the author endpoints answer instead
        self.author_gate: threading.Event | None = None  # the author endpoints answer once it is set (10 s at most)
        self.lock = threading.Lock()
        self._last = 0.0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @staticmethod
    def _words(paper: dict[str, Any]) -> list[str]:
        text = f"{paper['title']} {paper.get('abstract') or ''}".lower()
        return [w for w in _WORD.findall(text) if w not in _STOP]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def start(self) -> ScholarStandIn:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def acl_paper(self, acl_id: str) -> dict[str, Any]:
        return self.by_key["ACL:" + acl_id]

    def related(self, seeds: list[str], limit: int, exclude: set[str] = frozenset()) -> list[dict[str, Any]]:  # type: ignore[assignment]
        """The papers sharing most (weighted) words with the seeds, as a recommender would rank them."""
        wanted: Counter[str] = Counter()
        for s in seeds:
            paper = self.by_key.get(s)
            if paper:
                wanted.update(self.words[paper["paperId"]])
        taken = {self.by_key[s]["paperId"] for s in seeds if s in self.by_key} | set(exclude)
        scored = [
            (sum(self.idf[w] * min(c, wanted[w]) for w, c in self.words[p["paperId"]].items()), p["paperId"])
            for p in self.papers
            if p["paperId"] not in taken
        ]
        scored.sort(reverse=True)
        return [self.by_key[pid] for score, pid in scored[:limit] if score > 0]

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        terms = [w for w in _WORD.findall(query.lower()) if w not in _STOP]
        scored = [
            (sum(self.idf.get(t, 0.0) * self.words[p["paperId"]][t] for t in terms), i)
            for i, p in enumerate(self.papers)
        ]
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [self.papers[i] for score, i in scored[:limit] if score > 0]

    # ----- answers -----
    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any, str]:
        with self.lock:
            self.requests.append((method, path))
            now = time.monotonic()
            if self.refuse_all and not path.startswith(("/api/", "/orcid/", "/openalex/", "/pubmed/", "/biorxiv/")):
                self.rate_limited += 1
                return 429, {"message": "Too Many Requests"}, "application/json"
            # two requests closer than half the pace are two callers not taking turns; one sent a little late
            # after its turn (a loaded machine) brings the next nearer, which is not
            if self.min_interval and now - self._last < self.min_interval * 0.5:
                self.rate_limited += 1
                return 429, {"message": "Too Many Requests"}, "application/json"
            self._last = now
        limit = int((query.get("limit") or ["100"])[0])
        if path.startswith(("/openalex/", "/pubmed/", "/biorxiv/")):
            return nothing_found(path)
        if path.startswith("/api/"):  # arXiv
            feed = f'<feed xmlns="http://www.w3.org/2005/Atom">{self.arxiv_entries}</feed>'
            return 200, feed, "application/atom+xml"
        if path == "/graph/v1/paper/batch":
            ids = [str(i) for i in (body or {}).get("ids", [])]
            with self.lock:
                self.asked += ids
            return 200, [self.by_key.get(i) for i in ids], "application/json"
        if path == "/graph/v1/paper/search/bulk":  # by venue and year, as the conference planner asks
            venue, year = (query.get("venue") or [""])[0].lower(), (query.get("year") or [""])[0]
            found = [p for p in self.papers if venue and venue in (p["venue"] or "").lower() and str(p["year"]) == year]
            return 200, {"total": len(found), "token": None, "data": found}, "application/json"
        if path == "/graph/v1/paper/search":
            found = self.search((query.get("query") or [""])[0], limit)
            return 200, {"total": len(found), "offset": 0, "data": found}, "application/json"
        if path.startswith("/graph/v1/author/"):
            return self.answer_author(path, query)
        m = re.fullmatch(r"/orcid/([\dX-]+)/person", path)
        if m:  # ORCID's public API (ORCID_API_URL)
            if m.group(1) not in self.orcid_names:
                return 404, {"error": "Not found"}, "application/json"
            given, family = self.orcid_names[m.group(1)]
            name = {"given-names": {"value": given}, "family-name": {"value": family}}
            return 200, {"name": name}, "application/json"
        m = re.fullmatch(r"/graph/v1/paper/([^/]+)/(references|citations)", path)
        if m:
            if m.group(2) == "citations" and m.group(1) in self.endless_citations:
                offset = int((query.get("offset") or ["0"])[0])
                return 200, {"offset": offset, "next": offset + limit, "data": []}, "application/json"
            if m.group(2) == "citations" and m.group(1) in self.citation_answers:
                return 200, self.citation_answers[m.group(1)], "application/json"
            citing = self.citations.get(m.group(1), []) if m.group(2) == "citations" else []
            data = [{"citingPaper": c, "contexts": []} for c in citing]
            return 200, {"offset": 0, "data": data}, "application/json"
        if path == "/recommendations/v1/papers":
            seeds = [str(s) for s in (body or {}).get("positivePaperIds", [])]
            negative = {str(s) for s in (body or {}).get("negativePaperIds", [])}
            return 200, {"recommendedPapers": self.related(seeds, limit, negative)}, "application/json"
        m = re.fullmatch(r"/recommendations/v1/papers/forpaper/([^/]+)", path)
        if m:
            return 200, {"recommendedPapers": self.related([m.group(1)], limit)}, "application/json"
        return 404, {"error": "Not found"}, "application/json"

    def answer_author(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any, str]:
        """``author/search?query=``, ``author/{id}`` and ``author/{id}/papers``, from ``authors``."""
        if self.author_gate is not None:
            self.author_gate.wait(10)
        if self.author_refusal is not None:
            return self.author_refusal[0], self.author_refusal[1], "application/json"
        if path == "/graph/v1/author/search":
            words = set((query.get("query") or [""])[0].lower().split())
            found = [
                {
                    "authorId": aid,
                    "name": a["name"],
                    "paperCount": a.get("paperCount"),
                    "affiliations": a.get("affiliations", []),
                }
                for aid, a in self.authors.items()
                if words and words <= set(a["name"].lower().split())
            ]
            return 200, {"total": len(found), "offset": 0, "data": found}, "application/json"
        m = re.fullmatch(r"/graph/v1/author/([^/]+)(/papers)?", path)
        author = self.authors.get(m.group(1)) if m else None
        if author is None:
            return 404, {"error": "Author not found"}, "application/json"
        if m and m.group(2):
            return 200, {"offset": 0, "data": list(author.get("papers", []))}, "application/json"
        return 200, {"authorId": m.group(1) if m else "", "name": author["name"]}, "application/json"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = None
                status, answer, ctype = standin.answer(method, parts.path, parse_qs(parts.query), body)
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                if status == 429:
                    self.send_header("Retry-After", "1")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

        return Handler
