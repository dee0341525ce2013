"""Stand-ins of the hosts of papers' full text, serving the real open-access files of ``tests/data/fulltext/`` in the
shapes their hosts give them: PubMed Central's OAI-PMH answer (``GetRecord``, the JATS ``<article>`` in its namespace
inside the OAI envelope), the bioRxiv API's details of a preprint (its ``jatsxml``) and the JATS file on the site,
arXiv's HTML and PDF, an ACL Anthology PDF, an open-access PDF a publisher serves.

``Web`` answers at the transport (``httpx.MockTransport``): each address its list of answers, the last one repeated,
every request kept. ``HostStandIn`` is one host on a loopback port for the tests that need a real socket (a host that
answers slowly, ``paperping run``'s own job): each path its answers, a ``robots.txt``, every request kept.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

DATA = Path(__file__).resolve().parents[1] / "data" / "fulltext"
PDF = (DATA / "jner-13-2016-de-marchis.pdf").read_bytes()  # CC BY 4.0, stated on its first page
NXML = {
    name: (DATA / name).read_bytes() for name in ("pntd.0002065.nxml", "pone.0046493.nxml", "1471-2180-11-174.nxml")
}
JATS_NS = "https://jats.nlm.nih.gov/ns/archiving/1.3/"
OAI_NS = "http://www.openarchives.org/OAI/2.0/"


def pmc_record(nxml: bytes, pmcid: int) -> bytes:
    """PMC's OAI-PMH answer to ``GetRecord`` with ``metadataPrefix=pmc``: the article, in the JATS namespace, inside
    the OAI envelope (the file's DOCTYPE is not part of it)."""
    article = nxml[nxml.index(b"<article") :].replace(b"<article ", f'<article xmlns="{JATS_NS}" '.encode(), 1)
    return (
        (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="{OAI_NS}" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><responseDate>2025-03-03T10:00:00Z</responseDate>'
            f'<request verb="GetRecord" identifier="oai:pubmedcentral.nih.gov:{pmcid}" metadataPrefix="pmc">'
            "https://pmc.ncbi.nlm.nih.gov/api/oai/v1/mh/</request><GetRecord><record><header>"
            f"<identifier>oai:pubmedcentral.nih.gov:{pmcid}</identifier><datestamp>2012-10-01</datestamp>"
            "<setSpec>plosone</setSpec></header><metadata>"
        ).encode()
        + article
        + b"</metadata></record></GetRecord></OAI-PMH>"
    )


def pmc_error(code: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><OAI-PMH xmlns="{OAI_NS}"><responseDate>2025-03-03T10:00:00Z'
        f'</responseDate><request verb="GetRecord">x</request><error code="{code}">no</error></OAI-PMH>'
    ).encode()


def biorxiv_details(doi: str, site: str, license: str = "cc_by") -> dict[str, Any]:
    """The bioRxiv API's details of a preprint with two versions, each with its ``jatsxml`` on ``site``."""
    rows = [
        {"doi": doi, "title": "Rift Valley fever in cattle", "version": str(v), "license": license,
         "date": f"2020-01-0{v}", "category": "epidemiology", "authors": "Lo, M.; Sall, B.", "server": "biorxiv",
         "jatsxml": f"{site}content/early/2020/01/0{v}/{doi.split('/', 1)[1]}.source.xml"}
        for v in (1, 2)
    ]  # fmt: skip
    return {"messages": [{"status": "ok"}], "collection": rows}


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/octet-stream"
    headers: dict[str, str] = field(default_factory=dict)
    trickle: float = 0.0  # seconds between two 4 KB pieces of the body (a real socket only)


class Web:
    """Answers at the transport: ``on(url, answer, ...)`` (an address without its query answers any query); what
    nobody set, a robots.txt included, is a 404."""

    def __init__(self) -> None:
        self.routes: dict[str, list[Answer]] = {}
        self.seen: list[httpx.Request] = []
        self.sleeps: list[float] = []

    def on(self, url: str, *answers: Answer) -> None:
        self.routes[url] = list(answers)

    def asked(self, part: str) -> int:
        return sum(1 for r in self.seen if part in str(r.url))

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        url = str(request.url)
        answers = self.routes.get(url) or self.routes.get(url.split("?", 1)[0])
        if not answers:
            return httpx.Response(404, text="not here")
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        headers = {"Content-Type": answer.content_type, **answer.headers}
        return httpx.Response(answer.status, headers=headers, content=answer.body)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)


class HostStandIn:
    """One host on ``http://127.0.0.1:PORT/`` (or another loopback ``address``): ``routes`` path (with its query) ->
    answers, the last repeated."""

    def __init__(self, robots: str | None = "User-agent: *\nDisallow: /private/\n", address: str = "127.0.0.1") -> None:
        self.routes: dict[str, list[Answer]] = {}
        if robots is not None:
            self.routes["/robots.txt"] = [Answer(200, robots.encode(), "text/plain")]
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self.address = address
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with outer.lock:
                    outer.requests.append((self.path, dict(self.headers)))
                    answers = outer.routes.get(self.path)
                    answer = (answers.pop(0) if len(answers) > 1 else answers[0]) if answers else Answer(404, b"no")
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                step = 4096 if answer.trickle else max(len(answer.body), 1)
                try:
                    for start in range(0, len(answer.body), step):
                        self.wfile.write(answer.body[start : start + step])
                        self.wfile.flush()
                        time.sleep(answer.trickle)
                except OSError:  # the reader gave up: that is the point of a slow answer
                    pass

        self._server = ThreadingHTTPServer((address, 0), Handler)
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self._server.server_address[1]}/"

    def asked(self, part: str) -> int:
        with self.lock:
            return sum(1 for path, _ in self.requests if part in path)

    def start(self) -> HostStandIn:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
