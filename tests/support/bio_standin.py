"""Local stand-ins of OpenAlex, PubMed's E-utilities, the bioRxiv API and Crossref, written from their public
documentation, serving the cell-biology lab of ``tests/data/cellbio/papers.json``:

- OpenAlex ``GET /openalex/works``: ``filter=doi:A|B``, ``pmid:``, ``pmcid:``, ``primary_topic.id:`` and
  ``from_publication_date:``; ``search=`` (any word of the title or abstract); works with
  ``abstract_inverted_index``, ``ids``, ``authorships``, ``primary_location`` and ``primary_topic``.
- PubMed ``GET /pubmed/esearch.fcgi`` (``term`` with ``[pmcid]`` ids or ``word[tiab]`` words, ``retmode=json``)
  and ``GET /pubmed/efetch.fcgi`` (``PubmedArticleSet`` XML).
- bioRxiv ``GET /biorxiv/details/{server}/{doi}/na/json`` (every version) and
  ``GET /biorxiv/details/{server}/{from}/{to}/{cursor}?category=`` (the preprints posted in that range).
- Crossref ``GET /crossref/works/{doi}`` and ``GET /crossref/works?filter=alternative-id:PII``.

Every request is kept in ``requests`` (path and query), so a test can check what was asked and how.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

DATA = Path(__file__).resolve().parents[1] / "data" / "cellbio" / "papers.json"


def load_cellbio() -> dict[str, Any]:
    return dict(json.loads(DATA.read_text()))


def _inverted(text: str | None) -> dict[str, list[int]] | None:
    if not text:
        return None
    out: dict[str, list[int]] = {}
    for i, word in enumerate(text.split()):
        out.setdefault(word, []).append(i)
    return out


class BioStandIn:
    def __init__(self, today: date | None = None) -> None:
        data = load_cellbio()
        self.topics: dict[str, str] = data["topics"]
        self.today = today or date.today()
        self.papers: list[dict[str, Any]] = []
        for raw in data["papers"]:
            paper = dict(raw)
            if "days_ago" in paper:
                paper["date"] = (self.today - timedelta(days=int(paper["days_ago"]))).isoformat()
            self.papers.append(paper)
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        self.oversize = 0  # when set, every list answer carries this many more records than were asked for
        # when set, the answers under this path come 16 bytes every ``trickle`` seconds (each read is quick, the
        # whole answer is not)
        self.trickle_prefix: str | None = None
        self.trickle = 0.0
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def env(self) -> dict[str, str]:
        """The settings that point PaperPing at these stand-ins."""
        return {
            "OPENALEX_API_URL": self.url + "openalex/",
            "PUBMED_API_URL": self.url + "pubmed/",
            "BIORXIV_API_URL": self.url + "biorxiv/",
            "CROSSREF_API_URL": self.url + "crossref/",
            "OPENALEX_MAILTO": "lab-admin@example.org",
        }

    def start(self) -> BioStandIn:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def paper(self, key: str) -> dict[str, Any]:
        return next(p for p in self.papers if p["key"] == key)

    def asked(self, prefix: str) -> list[dict[str, list[str]]]:
        with self.lock:
            return [q for path, q in self.requests if path.startswith(prefix)]

    # ----- OpenAlex -----
    def work(self, p: dict[str, Any]) -> dict[str, Any]:
        ids: dict[str, Any] = {"openalex": f"https://openalex.org/W{abs(hash(p['key'])) % 10**9}"}
        if p.get("doi"):
            ids["doi"] = f"https://doi.org/{p['doi']}"
        if p.get("pmid"):
            ids["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{p['pmid']}"
        if p.get("pmcid"):
            ids["pmcid"] = f"https://www.ncbi.nlm.nih.gov/pmc/articles/{p['pmcid']}"
        venue = p.get("venue") or ("bioRxiv" if p.get("server") == "biorxiv" else "medRxiv")
        return {
            "id": ids["openalex"],
            "doi": ids.get("doi"),
            "ids": ids,
            "title": p["title"],
            "display_name": p["title"],
            "publication_date": p["date"],
            "publication_year": int(p["date"][:4]),
            "type": "preprint" if p.get("server") else "article",
            "authorships": [
                {"author": {"id": f"https://openalex.org/A{i}", "display_name": a, "orcid": None}, "institutions": []}
                for i, a in enumerate(p["authors"])
            ],
            "primary_location": {"source": {"display_name": venue}, "landing_page_url": ids.get("doi")},
            "abstract_inverted_index": _inverted(p.get("abstract")),
            "cited_by_count": None if p["role"] == "candidate" else 100 + len(p["title"]),
            "primary_topic": {"id": f"https://openalex.org/{p['topic']}", "display_name": self.topics[p["topic"]]},
        }

    def openalex(self, query: dict[str, list[str]]) -> dict[str, Any]:
        found = list(self.papers)
        for part in (query.get("filter") or [""])[0].split(","):
            key, _, value = part.partition(":")
            values = {v.lower() for v in value.split("|")}
            if key in ("doi", "pmid", "pmcid"):
                found = [p for p in found if str(p.get(key, "")).lower() in values]
            elif key == "primary_topic.id":
                found = [p for p in found if p["topic"].lower() in values]
            elif key == "from_publication_date":
                found = [p for p in found if p["date"] >= value]
        words = (query.get("search") or [""])[0].lower().split()
        if words:
            text = lambda p: f"{p['title']} {p.get('abstract') or ''}".lower()  # noqa: E731
            found = [p for p in found if any(w in text(p) for w in words)]
        results = [self.work(p) for p in found[:50]]
        results += [
            self.work({**self.papers[0], "key": f"extra-{k}", "title": f"Extra {k}"}) for k in range(self.oversize)
        ]
        return {"meta": {"count": len(found)}, "results": results}

    # ----- PubMed -----
    def esearch(self, query: dict[str, list[str]]) -> dict[str, Any]:
        term = (query.get("term") or [""])[0]
        indexed = [p for p in self.papers if p.get("pmid")]
        if "[pmcid]" in term:
            wanted = {t.strip().split("[")[0].upper() for t in term.split(" OR ")}
            found = [p for p in indexed if p.get("pmcid", "").upper() in wanted]
        else:
            words = [t.strip().split("[")[0].lower() for t in term.replace("(", " ").replace(")", " ").split(" OR ")]
            days = int((query.get("reldate") or ["36500"])[0])
            since = (self.today - timedelta(days=days)).isoformat()
            text = lambda p: f"{p['title']} {p.get('abstract') or ''}".lower()  # noqa: E731
            found = [p for p in indexed if p["date"] >= since and any(w and w in text(p) for w in words)]
        ids = [p["pmid"] for p in sorted(found, key=lambda p: p["date"], reverse=True)]
        return {"esearchresult": {"count": str(len(ids)), "idlist": ids}}

    def efetch(self, query: dict[str, list[str]]) -> str:
        wanted = set((query.get("id") or [""])[0].split(","))
        articles = [self.article(p) for p in self.papers if p.get("pmid") in wanted]
        pmid = next((p for p in self.papers if p.get("pmid")), None)
        articles += [self.article({**pmid, "title": f"Extra {k}"}) for k in range(self.oversize if pmid else 0)]
        return '<?xml version="1.0"?>\n<PubmedArticleSet>' + "".join(articles) + "</PubmedArticleSet>"

    def article(self, p: dict[str, Any]) -> str:
        year, month, day = p["date"].split("-")
        authors = "".join(
            f"<Author><LastName>{escape(a.split()[-1])}</LastName><ForeName>{escape(' '.join(a.split()[:-1]))}</ForeName>"
            "<AffiliationInfo><Affiliation>Department of Cell Biology</Affiliation></AffiliationInfo></Author>"
            for a in p["authors"]
        )
        abstract = (
            f"<Abstract><AbstractText>{escape(p['abstract'])}</AbstractText></Abstract>" if p.get("abstract") else ""
        )
        ids = (
            f'<ArticleId IdType="pubmed">{p["pmid"]}</ArticleId><ArticleId IdType="doi">{escape(p["doi"])}</ArticleId>'
        )
        if p.get("pmcid"):
            ids += f'<ArticleId IdType="pmc">{p["pmcid"]}</ArticleId>'
        return (
            f'<PubmedArticle><MedlineCitation Status="MEDLINE"><PMID Version="1">{p["pmid"]}</PMID><Article>'
            f"<Journal><JournalIssue><PubDate><Year>{year}</Year><Month>{month}</Month></PubDate></JournalIssue>"
            f"<Title>{escape(p['venue'])}</Title></Journal><ArticleTitle>{escape(p['title'])}</ArticleTitle>"
            f"{abstract}<AuthorList>{authors}</AuthorList>"
            f'<ArticleDate DateType="Electronic"><Year>{year}</Year><Month>{month}</Month><Day>{day}</Day></ArticleDate>'
            f"</Article></MedlineCitation><PubmedData><ArticleIdList>{ids}</ArticleIdList></PubmedData></PubmedArticle>"
        )

    # ----- bioRxiv -----
    def preprint_rows(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "doi": p["doi"],
                "title": p["title"],
                "authors": "; ".join(f"{a.split()[-1]}, {a.split()[0][0]}." for a in p["authors"]),
                "date": p["date"],
                "version": str(v),
                "type": "new results",
                "category": p["category"].replace("_", " "),
                "abstract": p.get("abstract") or "",
                "published": "NA",
                "server": p["server"],
            }
            for v in range(1, int(p.get("versions", 1)) + 1)
        ]

    def biorxiv(self, path: str, query: dict[str, list[str]]) -> dict[str, Any]:
        parts = path.split("/")[3:]  # /biorxiv/details/{server}/...
        server = parts[0] if parts else ""
        preprints = [p for p in self.papers if p.get("server") == server]
        rows: list[dict[str, Any]] = []
        if len(parts) >= 3 and parts[-2] == "na":
            doi = unquote("/".join(parts[1:-2]))
            rows = [r for p in preprints if p["doi"] == doi for r in self.preprint_rows(p)]
        elif len(parts) >= 4:
            start, end, category = parts[1], parts[2], (query.get("category") or [""])[0]
            rows = [
                self.preprint_rows(p)[0]
                for p in preprints
                if start <= p["date"] <= end and (not category or p["category"] == category)
            ]
        if rows and self.oversize:
            rows += [{**rows[0], "doi": f"10.1101/extra.{k}", "title": f"Extra {k}"} for k in range(self.oversize)]
        status = "ok" if rows else "no posts found"
        return {"messages": [{"status": status, "count": len(rows)}], "collection": rows}

    # ----- Crossref -----
    def crossref(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        def message(p: dict[str, Any]) -> dict[str, Any]:
            y, m, d = (int(x) for x in p["date"].split("-"))
            return {
                "DOI": p["doi"],
                "title": [p["title"]],
                "author": [{"given": " ".join(a.split()[:-1]), "family": a.split()[-1]} for a in p["authors"]],
                "container-title": [p.get("venue") or "bioRxiv"],
                "issued": {"date-parts": [[y, m, d]]},
                "alternative-id": [p["pii"]] if p.get("pii") else [],
            }

        if path == "/crossref/works":
            pii = (query.get("filter") or [""])[0].removeprefix("alternative-id:")
            items = [message(p) for p in self.papers if p.get("pii") == pii]
            return 200, {"status": "ok", "message": {"items": items, "total-results": len(items)}}
        doi = unquote(path.removeprefix("/crossref/works/")).lower()
        found = [p for p in self.papers if p.get("doi", "").lower() == doi]
        return (200, {"status": "ok", "message": message(found[0])}) if found else (404, "Resource not found.")

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any, str]:
        with self.lock:
            self.requests.append((path, query))
        if path == "/openalex/works":
            return 200, self.openalex(query), "application/json"
        if path == "/pubmed/esearch.fcgi":
            return 200, self.esearch(query), "application/json"
        if path == "/pubmed/efetch.fcgi":
            return 200, self.efetch(query), "text/xml"
        if path.startswith("/biorxiv/details/"):
            return 200, self.biorxiv(path, query), "application/json"
        if path.startswith("/crossref/works"):
            status, body = self.crossref(path, query)
            return status, body, "application/json"
        return 404, {"error": "not found"}, "application/json"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                status, answer, ctype = standin.answer(parts.path, parse_qs(parts.query))
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                slow = standin.trickle if parts.path.startswith(standin.trickle_prefix or "\0") else 0.0
                try:
                    for start in range(0, len(data), 16 if slow else len(data) or 1):
                        self.wfile.write(data[start : start + 16] if slow else data)
                        self.wfile.flush()
                        time.sleep(slow)
                except OSError:  # the client gave up on a trickle
                    pass

        return Handler
