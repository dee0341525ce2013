"""`/paperping conference VENUE YEAR` through the real bolt app against the Slack stand-in, on the lab's catalog of
ACL Anthology papers: one message in the channel, the plan as Markdown and CSV files in its thread, the first ten
as a reply there; the papers at the top are closer to the channel's history than the venue's median; a venue
nobody knows gets the nearest names."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np

from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel
from socialrag.recommender.serve.service import Recommender
from socialrag.storage.embeddings import load_vectors
from tests.support.harness import Harness, T
from tests.support.labbase import CachedEmbedder, build_lab

MODEL = "all-MiniLM-L6-v2"


def closeness(db: Database, paper_ids: list[int]) -> dict[int, float]:
    """Each paper's cosine to the mean of the papers the channel shared."""
    with db.connection() as conn:
        shared = [r[0] for r in conn.execute("SELECT DISTINCT paper_id FROM message_papers").fetchall()]
        history = np.mean(list(load_vectors(conn, MODEL, shared).values()), axis=0)
        vectors = load_vectors(conn, MODEL, paper_ids)
    unit = history / np.linalg.norm(history)
    return {p: float(v @ unit / np.linalg.norm(v)) for p, v in vectors.items()}


def test_a_conference_planner_for_an_acl_anthology_venue(harness: Harness, db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    answer = harness.command("conference ACL 2020")
    assert "Posted the ACL 2020 planner here" in answer, answer
    (head,) = [p for p in harness.standin.posts if not p.get("thread_ts") and "ACL 2020" in p["text"]]
    (reply,) = [p for p in harness.standin.posts if p.get("thread_ts") == head["ts"]]
    files = {f["name"]: f for f in harness.standin.files if f.get("thread_ts") == head["ts"]}
    assert sorted(files) == ["ACL-2020.csv", "ACL-2020.md"]
    rows = list(csv.DictReader(io.StringIO(files["ACL-2020.csv"]["data"].decode())))
    markdown = files["ACL-2020.md"]["data"].decode()
    assert rows and markdown.count("\n| ") == len(rows) + 1, "a table row a paper, under its heading row"
    assert all(r["why"] for r in rows), "each paper with one line on why"
    lines = [line for line in reply["text"].split("\n") if re.match(r"\d+\. ", line)]
    assert len(lines) == 10 and "<@" not in reply["text"], "ten, members named without a notification"
    # the top papers are closer to what the channel shared than the venue's median paper
    with db.connection() as conn:
        ids = dict(conn.execute("SELECT value, paper_id FROM paper_ids WHERE scheme = 'acl'").fetchall())
        venue = [r[0] for r in conn.execute("SELECT p.id FROM papers p JOIN venues v ON v.id = p.venue_id "
                                            "WHERE v.name = 'ACL' AND p.year = 2020").fetchall()]  # fmt: skip
    near = closeness(db, venue)
    top = [ids[r["url"].rstrip("/").rsplit("/", 1)[1]] for r in rows[:10]]
    assert np.mean([near[p] for p in top]) > np.median(list(near.values()))


def test_a_venue_nobody_knows_says_so_with_the_nearest_names(harness: Harness, db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    answer = harness.command("conference EMNPL 2020")
    assert "I found no papers of `EMNPL` in 2020" in answer and "`EMNLP`" in answer, answer
    assert "Name a venue and a year" in harness.command("conference ACL", user="U3")
    assert not [p for p in harness.standin.posts if "planner" in p["text"].lower()], "nothing was posted"


def test_a_venue_the_catalog_lacks_comes_from_semantic_scholar(harness: Harness, db: Database, tmp_path: Path) -> None:
    """The Global WordNet Conference is not in the lab's catalog: its 2016 papers come from Semantic Scholar's
    search by venue and year (a stand-in with its real answer shape), stored, embedded and ranked."""
    from tests.support.scholar_standin import ScholarStandIn, source_urls

    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    scholar = ScholarStandIn().start()
    try:
        settings = harness.settings.with_changes(offline=False, **source_urls(scholar.url))
        harness.ctx.recommender = Recommender(settings, db, embedder=CachedEmbedder())
        answer = harness.command("conference Global WordNet Conference 2016", timeout=180)  # 61 papers to embed
        assert "planner here" in answer, answer
        assert any(p[1] == "/graph/v1/paper/search/bulk" for p in scholar.requests)
    finally:
        scholar.stop()
    (head,) = [p for p in harness.standin.posts if not p.get("thread_ts") and "2016" in p["text"]]
    assert "(50 of 61;" in head["text"], head["text"]


def test_a_link_written_like_a_formula_stays_text_in_the_planners_csv(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """A source's link is written by others: one that a spreadsheet would run as a formula is kept as text in the
    CSV, as titles and authors are."""
    build_lab(db, tmp_path, CachedEmbedder())
    hostile = '=HYPERLINK("https://example.org/x","open")'
    with db.connection() as conn:
        venue = [r[0] for r in conn.execute("SELECT p.id FROM papers p JOIN venues v ON v.id = p.venue_id "
                                            "WHERE v.name = 'ACL' AND p.year = 2020").fetchall()]  # fmt: skip
        conn.execute("DELETE FROM paper_ids WHERE paper_id = ANY(%s)", (venue,))
        conn.execute("UPDATE papers SET url = %s WHERE id = ANY(%s)", (hostile, venue))
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    assert "planner here" in harness.command("conference ACL 2020")
    (sheet,) = [f for f in harness.standin.files if f["name"] == "ACL-2020.csv"]
    rows = list(csv.DictReader(io.StringIO(sheet["data"].decode())))
    assert rows and all(r["url"] == "'" + hostile for r in rows), rows[0]


def test_the_planner_never_shows_a_paper_only_another_channel_shared(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """Another workspace's channel shared an ACL 2020 paper the catalog lacks, and a paper of a workshop only it
    reads: neither is a row of this channel's ACL 2020 planner, and the workshop is not among the nearest names
    of a venue nobody knows here."""
    build_lab(db, tmp_path, CachedEmbedder())
    with db.connection() as conn:
        unshared = [r[0] for r in conn.execute(
            "SELECT p.id FROM papers p JOIN venues v ON v.id = p.venue_id WHERE v.name = 'ACL' AND p.year = 2020 "
            "AND NOT EXISTS (SELECT 1 FROM message_papers m WHERE m.paper_id = p.id) ORDER BY p.id").fetchall()]  # fmt: skip
        theirs, workshop = unshared[0], unshared[1]
        conn.execute("UPDATE papers SET in_catalog = false WHERE id = ANY(%s)", ([theirs, workshop],))
        secret = conn.execute(
            "INSERT INTO venues (name, normalized_name) VALUES ('Secret Retreat', 'secret retreat') RETURNING id"
        ).fetchone()[0]
        conn.execute("UPDATE papers SET venue_id = %s WHERE id = %s", (secret, workshop))
        storage.workspaces.upsert_team(conn, "T0OTHER")
        storage.workspaces.upsert_channel(conn, Channel("T0OTHER", "G9", "private-reading"))
        for k, pid in enumerate((theirs, workshop)):
            mid = conn.execute(
                "INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at) "
                "VALUES ('T0OTHER', 'G9', %s, 'UX', 'ours', now()) RETURNING id",
                (f"170000000{k}.000100",),
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url) "
                "VALUES (%s, %s, 'T0OTHER', 'G9', 'x')",
                (mid, pid),
            )
        title = conn.execute("SELECT title FROM papers WHERE id = %s", (theirs,)).fetchone()[0]
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    assert "planner here" in harness.command("conference ACL 2020")
    (sheet,) = [f for f in harness.standin.files if f["name"] == "ACL-2020.csv"]
    assert title not in sheet["data"].decode(), "a paper only another workspace shared"
    answer = harness.command("conference Secret Retreat 2020", user="U3")
    assert (
        "I found no papers of `Secret Retreat` in 2020" in answer
        and "Secret Retreat`" not in answer.split("in 2020", 1)[1]
    ), answer


def test_the_planners_files_failing_still_leaves_the_first_ten_and_says_what_happened(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """The files are uploaded step by step: when the step that shares them fails in a way that may come after Slack
    shared them, the member is told they may be there; when Slack refuses them for certain (no `files:write`), the
    thread still gets the first ten, with a line saying the files are missing, and the member is told why."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())

    harness.standin.fail_next["files.completeUploadExternal"] = 1
    answer = harness.command("conference ACL 2020")
    assert "Slack did not confirm its files' upload: they may be in its thread all the same" in answer, answer
    (head,) = [p for p in harness.standin.posts if not p.get("thread_ts") and "ACL 2020" in p["text"]]
    (reply,) = [p for p in harness.standin.posts if p.get("thread_ts") == head["ts"]]
    assert "could not be uploaded" not in reply["text"] and reply["text"].count("\n") >= 10

    with db.connection() as conn:  # the planner's wait of ten minutes, over
        conn.execute("DELETE FROM member_cooldowns")
    harness.standin.missing_scopes.add("files.getUploadURLExternal")
    answer = harness.command("conference ACL 2020")
    assert "without its files: an admin needs to reinstall PaperPing so it gets `files:write`" in answer, answer
    second = [p for p in harness.standin.posts if not p.get("thread_ts") and "ACL 2020" in p["text"]][-1]
    (reply,) = [p for p in harness.standin.posts if p.get("thread_ts") == second["ts"]]
    assert "_The files could not be uploaded; ask again later for them._" in reply["text"]
    assert not harness.standin.files


def test_the_planner_names_no_member_who_left_the_channel(harness: Harness, db: Database, tmp_path: Path) -> None:
    """ben shared the threads the planner's reasons point to, then left the channel: the plan still points to those
    threads but names him nowhere (the thread's reply, the Markdown file, the CSV), and names no bot either."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1")
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    harness.event({"type": "member_left_channel", "user": "U2", "channel": "C1", "team": T, "event_ts": "2.0"})
    assert "planner here" in harness.command("conference ACL 2020", user="U3")
    (head,) = [p for p in harness.standin.posts if not p.get("thread_ts") and "ACL 2020" in p["text"]]
    (reply,) = [p for p in harness.standin.posts if p.get("thread_ts") == head["ts"]]
    files = {f["name"]: f["data"].decode() for f in harness.standin.files if f.get("thread_ts") == head["ts"]}
    rows = list(csv.DictReader(io.StringIO(files["ACL-2020.csv"])))
    assert rows and all(r["why"] for r in rows)
    assert any("TaBERT" in r["why"] or "Weight Poisoning" in r["why"] for r in rows), "ben's threads still count"
    for text in (reply["text"], files["ACL-2020.md"], files["ACL-2020.csv"]):
        assert "ben" not in text and "U2" not in text and "UBOT" not in text, text
