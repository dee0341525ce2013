"""`status` says which outside source is failing and until when, in every workspace's channels (the sources are
shared), but never in the source's own words: an answer to a lookup made for another workspace's channel may
echo what that channel shared."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.intake import index_messages
from socialrag.knowledge.links import find_paper_refs
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.knowledge.queue_worker import Indexer, IndexerConfig
from socialrag.models import Channel, Message
from tests.support.harness import Harness, T
from tests.support.labbase import CachedEmbedder

SECRET_ID = "2024.acl-long.999"  # what another workspace's private channel shared


def echoing_refusal(request: httpx.Request) -> httpx.Response:
    """Semantic Scholar's batch lookup refusing the ids it was sent, quoting them back (as a gateway may)."""
    asked = json.loads(request.content)["ids"]
    return httpx.Response(400, json={"error": f"Unacceptable ids: {', '.join(asked)}"})


def test_status_names_a_failing_source_without_its_words(harness: Harness, db: Database) -> None:
    now = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, "T0OTHER", domain="other")
        storage.workspaces.upsert_channel(conn, Channel("T0OTHER", "G9", "secret-project"))
        link = f"https://aclanthology.org/{SECRET_ID}"
        index_messages(
            conn, [Message("T0OTHER", "G9", "1.0", "U9", link, now - timedelta(days=1), papers=find_paper_refs(link))]
        )
    scholar = SemanticScholar("https://s2.test/", transport=httpx.MockTransport(echoing_refusal), min_interval=0)
    indexer = Indexer(db, CachedEmbedder(), [scholar], IndexerConfig(first_wait=timedelta(seconds=1)))
    clock = [now]
    indexer.clock = lambda: clock[0]
    for _ in range(3):  # three refusals in a row: the source is held as a whole, for every workspace
        indexer.run_batch()
        clock[0] += timedelta(seconds=5)
    with db.connection() as conn:
        (failing,) = storage.source_pace.load_failing_sources(conn)
    assert SECRET_ID in (failing.last_error or ""), "the log and the admin's figures keep the words"

    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    status = harness.command("status", user="U2")
    assert "Semantic Scholar has failed 3 times in a row" in status and "HTTP 400" in status, status
    assert SECRET_ID not in status and "Unacceptable" not in status, "nothing of the source's answer is quoted"
