"""Full text kept up by the service itself: each process of ``paperping run`` reads, every few minutes, the
open-access full text of a few papers its channels have (PaperPing's posts, members' shares of the last 60 days, and
papers asked about in threads since), once each, and embeds their passages on the service's model.

A paper is claimed before it is read (a row with a lease in ``fulltext_claims``), so two processes never read the
same paper at once and a killed process's papers come back when the lease runs out. A paper with no open full text
(``none``) or a file that could not be read (``unreadable``) is looked for again after 30 days; one whose host did
not answer now, after a day. Nothing is read for a channel that turned full text off, a workspace whose admin did, or
a service run with ``PAPERPING_FULLTEXT=0`` or offline. A run never raises: a failure is logged and the next run
goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.knowledge.embed import Embedder
from socialrag.knowledge.papers.fulltext_source import FullTextReader, Reading
from socialrag.knowledge.queue_worker import new_worker_id, now_utc

log = logging.getLogger(__name__)

EMBED_CHUNK = 128  # passages encoded at once


@dataclass(frozen=True)
class FullTextConfig:
    batch: int = 4  # papers one run reads at most
    lease: timedelta = timedelta(minutes=15)  # longer than a run: a claim outlives the reading it covers
    window: timedelta = timedelta(days=60)  # members' shares and questions this recent, and PaperPing's posts
    retry_soon: timedelta = timedelta(days=1)  # a paper whose host did not answer is tried again after this
    run_seconds: float = 240.0  # a run reads and embeds for at most this long (each paper has its own deadline)
    passages_per_run: int = 4000  # passages embedded in one run at most; the rest wait for the next


@dataclass
class FullTextRound:
    """What one run did."""

    claimed: int = 0
    read: int = 0
    none: int = 0
    unreadable: int = 0
    later: int = 0
    embedded: int = 0
    errors: list[str] = field(default_factory=list)


class FullTextWorker:
    """One process's share of the full-text reading. ``reader`` None: full text is off for the service (the
    run does nothing)."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        reader: FullTextReader | None,
        config: FullTextConfig | None = None,
        *,
        worker_id: str | None = None,
        clock: Callable[[], datetime] = now_utc,
    ) -> None:
        self.db, self.embedder, self.reader = db, embedder, reader
        self.config = config or FullTextConfig()
        self.worker_id = worker_id or new_worker_id()
        self.clock = clock
        self.stopping = threading.Event()

    def run(self) -> FullTextRound:
        """Claim a few due papers, read them one by one, then embed the passages still without a vector."""
        done = FullTextRound()
        if self.reader is None:
            return done
        until = time.monotonic() + self.config.run_seconds
        try:
            now = self.clock()
            with self.db.connection() as conn:
                claimed = storage.fulltext.claim_fulltext_work(
                    conn, self.worker_id, now, now + self.config.lease, now - self.config.window, self.config.batch
                )
            done.claimed = len(claimed)
            for i, paper_id in enumerate(claimed):
                if self.stopping.is_set() or time.monotonic() > until:
                    self._release(claimed[i:])  # another run (of any process) takes them at once
                    break
                self.read_paper(paper_id, done)
            done.embedded = self.embed_passages(until)
        except PaperPingError as exc:  # the database is away: the next run retries
            log.warning("full text: stopped: %s", exc)
            done.errors.append(str(exc))
        except Exception as exc:
            log.exception("full text: a run failed unexpectedly; the next run goes on")
            done.errors.append(f"{type(exc).__name__}: {exc}")
        if done.claimed:
            log.info(
                "full text: %d papers: %d read, %d none, %d unreadable, %d later; %d passages embedded",
                done.claimed, done.read, done.none, done.unreadable, done.later, done.embedded,
            )  # fmt: skip
        return done

    def read_now(self, paper_id: int) -> bool:
        """Read one paper's full text at once, within the reader's time for a paper (a post about to go out names
        the section that meets the group's threads), unless another process is reading it; True when it was read.
        Never raises: the post goes out without it."""
        if self.reader is None:
            return False
        done = FullTextRound(claimed=1)
        try:
            now = self.clock()
            until = now + self.config.lease
            with self.db.connection() as conn:
                if not storage.fulltext.claim_fulltext_paper(conn, paper_id, self.worker_id, now, until):
                    return False
            self.read_paper(paper_id, done)
        except Exception:
            log.exception("full text: reading paper %d before its post failed; it is posted without it", paper_id)
            return False
        return done.read == 1

    def read_paper(self, paper_id: int, done: FullTextRound) -> None:
        """Read one claimed paper (outside any transaction), record what came of it and release the claim."""
        assert self.reader is not None
        with self.db.connection() as conn:
            ids = storage.papers.load_identities(conn, [paper_id]).get(paper_id, {})
            oa_url, oa_licence = storage.fulltext.load_open_access(conn, paper_id)
        try:
            reading = self.reader.read(ids, oa_url, oa_licence)
        except Exception as exc:  # a failure nobody foresaw: said as the paper's note, tried again soon
            log.exception("full text: reading paper %d failed unexpectedly", paper_id)
            reading = Reading("later", f"reading it failed unexpectedly ({type(exc).__name__})")
        try:
            with self.db.connection() as conn:
                self._record(conn, paper_id, reading)
        except psycopg.errors.ForeignKeyViolation:  # the paper went meanwhile (a purge, forget-me, a merge)
            log.info("full text: paper %d is gone; nothing kept of its reading", paper_id)
            return
        setattr(done, reading.status, getattr(done, reading.status) + 1)

    def _record(self, conn: psycopg.Connection, paper_id: int, reading: Reading) -> None:
        with conn.transaction():
            if reading.open_access is not None:
                storage.fulltext.record_open_access(conn, paper_id, *reading.open_access)
            status, note, retry_at = reading.status, reading.note, None
            if status == "later":  # said as none, looked for again soon
                status, note = "none", f"{note}; PaperPing tries again within a day"
                retry_at = self.clock() + self.config.retry_soon
            storage.fulltext.save_fulltext(
                conn,
                paper_id,
                status=status,
                kind=reading.kind,
                source_url=reading.source_url,
                licence=reading.licence,
                note=note,
                passages=reading.passages,
                retry_at=retry_at,
            )
            storage.fulltext.release_fulltext_claim(conn, paper_id, self.worker_id)

    def _release(self, paper_ids: Sequence[int]) -> None:
        with self.db.connection() as conn:
            for paper_id in paper_ids:
                storage.fulltext.release_fulltext_claim(conn, paper_id, self.worker_id)

    def embed_passages(self, until: float | None = None) -> int:
        """Vectors of the service's model for the passages without one (papers just read, or a new model), a
        chunk at a time, until none is left, ``passages_per_run`` are done or ``until`` (``time.monotonic``)."""
        model, total = self.embedder.model_name, 0
        while total < self.config.passages_per_run and not self.stopping.is_set():
            if until is not None and time.monotonic() > until:
                break
            # one transaction holds the chunk's passages while they are encoded (seconds of CPU, no network): another
            # process embedding now takes the next chunk instead of encoding the same one
            with self.db.connection() as conn:
                todo = storage.fulltext.load_passages_to_embed(conn, model, EMBED_CHUNK)
                if not todo:
                    break
                # the heading says what a passage is about ("4.2 Datasets"): it is embedded with it
                vectors = self.embedder.encode([f"{p.section}\n{p.text}" if p.section else p.text for p in todo])
                storage.fulltext.ensure_passage_index(conn, model, int(vectors.shape[1]))
                rows = [(p.paper_id, p.n, v) for p, v in zip(todo, vectors, strict=True)]
                storage.fulltext.upsert_passage_vectors(conn, model, rows)
            total += len(todo)
        return total

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()
