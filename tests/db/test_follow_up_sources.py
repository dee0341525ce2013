"""A bioRxiv preprint a channel shared is noticed as published through Crossref's ``is-preprint-of`` relation
(the way a journal's version of a preprint is recorded), with the journal's name and its DOI's link."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import check_follow_ups
from socialrag.knowledge.intake import index_messages
from socialrag.knowledge.papers.crossref import Crossref
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
