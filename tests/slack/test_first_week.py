"""A lab's first hour with only ``paperping run``: no CLI step before it, stand-ins of Slack, Semantic Scholar
and arXiv, the real embedding model, Postgres with pgvector.

PaperPing is invited into a channel with months of paper sharing: it reads the history, looks the papers up,
embeds them and posts a recommendation grounded in the channel's threads. A new share is looked up and
embedded within a minute. A channel with no history gets a post after a focus is set. A command in a channel
PaperPing has not joined gets an answer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bot.cli import main
from socialrag.db import Database
from socialrag.pgtools import with_dbname
from tests.support.scholar_standin import ScholarStandIn, load_acl_rows
from tests.support.service_lab import Lab, T, shared_history, slack_users, stop_lab, wait_for
from tests.support.slack_standin import SlackStandIn, SlackState

# machine translation papers of the ACL Anthology sample: the lab's history
HISTORY = [
    "2020.acl-main.34",
    "2020.acl-main.35",
    "2020.acl-main.36",
    "2020.acl-main.37",
    "2020.acl-main.40",
    "2020.acl-main.41",
    "2020.acl-main.42",
    "2020.emnlp-main.475",
]
MEMBERS = ("U1", "U2", "U3", "U4")


def lab_slack(now: float) -> SlackState:
    """#mt-reading with three months of shares (threads, reactions), #quiet-lab with none, #elsewhere without
    PaperPing in it."""
    state = SlackState()
    state.users = slack_users({"U1": "ana", "U2": "ben", "U3": "chen", "U4": "dee", "UBOT": "paperping"})
    state.users["U2"]["real_name"] = "Ben Lab"  # an author: his profile's name is his name on Semantic Scholar
    everyone = [*MEMBERS, "UBOT"]
    state.channels = {
        "C1": {"id": "C1", "name": "mt-reading", "is_channel": True, "members": everyone},
        "C2": {"id": "C2", "name": "quiet-lab", "is_channel": True, "members": everyone},
        "C3": {"id": "C3", "name": "elsewhere", "is_channel": True, "members": list(MEMBERS)},
    }
    messages = shared_history(
        now,
        [f"worth a read <https://aclanthology.org/{acl}/>" for acl in HISTORY],
        MEMBERS,
        emoji="+1",
        reply=lambda i: "the decoding trick in section 4 is neat",
        reply_after=600,
        chatter="lunch at 12?",
    )
    state.messages = {"C1": messages, "C2": [], "C3": []}
    return state


@pytest.fixture
def lab(db: Database, tmp_path: Path) -> Iterator[Lab]:
    slack = SlackStandIn(lab_slack(time.time())).start()
    scholar = ScholarStandIn().start()
    running = Lab(db.conninfo, tmp_path, slack, scholar)
    try:
        yield running
    finally:
        log = stop_lab(running, slack, scholar)
        assert "Traceback" not in log, "paperping run logged no unexpected failure"


def scalar(db: Database, sql: str, *params: Any) -> Any:
    with db.connection() as conn:
        row = conn.execute(sql, params).fetchone()
    return row[0] if row else None


@pytest.mark.slow
def test_a_labs_first_hour_with_only_paperping_run(lab: Lab, db: Database, pg_server_uri: str, tmp_path: Path) -> None:
    # a command in a channel PaperPing has not joined: an answer, and nothing saved
    answer = lab.command("C3", "frequency daily")
    assert "I'm not in this channel yet" in answer and "/invite @PaperPing" in answer
    assert scalar(db, "SELECT count(*) FROM channel_settings WHERE channel_id = 'C3'") == 0

    # members let it post at any hour (the defaults are weekday office hours), then invite it
    assert "Done" in lab.command("C1", "hours 0-24 every-day")
    lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T})
    wait_for(lambda: len(lab.posts("C1", blocks=False)) >= 3, 60, "the introduction and the history note")
    notes = [p["text"] for p in lab.posts("C1", blocks=False)]
    assert any(n.startswith("Hi, I'm PaperPing") for n in notes)
    assert any(f"{len(HISTORY)} papers shared here" in n for n in notes)

    # the first recommendation: after the history is read and indexed, grounded in the channel's threads
    wait_for(lambda: bool(lab.posts("C1", blocks=True)), 150, "the first recommendation in #mt-reading")
    (post,) = lab.posts("C1", blocks=True)
    shown = json.dumps(post["blocks"])
    assert "archives/C1/p" in shown, "the post links the earlier thread it relates to"
    paper = post["metadata"]["event_payload"]["paper_id"]
    title = scalar(db, "SELECT title FROM papers WHERE id = %s", paper)
    related = {p["title"] for p in lab.scholar.related([f"ACL:{a}" for a in HISTORY], 30)}
    assert title in related, f"{title!r} is on the channel's topic"
    waiting = "SELECT count(*) FROM index_queue WHERE given_up_at IS NULL"
    wait_for(lambda: scalar(db, waiting) == 0, 30, "the queue to empty (PaperPing's own post is indexed too)")
    looked_up = scalar(
        db,
        "SELECT count(*) FROM message_papers mp JOIN papers p ON p.id = mp.paper_id "
        "WHERE mp.channel_id = 'C1' AND p.title IS NOT NULL",
    )
    assert looked_up >= len(HISTORY)
    status = lab.command("C1", "status")
    assert f"Index: {len(HISTORY) + 1} papers shared here" in status, status

    # what became of the papers discussed: once each shared paper was looked at, a new paper citing two of them
    # appears on Semantic Scholar; a follow-up says so in the thread of the earlier one, and only there
    wait_for(lambda: scalar(db, "SELECT count(*) FROM paper_watch") >= len(HISTORY), 60, "the first look")
    citer = lab.scholar.acl_paper(next(r["acl_id"] for r in load_acl_rows()[::-1] if r["acl_id"] not in HISTORY))
    for acl in HISTORY[:2]:
        lab.scholar.citations[lab.scholar.acl_paper(acl)["paperId"]] = [citer]
    first_ts = lab.slack.state.messages["C1"][1]["ts"]  # HISTORY[0]'s share (its thread's reply comes first)

    def followed() -> list[dict[str, Any]]:
        return [p for p in lab.slack.posts if p.get("thread_ts") == first_ts and "builds on" in p["text"]]

    wait_for(lambda: bool(followed()), 60, "the follow-up in the thread of the first paper")
    (follow_up,) = followed()
    assert (
        follow_up["text"].startswith("A new paper builds on this one and on <https://")
        and citer["title"][:40] in (follow_up["text"])
    )

    # a member lets the channel hear of their papers: a new one on Semantic Scholar is announced there, once
    member_paper = lab.scholar.acl_paper(next(r["acl_id"] for r in load_acl_rows()[5:] if r["acl_id"] not in HISTORY))
    lab.scholar.authors["7001"] = {"name": "Ben Lab", "papers": []}
    assert "Done" in lab.command("C1", "link-author 7001", user="U2")
    assert "Done" in lab.command("C1", "my-papers on", user="U2")
    looked = "SELECT count(*) FROM author_checks WHERE s2_author_id = '7001'"
    wait_for(lambda: scalar(db, looked) == 1, 60, "the first look at the member's papers")
    lab.scholar.authors["7001"]["papers"].append({**member_paper, "year": 2026, "publicationDate": "2026-11-01"})

    def announced() -> list[dict[str, Any]]:
        return [p for p in lab.slack.posts if p["channel"] == "C1" and p["text"].startswith("New from the group")]

    wait_for(lambda: bool(announced()), 60, "the member's new paper announced")
    (news,) = announced()
    assert member_paper["title"][:40] in news["text"] and "<@U2>" in news["text"]

    # a member asks what the channel read: its papers, who shared them and their threads (only they see it)
    first_title = str(scalar(db, "SELECT title FROM papers p JOIN paper_ids i ON i.paper_id = p.id WHERE i.value = %s",
                             HISTORY[0]))  # fmt: skip
    asked = lab.command("C1", f"ask did anyone share {first_title}?", user="U3", timeout=60)
    assert asked.startswith("*What #mt-reading read about") and first_title[:40] in asked, asked
    assert "shared by " in asked and "<@" not in asked

    # a new share is looked up and embedded within a minute (a paper PaperPing has never seen, not even as a
    # candidate Semantic Scholar suggested)
    with db.connection() as conn:
        seen = {r[0] for r in conn.execute("SELECT value FROM paper_ids WHERE scheme = 'acl'")}
    new_share = next(
        r["acl_id"]
        for r in load_acl_rows()
        if r["acl_id"] not in seen and r.get("abstract") and r["acl_id"].startswith("2020.acl-main.")
    )
    assert "reply in its thread" in lab.command("C1", "context on")  # members asked for context on their shares
    ts = f"{time.time():.6f}"
    text = f"new from the group <https://aclanthology.org/{new_share}/>"
    started = time.time()
    lab.event({"type": "message", "channel": "C1", "user": "U2", "text": text, "ts": ts, "event_ts": ts})
    shared = "SELECT p.id FROM papers p JOIN paper_ids i ON i.paper_id = p.id WHERE i.scheme = 'acl' AND i.value = %s"
    wait_for(
        lambda: bool(
            scalar(
                db,
                f"SELECT count(*) FROM paper_embeddings e JOIN papers p ON p.id = e.paper_id "
                f"WHERE p.title IS NOT NULL AND p.id = ({shared})",
                new_share,
            )
        ),
        60,
        "the new share to be looked up and embedded",
    )
    print(f"new share indexed in {time.time() - started:.1f}s")
    # and, the channel having asked for it, a context reply in its thread within the minute (or, when nothing
    # grounded links the paper to the channel, the decision to stay silent)
    decided = "SELECT status FROM share_replies WHERE channel_id = 'C1' AND message_ts = %s"
    wait_for(lambda: scalar(db, decided, ts) in ("replied", "silent"), 60, "the context reply on the new share")
    in_thread = [p for p in lab.posts("C1", blocks=False) + lab.posts("C1", blocks=True) if p.get("thread_ts") == ts]
    print(f"context on the new share: {scalar(db, decided, ts)} after {time.time() - started:.1f}s", in_thread)
    # a paper of the venue the group has been reading: the reply says so
    assert scalar(db, decided, ts) == "replied", scalar(
        db, "SELECT reason FROM share_replies WHERE message_ts = %s", ts
    )
    assert len(in_thread) == 1
    assert all("<@" not in p["text"] and "<!" not in p["text"] for p in in_thread)

    # a channel with no history: it is asked for a focus, posts nothing it cannot, and posts after a focus
    assert "Done" in lab.command("C2", "hours 0-24 every-day")
    lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C2", "team": T})
    wait_for(lambda: any("little to go on" in p["text"] for p in lab.posts("C2", blocks=False)), 60, "the note")
    assert lab.command("C2", "now").startswith("No candidate yet")
    focus = lab.command("C2", "focus neural machine translation decoding")
    assert "lean toward that" in focus
    # its first post comes a minute after the focus, whatever its schedule says, and the answer says when
    assert "The first post here comes at about" in focus, focus
    wait_for(lambda: bool(lab.posts("C2", blocks=True)), 150, "the first post after the focus, by itself")
    # a channel with so little history gets, first, five papers drawn wide from its focus to rate
    (post,) = lab.posts("C2", blocks=True)
    assert post["blocks"][0]["text"]["text"].startswith("To learn what this channel reads, here are 5 papers")
    rows = [b for b in post["blocks"] if b["type"] == "actions"]
    assert len(rows) == 5 and all(
        [e["text"]["text"] for e in r["elements"]] == ["Relevant", "Not for us"] for r in rows
    )
    paper = post["metadata"]["event_payload"]["paper_id"]
    assert (
        "translation"
        in str(scalar(db, "SELECT title || coalesce(abstract, '') FROM papers WHERE id = %s", paper)).lower()
    )
    why = lab.command("C2", "why")
    assert why.startswith("*Why I posted 5 papers to rate*"), why
    assert why.count("\n• ") == 5 and "<@" not in why
    assert not lab.posts("C3", blocks=True) and not lab.posts("C3", blocks=False)

    # the admin backs the lab up while paperping run still serves, and the backup restores into a new database
    backed_up(lab, db, pg_server_uri, tmp_path)


def backed_up(lab: Lab, db: Database, server: str, tmp_path: Path) -> None:
    """``paperping backup`` in its own process beside the running service, then ``paperping restore`` of the file
    into a new database: the channels' shares, the posts and the settings as they were when it was taken."""
    dump = tmp_path / "lab.dump"
    env = {**os.environ, "DATABASE_URL": db.conninfo}
    took = subprocess.run(
        [sys.executable, "-c", "from bot.cli import main; raise SystemExit(main())", "backup", str(dump)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert took.returncode == 0, took.stderr
    assert lab.proc.poll() is None, "the service kept running through the backup"
    counts = "SELECT (SELECT count(*) FROM message_papers), (SELECT count(*) FROM recommendations), (SELECT count(*) FROM channel_settings)"
    target = with_dbname(server, "pp_first_week_restored")
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("DATABASE_URL", target)
            assert main(["restore", str(dump)]) == 0
        with psycopg.connect(target) as conn:
            shares, posts, settings = conn.execute(counts).fetchone() or (0, 0, 0)
        assert shares >= len(HISTORY) + 1 and posts >= 2 and settings >= 2
        with db.connection() as conn:
            now = conn.execute(counts).fetchone() or (0, 0, 0)
        assert (shares, posts, settings) <= tuple(now), "the backup holds no more than the home had"
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute('DROP DATABASE IF EXISTS "pp_first_week_restored" WITH (FORCE)')


def two_channel_slack(now: float, per_channel: int) -> SlackState:
    """Two channels, each with its own ``per_channel`` shares of different ACL papers."""
    state = lab_slack(now)
    rows = [r for r in load_acl_rows() if r["acl_id"] not in HISTORY]
    state.channels = {
        cid: {"id": cid, "name": name, "is_channel": True, "members": [*MEMBERS, "UBOT"]}
        for cid, name in (("C1", "reading-a"), ("C2", "reading-b"))
    }
    state.messages = {}
    for k, cid in enumerate(("C1", "C2")):
        chosen = rows[k * per_channel : (k + 1) * per_channel]
        state.messages[cid] = [
            {
                "type": "message",
                "user": MEMBERS[i % 4],
                "ts": f"{now - (per_channel - i) * 3600:.6f}",
                "text": f"<https://aclanthology.org/{row['acl_id']}/>",
            }
            for i, row in enumerate(chosen)
        ]
    return state


@pytest.mark.slow
def test_two_paperping_run_processes_share_the_indexing(db: Database, tmp_path: Path) -> None:
    slack = SlackStandIn(two_channel_slack(time.time(), 60)).start()
    scholar = ScholarStandIn(min_interval=1.0).start()  # and together they keep its pace
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    labs = [Lab(db.conninfo, tmp_path / "a", slack, scholar), Lab(db.conninfo, tmp_path / "b", slack, scholar)]
    try:
        for lab, channel in zip(labs, ("C1", "C2"), strict=True):  # each process receives one invitation
            lab.command(channel, "pause")
            lab.command(channel, "follow-ups off")  # their checks ask Semantic Scholar again, by design
            lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": channel, "team": T})

        def done() -> bool:
            looked = scalar(db, "SELECT count(*) FROM papers WHERE title IS NOT NULL")
            return looked == 120 and scalar(db, "SELECT count(*) FROM index_queue") == 0

        wait_for(done, 180, "both channels' papers to be looked up")
        assert scalar(db, "SELECT count(*) FROM paper_embeddings") == 120
    finally:
        logs = [lab.stop() for lab in labs]
        slack.stop()
        scholar.stop()
    asked = scholar.asked
    assert len(asked) == len(set(asked)) == 120, "no paper was looked up twice"
    assert scholar.rate_limited == 0, "the two processes kept Semantic Scholar's pace together"
    counts = [sum(int(n) for n in re.findall(r"indexed (\d+) papers", log)) for log in logs]
    print(f"papers indexed by each process: {counts}")
    assert sum(counts) == 120 and "Traceback" not in "".join(logs)


@pytest.mark.slow
def test_the_first_post_starts_from_the_newest_history_while_the_rest_is_read(db: Database, tmp_path: Path) -> None:
    """A channel of 24 shares, each with a thread, whose replies Slack gives at one call every 3 s: reading all
    of it takes over a minute. The history pages come first (newest first), their papers are indexed, and the first
    post follows once 20 are, before the threads are all read; the history note still comes when they are."""
    rows = [r for r in load_acl_rows() if r["acl_id"].startswith("2020.acl-main.")][:24]
    now = time.time()
    state = lab_slack(now)
    messages: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        ts = f"{now - (200 - i * 6) * 86400:.6f}"
        reply = f"{float(ts) + 600:.6f}"
        messages.append(
            {
                "type": "message",
                "user": MEMBERS[i % 4],
                "ts": ts,
                "text": f"<https://aclanthology.org/{row['acl_id']}/>",
                "thread_ts": ts,
                "reply_count": 1,
                "latest_reply": reply,
                "reactions": [{"name": "+1", "users": [MEMBERS[(i + 1) % 4]], "count": 1}],
            }
        )
        messages.append({"type": "message", "user": MEMBERS[(i + 2) % 4], "ts": reply, "thread_ts": ts, "text": "ok"})
    state.messages = {"C1": messages, "C2": [], "C3": []}
    slack = SlackStandIn(state).start()
    slack.paced = {"conversations.replies": 3.0}
    scholar = ScholarStandIn().start()
    lab = Lab(db.conninfo, tmp_path, slack, scholar)
    try:
        assert "Done" in lab.command("C1", "hours 0-24 every-day")
        started = time.time()
        lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T})
        wait_for(lambda: bool(lab.posts("C1", blocks=True)), 100, "the first recommendation")
        first_post = time.time() - started
        notes = [p["text"] for p in lab.posts("C1", blocks=False)]
        assert not any("I read this channel's history" in n for n in notes), "the post came before the history note"
        assert len(slack.calls_to("conversations.replies")) < len(rows), "threads were still being read"
        wait_for(
            lambda: any("I read this channel's history" in p["text"] for p in lab.posts("C1", blocks=False)),
            240,
            "the note that the whole history is read",
        )
        print(f"first post {first_post:.1f} s after the invitation; history read {time.time() - started:.1f} s")
    finally:
        log = stop_lab(lab, slack, scholar)
    assert "Traceback" not in log
