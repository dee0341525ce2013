"""The service reads papers' full text by itself (``knowledge.fulltext_worker``): the papers PaperPing posted, members
shared in the last 60 days and papers asked about in threads since, once each, claimed so that two processes never
read one paper at once, with the channel's, the workspace's and the service's off switches; a paper with none is
looked for again after 30 days, one whose host did not answer after a day; a hostile file leaves the paper's other
data untouched; the passages' vectors are filled on the service's model and go with forget-me and a purge; `paperping
run`'s scheduler runs the job against hosts on real sockets; `paperping status` says how many papers have it."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge.embed import Embedder
from socialrag.knowledge.fulltext_worker import FullTextConfig, FullTextWorker
from socialrag.knowledge.intake import index_messages
from socialrag.knowledge.papers.fulltext_source import open_fulltext_reader
from socialrag.models import Channel, Member, Message, PaperRef
from tests.support.fulltext_hosts import NXML, PDF, Answer, HostStandIn, Web, pmc_record
from tests.support.pdfs import bomb_pdf, text_pdf
from tests.unit.test_fulltext_hosts import PAGE_LINES as LINES
from tests.unit.test_fulltext_hosts import reader

T, OTHER = "T0LAB", "T0ELSE"
NOW = datetime.now(UTC).replace(microsecond=0)
DAY = timedelta(days=1)
MODEL = "all-MiniLM-L6-v2"


class HashEmbedder(Embedder):
    """Vectors of the model's size from each text's hash: the job's own path, without loading the model."""

    def __init__(self) -> None:
        super().__init__(MODEL)
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        self.texts += texts
        rows = [np.random.default_rng(int(hashlib.md5(t.encode()).hexdigest()[:8], 16)).normal(size=384) for t in texts]
        return np.asarray([r / np.linalg.norm(r) for r in rows], dtype=np.float32)


def ref(scheme: str, value: str) -> PaperRef:
    return PaperRef(scheme, value, f"https://example.org/{value}")


def lab(db: Database) -> dict[str, int]:
    """T0LAB's #papers (C1) and #reading (C2): a fresh arXiv share, an old ACL share nobody asked about, an old
    ACL share asked about in its thread two days ago, and a PMC paper PaperPing posted."""
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_team(conn, OTHER)
        for team, channel in ((T, "C1"), (T, "C2"), (OTHER, "C1")):
            storage.workspaces.upsert_channel(conn, Channel(team, channel, "papers" if team == T else "elsewhere"))
        storage.workspaces.upsert_members(conn, [Member(T, "U1", "amara"), Member(T, "U2", "ben")])
        old = NOW - 90 * DAY
        index_messages(
            conn,
            [
                Message(T, "C1", "1.1", "U1", "new one", NOW - 2 * DAY, papers=(ref("arxiv", "2401.00001"),)),
                Message(T, "C1", "1.2", "U1", "old one", old, papers=(ref("acl", "2016.acl-long.9"),)),
                Message(
                    T, "C1", "1.3", "U2", "old, asked", old, thread_ts="1.3", papers=(ref("acl", "2017.acl-long.5"),)
                ),
                Message(T, "C1", "1.4", "U1", "which dataset do they use?", NOW - 2 * DAY, thread_ts="1.3"),
            ],
        )
        ids = dict(conn.execute("SELECT value, paper_id FROM paper_ids").fetchall())
        posted = storage.papers.ensure_papers(conn, [("pmcid", "PMC3460867")])[("pmcid", "PMC3460867")]
        conn.execute(
            "INSERT INTO recommendations (team_id, channel_id, slot_key, paper_id, status, style, posted_at)"
            " VALUES (%s, 'C2', 's1', %s, 'posted', 'template', %s)",
            (T, posted, NOW - DAY),
        )
    return {"new": ids["2401.00001"], "old": ids["2016.acl-long.9"], "asked": ids["2017.acl-long.5"], "posted": posted}


def lab_web() -> Web:
    web = Web()
    web.on("https://arxiv.test/pdf/2401.00001", Answer(200, text_pdf(LINES), "application/pdf"))
    for acl in ("2016.acl-long.9", "2017.acl-long.5"):
        web.on(f"https://acl.test/{acl}.pdf", Answer(200, PDF, "application/pdf"))
    pmc = "https://pmc.test/oai/?verb=GetRecord&identifier=oai:pubmedcentral.nih.gov:3460867&metadataPrefix=pmc"
    web.on(pmc, Answer(200, pmc_record(NXML["pone.0046493.nxml"], 3460867), "text/xml"))
    return web


def worker(db: Database, web: Web, clock: Any = None, **config: Any) -> FullTextWorker:
    return FullTextWorker(
        db, HashEmbedder(), reader(web), FullTextConfig(**config), worker_id=f"w{id(web)}", clock=clock or (lambda: NOW)
    )


def states(db: Database) -> dict[int, str]:
    with db.connection() as conn:
        return dict(conn.execute("SELECT paper_id, status FROM paper_fulltexts").fetchall())


def count(db: Database, sql: str, *params: Any) -> int:
    with db.connection() as conn:
        row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def test_posted_shared_and_asked_about_papers_are_read_once_each_with_their_passages_embedded(db: Database) -> None:
    ids = lab(db)
    job = worker(db, lab_web(), batch=10)
    done = job.run()
    assert (done.claimed, done.read, done.errors) == (3, 3, [])
    assert states(db) == {ids["new"]: "read", ids["asked"]: "read", ids["posted"]: "read"}, "the old share waits"
    with db.connection() as conn:
        posted = storage.fulltext.load_fulltext_state(conn, ids["posted"])
        asked = storage.fulltext.load_fulltext_state(conn, ids["asked"])
        vectors = storage.fulltext.load_passage_vectors(conn, MODEL, [ids["posted"], ids["new"]])
        passages = storage.fulltext.load_passages(conn, ids["posted"])
    assert posted is not None and posted.kind == "jats" and "Creative Commons" in (posted.licence or "")
    assert asked is not None and asked.licence == "https://creativecommons.org/licenses/by/4.0", "the file's own"
    assert {(ids["posted"], p.n) for p in passages} <= set(vectors)
    assert all(v.shape == (384,) for v in vectors.values())
    assert done.embedded == count(db, "SELECT count(*) FROM paper_passages")
    assert f"{passages[0].section}\n{passages[0].text}" in job.embedder.texts, "a passage is embedded with its heading"
    again = job.run()
    assert (again.claimed, again.embedded) == (0, 0), "read once each"


def test_the_channels_and_the_workspaces_switches_and_the_services(db: Database) -> None:
    ids = lab(db)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", fulltext=False)
    assert worker(db, lab_web(), batch=10).run().claimed == 1, "only C2's post: C1 turned it off"
    with db.connection() as conn:  # the same paper shared in another workspace that reads full text: it is read
        index_messages(
            conn, [Message(OTHER, "C1", "9.1", "UX", "also here", NOW, papers=(ref("arxiv", "2401.00001"),))]
        )
    assert worker(db, lab_web(), batch=10).run().read == 1 and states(db)[ids["new"]] == "read"
    with db.connection() as conn:
        storage.fulltext.set_workspace_fulltext(conn, T, False)
        storage.settings.upsert_channel_setting(conn, T, "C1", fulltext=True)
        conn.execute("DELETE FROM paper_fulltexts")
        assert storage.fulltext.load_workspace_fulltext(conn, T) is False
    assert worker(db, lab_web(), batch=10).run().claimed == 1, "T0LAB reads nothing; T0ELSE's share still is"
    home = Path(".")
    assert open_fulltext_reader(Settings(home=home, fulltext=False)) is None
    assert open_fulltext_reader(Settings(home=home, offline=True)) is None
    off = FullTextWorker(db, HashEmbedder(), None)
    assert off.run().claimed == 0


def test_two_processes_never_read_one_paper_at_once_and_a_lease_runs_out(db: Database) -> None:
    lab(db)
    with db.connection() as conn:
        first = storage.fulltext.claim_fulltext_work(conn, "a", NOW, NOW + timedelta(minutes=15), NOW - 60 * DAY, 2)
        second = storage.fulltext.claim_fulltext_work(conn, "b", NOW, NOW + timedelta(minutes=15), NOW - 60 * DAY, 5)
        late = NOW + timedelta(minutes=16)  # a's process was killed: its claims run out
        third = storage.fulltext.claim_fulltext_work(conn, "b", late, late + timedelta(minutes=15), NOW - 60 * DAY, 5)
    assert len(first) == 2 and len(second) == 1 and not set(first) & set(second)
    assert set(third) == set(first) | set(second)


def test_two_claims_at_the_same_moment_get_different_papers(db: Database) -> None:
    """Two processes see the same due papers at once: the second's claim waits for the first's and gets none of
    its papers."""
    import threading

    lab(db)
    until, since = NOW + timedelta(minutes=15), NOW - 60 * DAY
    got: dict[str, list[int]] = {}
    with db.connection() as first:
        got["a"] = storage.fulltext.claim_fulltext_work(first, "a", NOW, until, since, 5)  # not committed yet

        def other() -> None:
            with db.connection() as conn:
                got["b"] = storage.fulltext.claim_fulltext_work(conn, "b", NOW, until, since, 5)

        racing = threading.Thread(target=other)
        racing.start()
        time.sleep(0.5)
        assert "b" not in got, "the second claim waits on the first's rows"
    racing.join(10)
    assert len(got["a"]) == 3 and got["b"] == []


def test_none_is_looked_for_again_after_30_days_and_a_host_that_did_not_answer_after_a_day(db: Database) -> None:
    ids = lab(db)
    web = Web()  # nothing anywhere: no open full text
    web.on("https://pmc.test/robots.txt", Answer(503, b"down", "text/plain"))
    done = worker(db, web, batch=10).run()
    assert (done.none, done.later) == (2, 1)
    with db.connection() as conn:
        new = storage.fulltext.load_fulltext_state(conn, ids["new"])
        posted = storage.fulltext.load_fulltext_state(conn, ids["posted"])
    assert new is not None and new.status == "none" and "has no file for it" in (new.note or "")
    assert posted is not None and posted.status == "none" and "tries again within a day" in (posted.note or "")
    assert worker(db, web, batch=10, clock=lambda: NOW + 2 * DAY).run().claimed == 1, "only the one a host held"
    assert worker(db, web, batch=10, clock=lambda: NOW + 31 * DAY).run().claimed == 3, "the rest after 30 days"


def test_a_hostile_pdf_leaves_the_papers_other_data_untouched(db: Database) -> None:
    ids = lab(db)
    with db.connection() as conn:
        conn.execute("UPDATE papers SET title = 'Kept', abstract = 'Its abstract.' WHERE id = %s", (ids["asked"],))
        storage.embeddings.upsert_embeddings(conn, MODEL, [(ids["asked"], "h", np.ones(384, dtype=np.float32))])
        before = conn.execute(
            "SELECT title, abstract, url, fetched_at FROM papers WHERE id = %s", (ids["asked"],)
        ).fetchone()
    web = lab_web()
    web.on("https://acl.test/2017.acl-long.5.pdf", Answer(200, bomb_pdf(300), "application/pdf"))
    assert worker(db, web, batch=10).run().unreadable == 1
    with db.connection() as conn:
        after = conn.execute(
            "SELECT title, abstract, url, fetched_at FROM papers WHERE id = %s", (ids["asked"],)
        ).fetchone()
        state = storage.fulltext.load_fulltext_state(conn, ids["asked"])
        kept = storage.embeddings.load_vectors(conn, MODEL, [ids["asked"]])
    assert after == before and ids["asked"] in kept
    assert state is not None and state.status == "unreadable" and state.note
    assert count(db, "SELECT count(*) FROM paper_passages WHERE paper_id = %s", ids["asked"]) == 0


def test_passage_vectors_go_with_a_new_reading_forget_me_and_a_purge(db: Database) -> None:
    ids = lab(db)
    worker(db, lab_web(), batch=10).run()
    vectors = "SELECT count(*) FROM paper_passage_vectors WHERE paper_id = %s"
    assert count(db, vectors, ids["asked"]) > 0 and count(db, vectors, ids["new"]) > 0
    with db.connection() as conn:  # read again: the passages are replaced, their vectors go with them
        storage.fulltext.save_fulltext(conn, ids["new"], status="read", kind="pdf", passages=[("1", "Another text.")])
    assert count(db, vectors, ids["new"]) == 0
    with db.connection() as conn:
        storage.privacy.forget_member(conn, T, "U2")  # the asked-about paper was U2's share alone
    assert (
        count(db, vectors, ids["asked"]) == 0
        and count(db, "SELECT count(*) FROM paper_fulltexts WHERE paper_id = %s", ids["asked"]) == 0
    )
    assert count(db, vectors, ids["posted"]) > 0
    with db.connection() as conn:
        storage.workspaces.purge_team(conn, T)
    assert count(db, "SELECT count(*) FROM paper_passage_vectors") == 0
    assert count(db, "SELECT count(*) FROM paper_passages") == 0


class _NoPosts:
    def tick(self) -> None:
        pass


def test_paperping_runs_scheduler_reads_a_posted_paper_from_hosts_on_real_sockets(db: Database, tmp_path: Path) -> None:
    from bot.cli.process import build_fulltext_worker, start_scheduler
    from socialrag.recommender import Recommender

    ids = lab(db)
    arxiv, pmc = HostStandIn().start(), HostStandIn(robots=None).start()
    pmc.routes["/oai/?verb=GetRecord&identifier=oai:pubmedcentral.nih.gov:3460867&metadataPrefix=pmc"] = [
        Answer(200, pmc_record(NXML["pone.0046493.nxml"], 3460867), "text/xml")
    ]
    arxiv.routes["/pdf/2401.00001"] = [Answer(200, text_pdf(LINES), "application/pdf")]
    settings = Settings(
        home=tmp_path, arxiv_url=arxiv.url, pmc_url=pmc.url + "oai/", acl_anthology_url=arxiv.url,
        openalex_api_url=arxiv.url, biorxiv_api_url=arxiv.url,
    )  # fmt: skip
    recommender = Recommender(settings, db, embedder=HashEmbedder())
    job = build_fulltext_worker(settings, db, recommender)
    scheduler = start_scheduler(_NoPosts(), 3600, fulltext=job)  # type: ignore[arg-type]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and states(db).get(ids["posted"]) != "read":
            time.sleep(0.2)
    finally:
        scheduler.shutdown(wait=True)
        job.close()
        recommender.close()
        arxiv.stop()
        pmc.stop()
    assert states(db).get(ids["posted"]) == "read" and states(db).get(ids["new"]) == "read"
    assert count(db, "SELECT count(*) FROM paper_passage_vectors WHERE paper_id = %s", ids["posted"]) > 0
    assert all("Cookie" not in headers for _, headers in arxiv.requests)
    assert {"/robots.txt", "/html/2401.00001", "/pdf/2401.00001"} <= {path for path, _ in arxiv.requests}
    off = build_fulltext_worker(settings.with_changes(fulltext=False), db, recommender)
    quiet = start_scheduler(_NoPosts(), 3600, fulltext=off)  # type: ignore[arg-type]
    assert quiet.get_job("fulltext") is None
    quiet.shutdown(wait=False)


def test_paperping_status_says_how_many_of_a_channels_papers_have_full_text(
    db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    lab(db)
    worker(db, lab_web(), batch=10).run()
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C2", fulltext=False)
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    assert main(["status", "--json"]) == 0
    rows = {(r["id"], r["name"]): r["fulltext"] for r in json.loads(capsys.readouterr().out)["channels"]}
    c1 = rows[("C1", "papers")]
    assert {k: c1[k] for k in ("on", "papers", "read", "none", "unreadable", "waiting")} == {
        "on": True, "papers": 3, "read": 2, "none": 0, "unreadable": 0, "waiting": 1,
    }  # fmt: skip
    assert main(["status", "--channel", "C2"]) == 0
    out = capsys.readouterr().out
    assert "full text read for 0 of its 0 papers" in out and "reading is off for this channel" in out


def test_a_member_sharing_many_papers_costs_a_few_papers_a_run(db: Database) -> None:
    """How much work one member causes: thirty shares at once are read a batch a run, a few requests a paper."""
    lab(db)
    with db.connection() as conn:
        shares = [
            Message(T, "C1", f"5.{i}", "U2", "more", NOW - DAY, papers=(ref("arxiv", f"2402.{i:05d}"),))
            for i in range(30)
        ]
        index_messages(conn, shares)
    web = Web()
    done = worker(db, web).run()
    batch = FullTextConfig().batch
    assert done.claimed == batch
    assert len([r for r in web.seen if not r.url.path.endswith("robots.txt")]) <= 2 * batch, "HTML and PDF at most"


class _SlowEmbedder(HashEmbedder):
    """A CPU's pace: each chunk takes a moment, long enough for another process to start on the same passages."""

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        time.sleep(0.3)
        return super().encode(texts, batch_size=batch_size)


def test_two_processes_embed_each_passage_once_not_each_all_of_them(db: Database) -> None:
    import threading

    with db.connection() as conn:
        papers = storage.papers.ensure_papers(conn, [("arxiv", f"2402.{i:05d}") for i in range(3)])
        for paper_id in papers.values():
            passages = [(f"{s}", f"Passage {s} of paper {paper_id}.") for s in range(100)]
            storage.fulltext.save_fulltext(conn, paper_id, status="read", kind="pdf", passages=passages)
    embedders = [_SlowEmbedder(), _SlowEmbedder()]
    workers = [FullTextWorker(db, e, None) for e in embedders]
    threads = [threading.Thread(target=w.embed_passages) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert count(db, "SELECT count(*) FROM paper_passage_vectors") == 300
    encoded = [len(e.texts) for e in embedders]
    assert sum(encoded) == 300, f"each passage is encoded by one process only, not by both ({encoded})"
