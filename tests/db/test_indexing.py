"""The index queue and the indexer of ``paperping run``: what a share queues, leases, retries with backoff,
giving up visibly, the pace shared through Postgres, and two processes sharing the work."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import SourceError
from socialrag.knowledge.intake import MAX_PAPERS_PER_MESSAGE, index_messages
from socialrag.knowledge.links import find_paper_refs
from socialrag.knowledge.papers.resolve import open_sources
from socialrag.knowledge.queue_worker import Indexer, IndexerConfig
from socialrag.knowledge.shared_pace import DatabasePace
from socialrag.models import Channel, Message
from tests.support.labbase import CachedEmbedder
from tests.support.scholar_standin import ScholarStandIn, load_acl_rows, source_urls

T, C = "T0LAB", "C1"
NOW = datetime(2026, 11, 2, 10, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


def share(ts: str, text: str, user: str = "U2") -> Message:
    return Message(
        team_id=T,
        channel_id=C,
        ts=ts,
        user_id=user,
        text=text,
        posted_at=NOW - timedelta(days=3),
        papers=find_paper_refs(text),
    )


def setup_channel(db: Database) -> None:
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T, domain="lab")
        storage.workspaces.upsert_channel(conn, Channel(T, C, "nlp-lab"))


def acl_ids(n: int, skip: int = 0) -> list[str]:
    return [r["acl_id"] for r in load_acl_rows()[skip : skip + n]]


def test_a_share_queues_its_papers_and_a_message_keeps_at_most_twenty(db: Database) -> None:
    setup_channel(db)
    links = " ".join(f"https://aclanthology.org/{a}" for a in acl_ids(30))
    with db.connection() as conn:
        index_messages(conn, [share("1.0", "two papers https://aclanthology.org/2020.acl-main.1 arxiv:2401.01234")])
        index_messages(conn, [share("2.0", f"a whole reading list {links}")])
        counts = storage.queue.load_queue_counts(conn)
        progress = storage.queue.load_index_progress(conn, T, C, "m")
    assert counts["waiting"] == 2 + MAX_PAPERS_PER_MESSAGE
    assert progress.stored == progress.waiting == 2 + MAX_PAPERS_PER_MESSAGE
    assert progress.looked_up == progress.embedded == progress.given_up == 0


def test_a_paper_with_a_vector_waiting_for_a_lookup_holds_no_post(db: Database) -> None:
    """Semantic Scholar failing: the shared papers stay queued for their lookup, but the catalog already gave one
    a vector. Only the other holds the channel's post."""
    import numpy as np

    setup_channel(db)
    with db.connection() as conn:
        index_messages(conn, [share("1.0", "https://aclanthology.org/2020.acl-main.1 arxiv:2401.01234")])
        acl = conn.execute("SELECT paper_id FROM paper_ids WHERE scheme = 'acl'").fetchone()[0]
        vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
        storage.embeddings.upsert_embeddings(conn, "m", [(acl, "h", vec)])
        progress = storage.queue.load_index_progress(conn, T, C, "m")
    assert progress.waiting == 2 and progress.embedded == 1 and progress.unusable == 1
    with db.connection() as conn:
        other = conn.execute("SELECT paper_id FROM paper_ids WHERE scheme = 'arxiv'").fetchone()[0]
        storage.embeddings.upsert_embeddings(conn, "m", [(other, "h2", vec)])
        progress = storage.queue.load_index_progress(conn, T, C, "m")
    assert progress.waiting == 2 and progress.unusable == 0, "lookups that only enrich hold nothing"


def test_a_member_past_the_hourly_cap_is_queued_in_turn_and_only_papers_moved_up_count(db: Database) -> None:
    setup_channel(db)
    keys = [("arxiv", f"2601.{i:05d}") for i in range(6)]
    with db.connection() as conn:
        made = storage.papers.ensure_papers(conn, keys)
        ids = [made[k] for k in keys]
        storage.queue.enqueue_papers(conn, [ids[0]])  # a channel shared it, and it was given up
        conn.execute("UPDATE index_queue SET given_up_at = %s WHERE paper_id = %s", (NOW, ids[0]))
        asked = storage.queue.enqueue_for_member
        # a given-up paper stays given up and counts nothing; the same paper twice counts once
        assert asked(conn, T, "U2", [ids[0], ids[1], ids[1], ids[2]], NOW, per_hour=3) == 0
        # one place left of three: the first new paper goes first, the two after it in turn
        assert asked(conn, T, "U2", [ids[1], ids[3], ids[4], ids[5]], NOW, per_hour=3) == 2
        rows = conn.execute("SELECT paper_id, priority, given_up_at IS NOT NULL FROM index_queue").fetchall()
        placed = {r[0]: (r[1], r[2]) for r in rows}
        # a cap of nought puts nothing first
        assert asked(conn, T, "U3", [ids[4]], NOW, per_hour=0) == 1
        counted = conn.execute("SELECT user_id, calls FROM llm_usage WHERE kind = 'lookups'").fetchall()
    now, shared = storage.queue.PRIORITY_NOW, storage.queue.PRIORITY_SHARED
    assert [placed[i] for i in ids] == [(shared, True)] + [(now, False)] * 3 + [(shared, False)] * 2
    assert counted == [("U2", 3)]


def test_claims_are_disjoint_leases_expire_and_failures_back_off_then_give_up(db: Database) -> None:
    setup_channel(db)
    NOW = datetime.now(UTC) + timedelta(seconds=1)
    with db.connection() as conn:
        index_messages(conn, [share(f"{i}.0", f"https://aclanthology.org/{a}") for i, a in enumerate(acl_ids(6))])
        first = storage.queue.claim_index_work(conn, "w1", NOW, NOW + timedelta(minutes=10), 4)
        second = storage.queue.claim_index_work(conn, "w2", NOW, NOW + timedelta(minutes=30), 4)
        assert len(first) == 4 and len(second) == 2 and not set(first) & set(second)
        assert storage.queue.claim_index_work(conn, "w3", NOW, NOW + timedelta(minutes=10), 4) == []
        # w1 died: its lease runs out and another worker takes its papers
        later = NOW + timedelta(minutes=11)
        assert sorted(storage.queue.claim_index_work(conn, "w3", later, later + timedelta(minutes=10), 10)) == first
        assert storage.queue.finish_index_work(conn, first, "w1") == 0, "a lease taken over is not w1's to finish"
        assert storage.queue.finish_index_work(conn, first, "w3") == 4
        # w2's lookups fail: each wait three times the one before, given up after the last try
        wait = timedelta(minutes=15)
        waits = []
        at = NOW
        for attempt in range(1, 4):
            given_up = storage.queue.record_index_failure(
                conn, second, "w2", at, "no source knows this paper", first_wait=wait, max_attempts=3
            )
            row = conn.execute("SELECT min(not_before) FROM index_queue WHERE paper_id = %s", (second[0],)).fetchone()
            waits.append(row[0] - at)
            if attempt < 3:
                assert given_up == 0
                at = row[0]
                assert sorted(storage.queue.claim_index_work(conn, "w2", at, at + timedelta(minutes=10), 10)) == second
        assert given_up == 2
        assert waits[:2] == [wait, 3 * wait]
        progress = storage.queue.load_index_progress(conn, T, C, "m")
    assert progress.given_up == 2 and progress.waiting == 0 and progress.stored == 6
    with db.connection() as conn:
        assert storage.queue.enqueue_due(conn, at, "m", timedelta(days=30)) == 4, "the 4 unembedded shares"
        assert storage.queue.load_index_progress(conn, T, C, "m").given_up == 2, "given up stays given up"
        month = at + timedelta(days=31)
        storage.queue.enqueue_due(conn, month, "m", timedelta(days=30))
        again = storage.queue.load_index_progress(conn, T, C, "m")
    assert again.given_up == 0 and again.waiting == 6, "a month later, a given-up paper gets another chance"


def test_the_pace_is_shared_by_every_caller(db: Database) -> None:
    pace = DatabasePace(db)
    waits = [pace.reserve("arxiv", 3.0) for _ in range(3)]
    assert waits[0] == pytest.approx(0.0, abs=0.05)
    assert waits[1] == pytest.approx(3.0, abs=0.2) and waits[2] == pytest.approx(6.0, abs=0.3)
    other = DatabasePace(db)  # another process: it queues behind the first one's turns
    assert other.reserve("arxiv", 3.0) == pytest.approx(9.0, abs=0.4)
    assert other.reserve("crossref", 0.1) == pytest.approx(0.0, abs=0.05), "each service has its own pace"
    pace.hold_off("crossref", 30)
    assert other.reserve("crossref", 0.1) == pytest.approx(30.0, abs=0.5), "a Retry-After holds every process"


@pytest.mark.slow
def test_the_indexer_looks_papers_up_embeds_them_and_gives_up_visibly(db: Database, tmp_path: Path) -> None:
    scholar = ScholarStandIn().start()
    try:
        setup_channel(db)
        known = acl_ids(5)
        unknown = "https://aclanthology.org/2099.nowhere-1.7 A paper no service knows"
        with db.connection() as conn:
            index_messages(conn, [share(f"{i}.0", f"https://aclanthology.org/{a}") for i, a in enumerate(known)])
            index_messages(conn, [share("9.0", unknown)])
        settings = Settings(home=tmp_path, **source_urls(scholar.url))  # type: ignore[arg-type]
        settings = settings.with_changes(crossref_api_url=scholar.url + "crossref/")
        config = IndexerConfig(max_attempts=2, first_wait=timedelta(seconds=2))
        indexer = Indexer(db, CachedEmbedder(), open_sources(settings, DatabasePace(db)), config)
        done = indexer.run()
        assert done.claimed == 6 and done.looked_up == 5 and done.not_found == 1 and done.given_up == 0
        with db.connection() as conn:
            progress = storage.queue.load_index_progress(conn, T, C, CachedEmbedder().model_name)
            titles = conn.execute("SELECT count(*) FROM papers WHERE title IS NOT NULL").fetchone()[0]
        assert titles == 5
        assert (progress.stored, progress.looked_up, progress.embedded, progress.waiting) == (6, 5, 6, 1), (
            "the unknown paper is embedded from its message's text and waits for its next try"
        )
        time.sleep(2.1)
        again = indexer.run()
        assert again.claimed == 1 and again.given_up == 1
        with db.connection() as conn:
            progress = storage.queue.load_index_progress(conn, T, C, CachedEmbedder().model_name)
            error = conn.execute("SELECT last_error FROM index_queue WHERE given_up_at IS NOT NULL").fetchone()[0]
        assert progress.given_up == 1 and progress.waiting == 0 and progress.embedded == 6
        assert "no source knows" in error
        assert indexer.run().claimed == 0, "a given-up paper is not tried again by the queue"
        asked = scholar.asked
        assert len(asked) == len(set(asked)) + 1, "only the unknown paper was asked twice (its retry)"
        indexer.close()
    finally:
        scholar.stop()


@pytest.mark.slow
def test_two_processes_share_the_indexing_without_doing_any_paper_twice(db: Database, tmp_path: Path) -> None:
    scholar = ScholarStandIn().start()
    start = str(tmp_path / "start")  # both take work only once both have loaded
    try:
        setup_channel(db)
        ids = acl_ids(120, skip=20)
        with db.connection() as conn:
            index_messages(conn, [share(f"{i}.0", f"https://aclanthology.org/{a}") for i, a in enumerate(ids)])
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.support.index_worker", db.conninfo, scholar.url, "10", start, "2"],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [p.communicate(timeout=300) for p in procs]
        for p, (_out, err) in zip(procs, outputs, strict=True):
            assert p.returncode == 0, err[-2000:]
        claimed = [int(out.split()[-1]) for out, _ in outputs]
        assert sum(claimed) == 120 and all(c > 0 for c in claimed), f"both processes took work: {claimed}"
        assert len(scholar.asked) == 120 and len(set(scholar.asked)) == 120, "no paper was looked up twice"
        assert scholar.rate_limited == 0, "together they kept the service's pace"
        with db.connection() as conn:
            progress = storage.queue.load_index_progress(conn, T, C, CachedEmbedder().model_name)
        assert progress.looked_up == progress.embedded == 120 and progress.waiting == 0
    finally:
        scholar.stop()


class FailingScholar:
    """A Semantic Scholar that fails every request (as it answers 429 to apps without a key), counting them."""

    name = "semanticscholar"

    def __init__(self) -> None:
        self.asked = 0

    def can_fetch(self, ids: dict[str, str]) -> bool:
        return "acl" in ids

    def fetch_papers(self, requests: list[dict[str, str]]) -> list[object]:
        from socialrag.errors import RateLimited

        self.asked += 1
        raise RateLimited("semanticscholar", "HTTP 429 after 3 tries", retry_after=60)


def test_a_source_that_keeps_failing_is_held_as_a_whole_and_status_says_so(db: Database) -> None:
    """Papers were retried paper by paper against a source that failed every time. After three failures in a row
    the source is held (two minutes, doubling), its papers wait for it without spending their tries, and status
    says which source and until when; an answer from it clears all that."""
    from bot.commands.about import describe_failing

    setup_channel(db)
    with db.connection() as conn:
        index_messages(conn, [share(f"{i}.0", f"https://aclanthology.org/{a}") for i, a in enumerate(acl_ids(3))])
    scholar = FailingScholar()
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)  # the queue's times are the database's
    clock = [start]
    indexer = Indexer(db, CachedEmbedder(), [scholar], IndexerConfig(first_wait=timedelta(seconds=1)))
    indexer.clock = lambda: clock[0]
    for _ in range(3):
        indexer.run_batch()
        clock[0] += timedelta(seconds=5)
    with db.connection() as conn:
        (failing,) = storage.source_pace.load_failing_sources(conn)
        tries = conn.execute("SELECT max(attempts) FROM index_queue").fetchone()[0]
    assert failing.failures == 3 and failing.held_until == start + timedelta(seconds=10) + timedelta(minutes=2)
    said = describe_failing(failing, clock[0])
    assert said.startswith(f"Semantic Scholar has failed 3 times in a row since {start:%H:%M} UTC")
    assert f"skipped until {failing.held_until:%H:%M} UTC" in said and "HTTP 429" in said
    # while it is held it is not asked, and the papers wait for it without spending a try
    indexer.run_batch()
    assert scholar.asked == 3
    with db.connection() as conn:
        assert conn.execute("SELECT max(attempts) FROM index_queue").fetchone()[0] == tries
        storage.source_pace.record_source_outcome(conn, "semanticscholar", None, clock[0])  # it answers again
        assert storage.source_pace.load_failing_sources(conn) == []


def test_a_long_retry_after_delays_the_source_by_about_that_long_and_no_more(db: Database) -> None:
    """A 429 with a ``Retry-After`` longer than a request's deadline holds every process for that long. Requests in
    the meantime give up at once without taking a turn (so the queue does not grow behind them) and without
    counting as the source failing; once the wait is over, the next request goes out at once."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import httpx

    from socialrag.knowledge.papers.http import PoliteClient, Queued

    answers = {"busy": True, "asked": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            answers["asked"] += 1
            busy = bool(answers["busy"])
            self.send_response(429 if busy else 200)
            if busy:
                self.send_header("Retry-After", "3")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        pace = DatabasePace(db)
        client = PoliteClient(
            "s2", httpx.Client(base_url=url, timeout=0.5), min_interval=0.5, shared=pace, deadline=1.0
        )
        started = time.monotonic()
        with pytest.raises(SourceError):
            client.request("GET", "paper")  # the 429: everyone holds for 3 s
        answers["busy"] = False
        refused = 0
        # one request every 0.1 s while the hold outlasts their 1 s deadline: none sent, none queued
        while time.monotonic() - started < 1.7:
            with pytest.raises(Queued):
                client.request("GET", "paper")
            refused += 1
            time.sleep(0.1)
        assert refused >= 3 and answers["asked"] == 1  # as many as a loaded machine fits in the time
        time.sleep(max(0.0, 3.3 - (time.monotonic() - started)))
        assert pace.reserve("s2", 0.5, within=1.0) < 0.6, "the next turn is the hold's end, not pushed back"
        with db.connection() as conn:
            assert not [f for f in storage.source_pace.load_failing_sources(conn) if f.source == "s2"]
    finally:
        server.shutdown()
        server.server_close()
