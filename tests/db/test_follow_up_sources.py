"""Follow-ups from the sources' answers: a bioRxiv preprint noticed as published through Crossref's
``is-preprint-of`` relation (with the journal's name and its DOI's link), and a new paper citing two threads
noticed whatever order the two shared papers are checked in."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import check_follow_ups
from socialrag.knowledge.intake import index_messages
from socialrag.knowledge.papers.crossref import Crossref
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.models import Channel, Message, Paper, PaperRef

T = "T0BIO"
NOW = datetime(2026, 5, 1, tzinfo=UTC)
PREPRINT, PUBLISHED = "10.1101/2026.01.05.000001", "10.1038/s41586-026-00001-x"


def crossref(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path.endswith(PREPRINT):
        relation = {"is-preprint-of": [{"id-type": "doi", "id": PUBLISHED, "asserted-by": "subject"}]}
        return httpx.Response(200, json={"message": {"DOI": PREPRINT, "title": ["Cells"], "relation": relation}})
    if path.endswith(PUBLISHED):
        return httpx.Response(
            200, json={"message": {"DOI": PUBLISHED, "title": ["Cells"], "container-title": ["Nature"]}}
        )
    return httpx.Response(404, json={"status": "error"})


def test_a_preprint_is_published_according_to_crossref(db: Database) -> None:
    shared_at = NOW - timedelta(days=30)
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "cell-bio"))
        storage.settings.upsert_channel_setting(conn, T, "C1", active=True)
        ref = PaperRef("doi", PREPRINT, f"https://doi.org/{PREPRINT}")
        index_messages(
            conn, [Message(T, "C1", "1.000001", "U1", f"<https://doi.org/{PREPRINT}>", shared_at, papers=(ref,))]
        )
        # what the lookup at the share said: a bioRxiv preprint
        storage.papers.record_papers(
            conn, [Paper(ids={"doi": PREPRINT}, source="biorxiv", title="Cells", venue="bioRxiv")]
        )
    client = Crossref("https://crossref.test/", transport=httpx.MockTransport(crossref), min_interval=0.0)
    assert check_follow_ups(db, [client], NOW, timedelta(days=1)) == 1
    with db.connection() as conn:
        (kind, detail) = conn.execute("SELECT kind, detail FROM follow_ups").fetchone()
    assert kind == "published" and detail == {"venue": "Nature", "url": f"https://doi.org/{PUBLISHED}"}
    assert check_follow_ups(db, [client], NOW + timedelta(days=2), timedelta(days=1)) == 0, "noticed once"


def s2_answers(
    ids: dict[str, str], citing: dict[str, list[dict[str, object]]]
) -> Callable[[httpx.Request], httpx.Response]:
    """Semantic Scholar as a mock transport: each arXiv id of ``ids`` as an arXiv preprint with that S2 id, and each
    S2 id's citing papers as ``citing`` holds them when asked."""

    def s2(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/paper/batch"):
            asked = [i.removeprefix("ARXIV:") for i in json.loads(request.content)["ids"]]
            return httpx.Response(200, json=[{"paperId": ids[a], "externalIds": {"ArXiv": a}, "title": a,
                                               "venue": "ArXiv"} for a in asked])  # fmt: skip
        pid = request.url.path.split("/")[-2]
        return httpx.Response(200, json={"data": [{"citingPaper": c, "contexts": []} for c in citing.get(pid, [])]})

    return s2


def test_a_paper_citing_two_threads_is_noticed_whichever_is_checked_first(db: Database) -> None:
    """The two shared papers are asked about in different rounds: the new paper citing both is said once, in the
    earlier thread, though the earlier paper's check saw it first (when the later one's citation was not known)."""
    ids = {"2401.00011": "a" * 40, "2401.00012": "b" * 40}
    citing: dict[str, list[dict[str, object]]] = {}

    s2 = s2_answers(ids, citing)

    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "nlp"))
        storage.settings.upsert_channel_setting(conn, T, "C1", active=True)
        for i, arxiv in enumerate(ids):
            ref = PaperRef("arxiv", arxiv, f"https://arxiv.org/abs/{arxiv}")
            at = NOW - timedelta(days=20 - i)
            index_messages(conn, [Message(T, "C1", f"{i + 1}.000001", "U1", ref.url, at, papers=(ref,))])
            storage.papers.record_papers(
                conn, [Paper(ids={"arxiv": arxiv}, source="arxiv", title=arxiv, venue="arXiv")]
            )
    client = SemanticScholar("https://s2.test/", transport=httpx.MockTransport(s2), min_interval=0.0)
    day = timedelta(days=1)
    assert check_follow_ups(db, [client], NOW, day, limit=1) == 0  # the first look at the earlier paper
    assert check_follow_ups(db, [client], NOW + timedelta(hours=1), day, limit=1) == 0  # and at the later one
    citer = {"paperId": "c" * 40, "externalIds": {}, "title": "On both", "year": 2026}
    citing.update({ids["2401.00011"]: [citer], ids["2401.00012"]: [citer]})
    assert check_follow_ups(db, [client], NOW + day + timedelta(minutes=1), day, limit=1) == 0, "cites one so far"
    assert check_follow_ups(db, [client], NOW + day + timedelta(hours=2), day, limit=1) == 1
    with db.connection() as conn:
        rows = conn.execute("SELECT p.title, f.kind FROM follow_ups f JOIN papers p ON p.id = f.paper_id").fetchall()
    assert rows == [("2401.00011", "builds_on")], "said in the earlier thread"


def test_a_new_version_of_a_biorxiv_preprint_is_noticed(db: Database) -> None:
    """The first look at a shared bioRxiv preprint records its version (2); when bioRxiv lists a third, the
    thread hears of it once, with the new version's page."""
    from socialrag.knowledge.papers.biorxiv import BiorxivApi
    from tests.support.bio_standin import BioStandIn

    bio = BioStandIn().start()
    try:
        doi = bio.paper("mdv2026")["doi"]
        with db.connection() as conn:
            storage.workspaces.upsert_team(conn, T)
            storage.workspaces.upsert_channel(conn, Channel(T, "C2", "mito"))
            storage.settings.upsert_channel_setting(conn, T, "C2", active=True)
            ref = PaperRef("doi", doi, f"https://www.biorxiv.org/content/{doi}v2", version=2)
            message = Message(T, "C2", "2.000001", "U1", f"<{ref.url}>", NOW - timedelta(days=20), papers=(ref,))
            index_messages(conn, [message])
            storage.papers.record_papers(
                conn, [Paper(ids={"doi": doi}, source="biorxiv", title="MDVs", venue="bioRxiv")]
            )
        server = BiorxivApi(bio.url + "biorxiv/", min_interval=0.0)
        assert check_follow_ups(db, [server], NOW, timedelta(days=1)) == 0, "the first look is a baseline"
        bio.paper("mdv2026")["versions"] = 3
        assert check_follow_ups(db, [server], NOW + timedelta(days=2), timedelta(days=1)) == 1
        with db.connection() as conn:
            (kind, detail) = conn.execute("SELECT kind, detail FROM follow_ups WHERE channel_id = 'C2'").fetchone()
        assert kind == "version" and detail["version"] == 3
        assert detail["url"] == f"https://www.biorxiv.org/content/{doi}v3"
        assert check_follow_ups(db, [server], NOW + timedelta(days=4), timedelta(days=1)) == 0, "said once"
    finally:
        bio.stop()
