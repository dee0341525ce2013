"""Step 1 kept up by the service itself: papers in the index queue are looked up and embedded in the background.

Whatever stores a paper link (a joined channel's history, a live share or edit, a resumed backfill, a focus
link, an import) puts the paper in ``index_queue``. Each process of ``paperping run`` takes batches from it
(``FOR UPDATE SKIP LOCKED`` with a lease, so a paper is never worked on twice at once and a killed process's
batch returns to the queue when its lease runs out), asks the metadata sources in turn (their pace shared
through Postgres), records what they answered, and embeds every paper of the batch, with the text its
messages gave it when no source knows it. A paper no source knows is tried again later, each wait three
times the one before, and given up after ``max_attempts``: it still counts as shared, and status shows it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.knowledge.embed import Embedder, embed_channel_texts, embed_papers
from socialrag.knowledge.papers.resolve import (
    RefreshResult,
    ask_sources,
    fill_citations,
    fill_reference_contexts,
    record_found,
)
from socialrag.knowledge.papers.source import MetadataSource

log = logging.getLogger(__name__)

SWEEP_LOCK = 0x50505F53  # advisory lock: one process at a time sweeps the base for papers to queue
CITATIONS_SECONDS = 900.0  # one run of the citations job asks for at most this long; the rest waits for the next


@dataclass(frozen=True)
class IndexerConfig:
    batch: int = 100  # papers per claim (Semantic Scholar's batch lookup takes up to 500)
    lease: timedelta = timedelta(minutes=10)
    first_wait: timedelta = timedelta(minutes=15)  # then 45 min, 2 h 15, 6 h 45
    max_attempts: int = 5
    max_age: timedelta = timedelta(days=30)  # metadata older than this is looked up again
    sweep_every: timedelta = timedelta(hours=1)


@dataclass
class IndexRound:
    """What one run of the indexer did."""

    claimed: int = 0
    looked_up: int = 0
    not_found: int = 0
    given_up: int = 0
    embedded: int = 0
    swept: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, other: IndexRound) -> None:
        self.claimed += other.claimed
        self.looked_up += other.looked_up
        self.not_found += other.not_found
        self.given_up += other.given_up
        self.embedded += other.embedded
        self.errors += other.errors


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def now_utc() -> datetime:
    return datetime.now(UTC)


class Indexer:
    """One process's share of the indexing. ``sources`` is empty when offline (papers are then only embedded)."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        sources: Sequence[MetadataSource],
        config: IndexerConfig | None = None,
        *,
        worker_id: str | None = None,
        clock: Callable[[], datetime] = now_utc,
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.sources = list(sources)
        self.config = config or IndexerConfig()
        self.worker_id = worker_id or new_worker_id()
        self.clock = clock
        self.stopping = threading.Event()
        self._swept_at: datetime | None = None

    def run(self, budget_seconds: float = 50.0) -> IndexRound:
        """Work through ready batches until none is left, the budget is spent, or the process is stopping.
        Sweeps first when a sweep is due. Never raises: a failure is logged and the next run goes on."""
        total = IndexRound()
        started = time.monotonic()
        try:
            sweeping = self._swept_at is None or self.clock() - self._swept_at >= self.config.sweep_every
            if sweeping:
                total.swept = self.sweep()
            while not self.stopping.is_set() and time.monotonic() - started < budget_seconds:
                done = self.run_batch()
                if done is None:
                    break
                total.add(done)
            # each channel's own vectors of the papers no source knows follow its words at once, whatever the
            # queue's backoff of their next lookup (the sweep compares them all)
            with self.db.connection() as conn:
                total.embedded += embed_channel_texts(conn, self.embedder, every=sweeping)
        except PaperPingError as exc:  # the database is away: the next run retries
            log.warning("indexing stopped: %s", exc)
        except Exception:
            log.exception("indexing failed unexpectedly; the next run goes on")
        if total.claimed:
            log.info(
                "indexed %d papers: %d looked up, %d not found (%d given up), %d embedded",
                total.claimed,
                total.looked_up,
                total.not_found,
                total.given_up,
                total.embedded,
            )
        return total

    def run_batch(self) -> IndexRound | None:
        """Claim one batch and index it; None when nothing is ready."""
        now = self.clock()
        with self.db.connection() as conn:
            ids = storage.queue.claim_index_work(conn, self.worker_id, now, now + self.config.lease, self.config.batch)
        if not ids:
            return None
        done = IndexRound(claimed=len(ids))
        try:
            missing, waiting, error = self._look_up(ids, now, done)
            with self.db.connection() as conn:
                alive = storage.lookups.load_existing(conn, ids)
                done.embedded = embed_papers(conn, self.embedder, alive)
                finished = [pid for pid in ids if pid not in missing and pid not in waiting]
                storage.queue.finish_index_work(conn, finished, self.worker_id)
                if missing:
                    done.given_up = storage.queue.record_index_failure(
                        conn,
                        sorted(missing),
                        self.worker_id,
                        self.clock(),
                        error,
                        first_wait=self.config.first_wait,
                        max_attempts=self.config.max_attempts,
                    )
        except PaperPingError:
            raise
        except Exception as exc:  # the model or a source failed in a way nobody foresaw: the batch waits
            log.exception("indexing a batch of %d papers failed; it is retried later", len(ids))
            with self.db.connection() as conn:
                storage.queue.record_index_failure(
                    conn,
                    ids,
                    self.worker_id,
                    self.clock(),
                    f"{type(exc).__name__}: {exc}",
                    first_wait=self.config.first_wait,
                    max_attempts=self.config.max_attempts,
                )
            done.errors.append(str(exc))
        return done

    def _look_up(self, ids: list[int], now: datetime, done: IndexRound) -> tuple[set[int], set[int], str]:
        """Ask the sources for the papers of the batch that need it (outside any transaction); returns the
        ones no source knew, the ones left waiting for a source held as a whole (still queued, no attempt
        spent), and why."""
        with self.db.connection() as conn:
            need = storage.queue.load_lookups_needed(conn, ids, now, self.config.max_age)
            identities = storage.papers.load_identities(conn, need)
        if not need or not self.sources:
            return set(), set(), ""
        result = RefreshResult(errors=[])
        requests = [identities.get(pid, {}) for pid in need]
        with self.db.connection() as conn:
            failing = storage.source_pace.load_failing_sources(conn)
        held = {f.source: f.held_until for f in failing if f.held_until is not None and f.held_until > now}
        found = ask_sources(self.sources, requests, result, held=held.keys())
        with self.db.connection() as conn:
            for source, error in result.outcomes.items():  # a source failing again and again is held as a whole
                storage.source_pace.record_source_outcome(conn, source, error, now)
        papers = [(i, replace(p, ids={**requests[i], **p.ids})) for i, p in enumerate(found) if p is not None]
        refused = record_found(self.db, papers, need, now)  # a record the database refuses costs only its own paper
        if refused:
            result.errors = [*(result.errors or []), f"the database refused the metadata of {len(refused)} paper(s)"]
        with self.db.connection() as conn:
            waiting = {need[i] for i in result.held_back}  # they wait for their source, no attempt spent
            if waiting:
                storage.queue.defer_papers(conn, sorted(waiting), min(held.values()))
            missing = [pid for i, pid in enumerate(need) if (found[i] is None or i in refused) and pid not in waiting]
            retry_at = now + self.config.first_wait
            storage.lookups.record_fetch_failure(conn, missing, retry_at)
        done.looked_up += len(papers) - len(refused)
        done.not_found += len(missing)
        done.errors += result.errors or []
        why = "; ".join(result.errors or []) or "no source knows this paper"
        return set(missing), waiting, why

    def sweep(self) -> int:
        """Queue what nobody queued: shared papers without a vector of the current model or with stale
        metadata (papers stored before this version, or by a process that stopped), and catalog papers
        without a vector of the current model. One process sweeps at a time."""
        now = self.clock()
        self._swept_at = now
        with self.db.connection() as conn:
            if not storage.locks.try_transaction_lock(conn, SWEEP_LOCK):
                return 0
            added = storage.queue.enqueue_due(conn, now, self.embedder.model_name, self.config.max_age)
        if added:
            log.info("indexing: %d papers queued by the sweep", added)
        return added

    def fill_citations(self) -> RefreshResult:
        """Citing sentences between shared papers and papers citing them (Semantic Scholar), for h5 and
        candidates; slow (one request a paper), so it runs apart from the queue."""
        result = RefreshResult(errors=[])
        if not self.sources:
            return result
        with self.db.connection(autocommit=True) as lock:  # held while the work goes on, by this process only
            if not storage.locks.try_session_lock(lock, SWEEP_LOCK + 1):
                return result
            try:
                until = time.monotonic() + CITATIONS_SECONDS
                fill_reference_contexts(self.db, self.sources, result, until)
                now = self.clock()
                stale = now - self.config.max_age
                fill_citations(self.db, self.sources, stale, result, today=now.date(), until=until)
            finally:
                storage.locks.release_session_lock(lock, SWEEP_LOCK + 1)
        return result

    def embed(self, conn: psycopg.Connection, paper_ids: list[int]) -> int:
        """Embed these papers now with this process's model (papers a source just brought in)."""
        return embed_papers(conn, self.embedder, paper_ids)

    def close(self) -> None:
        for source in self.sources:
            source.close()
