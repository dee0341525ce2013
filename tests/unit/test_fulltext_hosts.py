"""Where a paper's open-access full text is read from, and how politely (``knowledge.papers.fulltext_source`` and
``web_hosts``), with the outside replaced at the transport by the real open-access files of ``tests/data/fulltext/``
in their hosts' shapes: each host's path, best first; robots.txt obeyed and a robots.txt that cannot be read; a 429
with ``Retry-After``; a host slower than the paper's deadline; an answer of 25 MB; a login page where a PDF was
expected; redirects only to https, no cookie kept and no credential sent; a hostile PDF; licences as stated."""

from __future__ import annotations

import gzip
import json
import socket
import time

import httpx
import pytest

from socialrag.knowledge.papers import web_hosts
from socialrag.knowledge.papers.biorxiv import BiorxivApi
from socialrag.knowledge.papers.fulltext_source import FullTextHosts, FullTextReader, acl_licence, list_locations
from socialrag.knowledge.papers.openalex import OpenAlex
from socialrag.knowledge.papers.web_hosts import WebHosts
from tests.support.fulltext_hosts import (
    NXML,
    PDF,
    Answer,
    HostStandIn,
    Web,
    biorxiv_details,
    pmc_error,
    pmc_record,
)
from tests.support.pdfs import bomb_pdf, text_pdf
from tests.unit.test_fulltext import HTML

HOSTS = FullTextHosts(
    "https://arxiv.test/", "https://acl.test/", "https://bio.test/", "https://med.test/", "https://pmc.test/oai/"
)
PMC = "https://pmc.test/oai/?verb=GetRecord&identifier=oai:pubmedcentral.nih.gov:3460867&metadataPrefix=pmc"
ARXIV = {"arxiv": "2401.00001"}
PAGE_LINES = [
    ["Reading Papers Together", "1 Introduction", "Labs share papers in their channels and talk about them at length."],
    ["2 Method", "We read twelve channels of research groups over two years, with every reply and reaction kept."],
]


def reader(web: Web, hosts: FullTextHosts = HOSTS, **options: float) -> FullTextReader:
    transport = web.transport()
    pages = WebHosts(hosts.all(), transport=transport, interval=0, sleep=web.sleeps.append)
    bio = BiorxivApi("https://api.bio.test/", transport=transport, min_interval=0)
    oa = OpenAlex("https://api.oa.test/", transport=transport, min_interval=0)
    return FullTextReader(hosts, pages, biorxiv=bio, openalex=oa, **options)


def pdf(body: bytes = PDF) -> Answer:
    return Answer(200, body, "application/pdf")


def test_pubmed_central_first_its_article_read_out_of_the_oai_answer() -> None:
    web = Web()
    web.on(PMC, Answer(200, pmc_record(NXML["pone.0046493.nxml"], 3460867), "text/xml"))
    web.on("https://journal.test/pone.pdf", pdf())
    got = reader(web).read(
        {"pmcid": "PMC3460867", "doi": "10.1371/journal.pone.0046493"}, "https://journal.test/pone.pdf"
    )
    assert (got.status, got.kind, got.source_url) == ("read", "jats", PMC)
    assert "Creative Commons Attribution" in (got.licence or ""), "the licence the file states"
    assert {"Introduction", "Materials and Methods › Chemicals"} <= {s for s, _ in got.passages}
    assert web.asked("journal.test") == 0, "the best location answered: nothing else is asked"


def test_an_article_outside_pmcs_open_access_subset_moves_on_to_the_next_place() -> None:
    web = Web()
    web.on(PMC, Answer(200, pmc_error("cannotDisseminateFormat"), "text/xml"))
    alone = reader(web).read({"pmcid": "PMC3460867"})
    assert alone.status == "none" and "not in PMC's open-access subset" in (alone.note or "")
    web.on("https://journal.test/pone.pdf", pdf())
    got = reader(web).read({"pmcid": "PMC3460867"}, "https://journal.test/pone.pdf", "cc-by")
    assert (got.status, got.kind, got.source_url) == ("read", "pdf", "https://journal.test/pone.pdf")


@pytest.mark.parametrize(
    ("doi", "server", "site"),
    [
        ("10.1101/2020.01.01.123456", "biorxiv", "https://bio.test/"),
        ("10.1101/2021.03.04.21252345", "medrxiv", "https://med.test/"),
    ],
)
def test_biorxiv_and_medrxiv_give_the_jats_of_the_latest_version_on_their_own_site(
    doi: str, server: str, site: str
) -> None:
    web = Web()
    details = biorxiv_details(doi, f"https://www.{server}.org/")
    web.on(
        f"https://api.bio.test/details/{server}/{doi}/na/json",
        Answer(200, json.dumps(details).encode(), "application/json"),
    )
    jats = f"{site}content/early/2020/01/02/{doi.split('/', 1)[1]}.source.xml"
    web.on(jats, Answer(200, NXML["pntd.0002065.nxml"], "application/xml"))
    got = reader(web).read({"doi": doi})
    assert (got.status, got.kind, got.source_url) == ("read", "jats", jats), "the latest version, on the setting's host"
    assert got.passages[0][0] == "Introduction"


def test_arxiv_html_first_then_its_pdf_with_no_licence_said() -> None:
    web = Web()
    web.on("https://arxiv.test/html/2401.00001", Answer(200, HTML, "text/html; charset=utf-8"))
    got = reader(web).read(ARXIV)
    assert (got.status, got.kind, got.licence) == ("read", "html", "creativecommons.org/licenses/by-sa/4.0/")
    web = Web()  # a paper arXiv has no HTML of: its PDF
    web.on("https://arxiv.test/pdf/2401.00001", pdf(text_pdf(PAGE_LINES)))
    got = reader(web).read(ARXIV)
    assert (got.status, got.kind, got.source_url) == ("read", "pdf", "https://arxiv.test/pdf/2401.00001")
    assert got.licence is None, "arXiv's licence is the version's own, which the file does not state"
    assert web.asked("/html/2401.00001") == 1


def test_the_acl_anthology_pdf_with_the_anthologys_licence_of_its_year() -> None:
    web = Web()
    web.on("https://acl.test/2020.acl-main.1.pdf", pdf(text_pdf(PAGE_LINES)))
    got = reader(web).read({"acl": "2020.acl-main.1"})
    assert (got.status, got.kind, got.licence) == ("read", "pdf", "CC BY 4.0")
    assert acl_licence("P15-1001") == "CC BY-NC-SA 3.0" and acl_licence("W19-1001") == "CC BY 4.0"
    web.on("https://acl.test/2020.acl-main.1.pdf", pdf())  # a file that states its licence keeps its own
    assert reader(web).read({"acl": "2020.acl-main.1"}).licence == "https://creativecommons.org/licenses/by/4.0"


def test_openalexs_pdf_as_given_https_only_and_openalex_asked_for_a_doi_alone() -> None:
    web = Web()
    web.on("https://journal.test/a.pdf", pdf(text_pdf(PAGE_LINES)))
    got = reader(web).read({"doi": "10.1234/x"}, "https://journal.test/a.pdf", "cc-by")
    assert (got.status, got.licence) == ("read", "cc-by")
    assert list_locations({"doi": "10.1234/x"}, "http://journal.test/a.pdf", None, HOSTS) == []
    work = {"id": "https://openalex.org/W1", "doi": "https://doi.org/10.1234/x", "title": "A paper",
            "best_oa_location": {"pdf_url": "https://journal.test/a.pdf", "license": "cc-by-nc"}}  # fmt: skip
    web.on("https://api.oa.test/works", Answer(200, json.dumps({"results": [work]}).encode(), "application/json"))
    asked = reader(web).read({"doi": "10.1234/x"})
    assert (asked.status, asked.licence, asked.open_access) == (
        "read",
        "cc-by-nc",
        ("https://journal.test/a.pdf", "cc-by-nc"),
    )


def test_nothing_known_is_said_and_a_crafted_identifier_asks_nothing() -> None:
    web = Web()
    got = reader(web).read({"arxiv": "../../admin", "acl": "x/../y", "pmcid": "PMC12?verb=ListRecords"})
    assert got.status == "none" and "no open full text is known" in (got.note or "")
    assert [r for r in web.seen if "api.oa.test" not in str(r.url)] == []


def test_a_huge_robots_txt_is_read_as_far_as_search_engines_read_it_and_obeyed() -> None:
    web = Web()
    rules = b"User-agent: PaperPing\nDisallow: /pdf/\nDisallow: /html/\n"
    web.on("https://arxiv.test/robots.txt", Answer(200, rules + b"# padding\n" * 2_500_000, "text/plain"))  # 25 MB
    web.on("https://arxiv.test/pdf/2401.00001", pdf(text_pdf(PAGE_LINES)))
    got = reader(web).read(ARXIV)
    assert got.status == "none" and "robots.txt asks robots not to read" in (got.note or ""), got.note
    assert web.asked("/pdf/") == 0 and web.asked("robots.txt") == 1


def test_robots_txt_is_obeyed_for_papperping_and_one_that_cannot_be_read_skips_the_host() -> None:
    web = Web()
    web.on(
        "https://arxiv.test/robots.txt",
        Answer(
            200, b"User-agent: *\nAllow: /\n\nUser-agent: PaperPing\nDisallow: /pdf/\nDisallow: /html/\n", "text/plain"
        ),
    )
    web.on("https://arxiv.test/pdf/2401.00001", pdf(text_pdf(PAGE_LINES)))
    got = reader(web).read(ARXIV)
    assert got.status == "none" and "robots.txt asks robots not to read /html/2401.00001" in (got.note or "")
    assert web.asked("/pdf/") == 0 and web.asked("/html/") == 0
    web = Web()
    web.on("https://arxiv.test/robots.txt", Answer(500, b"busy", "text/plain"))
    web.on("https://arxiv.test/pdf/2401.00001", pdf(text_pdf(PAGE_LINES)))
    pages = reader(web)
    got = pages.read(ARXIV)
    assert got.status == "later" and "robots.txt could not be read" in (got.note or "")
    assert web.asked("/pdf/") == 0, "nothing is read from a host whose rules are not known"
    robots_asked = web.asked("robots.txt")
    assert pages.read(ARXIV).status == "later" and web.asked("robots.txt") == robots_asked, "read once a round"


def test_a_429_with_retry_after_is_waited_out_and_a_long_one_leaves_the_paper_for_later() -> None:
    web = Web()
    url = "https://acl.test/2020.acl-main.1.pdf"
    web.on(url, Answer(429, b"slow down", "text/plain", {"Retry-After": "2"}), pdf(text_pdf(PAGE_LINES)))
    assert reader(web).read({"acl": "2020.acl-main.1"}).status == "read"
    assert 2.0 in web.sleeps and web.asked(url) == 2
    web = Web()
    web.on(url, Answer(429, b"slow down", "text/plain", {"Retry-After": "3600"}))
    got = reader(web).read({"acl": "2020.acl-main.1"})
    assert got.status == "later" and "429" in (got.note or "") and web.asked(url) == 1


def test_an_answer_of_25_mb_is_not_read_past_the_cap() -> None:
    web = Web()
    web.on("https://acl.test/2020.acl-main.1.pdf", pdf(b"%PDF-1.4\n" + b"0" * 25_000_000))
    got = reader(web).read({"acl": "2020.acl-main.1"})
    assert got.status == "unreadable" and "larger than 20 MB" in (got.note or "")

    def endless(request: httpx.Request) -> httpx.Response:  # no length said: the body is cut as it comes
        if request.url.path.endswith("robots.txt"):
            return httpx.Response(404)
        return httpx.Response(200, headers={"Content-Type": "application/pdf"}, content=iter([b"0" * 1_000_000] * 25))

    pages = WebHosts(HOSTS.all(), transport=httpx.MockTransport(endless), interval=0)
    got = FullTextReader(HOSTS, pages).read({"acl": "2020.acl-main.1"})
    assert got.status == "unreadable" and "larger than 20 MB" in (got.note or "")


def test_a_login_page_instead_of_a_pdf_is_unreadable_and_a_403_says_login() -> None:
    web = Web()
    login = b"<!DOCTYPE html><html><body><form action='/login'>Sign in to read this article</form></body></html>"
    web.on("https://journal.test/a.pdf", Answer(200, login, "text/html"))
    got = reader(web).read({}, "https://journal.test/a.pdf")
    assert got.status == "unreadable" and "a web page (a login or landing page), not a PDF" in (got.note or "")
    web.on("https://journal.test/a.pdf", Answer(403, b"Forbidden", "text/html"))
    got = reader(web).read({}, "https://journal.test/a.pdf")
    assert got.status == "unreadable" and "HTTP 403 (it asks for a login)" in (got.note or "")


def test_redirects_only_to_https_with_no_cookie_kept_and_no_credential_sent() -> None:
    web = Web()
    cookie = {"Set-Cookie": "session=abc; Path=/; Domain=journal.test"}
    web.on(
        "https://journal.test/a.pdf",
        Answer(302, b"", "text/html", {"Location": "https://cdn.test/files/a.pdf", **cookie}),
    )
    web.on("https://cdn.test/files/a.pdf", pdf(text_pdf(PAGE_LINES)))
    got = reader(web).read({}, "https://user:secret@journal.test/a.pdf")
    assert got.status == "none" and "name or password" in (got.note or ""), "an address with credentials is not read"
    got = reader(web).read({}, "https://journal.test/a.pdf")
    assert (got.status, got.source_url) == ("read", "https://cdn.test/files/a.pdf")
    assert all("cookie" not in r.headers and "authorization" not in r.headers for r in web.seen)
    for target in ("http://cdn.test/files/a.pdf", "https://127.0.0.1/a.pdf", "ftp://cdn.test/a.pdf"):
        web = Web()
        web.on("https://journal.test/a.pdf", Answer(301, b"", "text/html", {"Location": target}))
        got = reader(web).read({}, "https://journal.test/a.pdf")
        assert got.status == "none" and web.asked(target.split("//", 1)[1]) == 0, target


def test_a_hostile_pdf_is_unreadable_with_its_reason() -> None:
    web = Web()
    web.on("https://acl.test/2020.acl-main.1.pdf", pdf(bomb_pdf(300)))
    started = time.monotonic()
    got = reader(web).read({"acl": "2020.acl-main.1"})
    assert got.status == "unreadable" and got.passages == () and "ACL Anthology" in (got.note or "")
    assert time.monotonic() - started < 30


def test_a_host_slower_than_the_papers_deadline_leaves_it_for_later() -> None:
    host = HostStandIn().start()
    try:
        slow = Answer(200, text_pdf(PAGE_LINES) + b"%" * 400_000, "application/pdf", trickle=0.2)
        host.routes["/pdf/2401.00001"] = [slow]
        hosts = FullTextHosts(
            host.url, "https://acl.test/", "https://bio.test/", "https://med.test/", "https://pmc.test/"
        )
        pages = WebHosts(hosts.all(), interval=0)
        started = time.monotonic()
        got = FullTextReader(hosts, pages, paper_seconds=2.0).read(ARXIV)
        took = time.monotonic() - started
    finally:
        host.stop()
    assert got.status == "later" and "did not answer now" in (got.note or ""), got.note
    assert took < 6, f"the paper's deadline holds: {took:.1f} s"
    assert host.asked("/html/2401.00001") == 1 and host.asked("robots.txt") == 1


def test_a_gzipped_answer_is_read_and_a_gzip_bomb_is_cut_at_the_cap_or_refused() -> None:
    web = Web()
    url = "https://acl.test/2020.acl-main.1.pdf"
    web.on(url, Answer(200, gzip.compress(text_pdf(PAGE_LINES)), "application/pdf", {"Content-Encoding": "gzip"}))
    got = reader(web).read({"acl": "2020.acl-main.1"})
    assert (got.status, got.kind) == ("read", "pdf"), got.note
    assert all(r.headers.get("Accept-Encoding") == "gzip, deflate" for r in web.seen)
    # 60 MB of zeros in 60 KB: decoded no further than the cap
    bomb = gzip.compress(b"%PDF-1.4\n" + b"\0" * 60_000_000)
    web.on(url, Answer(200, bomb, "application/pdf", {"Content-Encoding": "gzip"}))
    got = reader(web).read({"acl": "2020.acl-main.1"})
    assert got.status == "unreadable" and "larger than 20 MB" in (got.note or ""), got.note
    # gzipped twice, a few KB would be gigabytes: never decoded; nor a coding PaperPing does not read
    for coding, body in (("gzip, gzip", gzip.compress(bomb)), ("br", b"\x1b")):
        web.on(url, Answer(200, body, "application/pdf", {"Content-Encoding": coding}))
        got = reader(web).read({"acl": "2020.acl-main.1"})
        assert got.status == "unreadable" and "content coding" in (got.note or ""), (coding, got.note)


@pytest.mark.parametrize(
    "target",
    [
        "https://2130706433/a.pdf",  # 127.0.0.1 as one decimal number
        "https://0x7f000001/a.pdf",
        "https://127.1/a.pdf",
        "https://0/a.pdf",
        "https://localhost./a.pdf",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::ffff:127.0.0.1]/a.pdf",
        "https://[::1]/a.pdf",
        "https://100.64.0.1/a.pdf",
    ],
)
def test_a_redirect_to_a_local_address_written_any_way_is_not_followed(target: str) -> None:
    web = Web()
    web.on("https://journal.test/a.pdf", Answer(301, b"", "text/html", {"Location": target}))
    got = reader(web).read({}, "https://journal.test/a.pdf")
    assert got.status == "none" and "private or local" in (got.note or ""), got.note
    assert len(web.seen) == 2, "robots.txt and the redirecting address only"


def test_a_name_that_resolves_to_a_local_address_is_not_read() -> None:
    name = socket.gethostname()
    try:
        resolved = str(socket.getaddrinfo(name, 443, proto=socket.IPPROTO_TCP)[0][4][0])
    except OSError:
        pytest.skip("this machine's name does not resolve")
    if not resolved.startswith("127.") or web_hosts._private(name):
        pytest.skip("this machine's name does not stand for a loopback address")
    # on the address the name stands for (127.0.0.1, or 127.0.1.1 as Debian writes a machine's name in /etc/hosts):
    # the connection is made, and ended before anything is sent
    host = HostStandIn(address=resolved).start()
    try:
        port = host.url.rsplit(":", 1)[1].strip("/")
        pages = WebHosts(HOSTS.all(), interval=0)
        got = FullTextReader(HOSTS, pages).read({}, f"https://{name}:{port}/a.pdf")
    finally:
        host.stop()
    assert got.status == "none" and "private or local (127." in (got.note or ""), got.note
    assert host.requests == [], "nothing was asked of it, robots.txt included"
