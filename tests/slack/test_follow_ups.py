"""Follow-ups in the original thread, as `paperping run` does them every few minutes: the shared papers are asked
about again (stand-ins of Semantic Scholar and arXiv, with their real answer shapes), and what changed is said in
the thread where each paper was shared, through the real slack_sdk against the Slack stand-in: a preprint that is
now published, a new arXiv version, a new paper that builds on two of the channel's threads. Nothing is said
twice, nothing at the first look, nothing when the channel turned follow-ups off."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from slack_sdk import WebClient

from bot.delivery.follow_up_posts import thread_replier
from bot.views.follow_up_text import render_follow_up
from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import check_follow_ups
from socialrag.knowledge.papers.arxiv import ArxivApi
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.models import Channel
from socialrag.recommender import FollowUpNote, send_follow_ups
from tests.support.harness import Harness, T, message_event
from tests.support.scholar_standin import ScholarStandIn

DAY = timedelta(days=1)
P1, P2 = "2401.00001", "2401.00002"  # arXiv preprints: P1 gets published, P2 a new version


def s2_arxiv(arxiv_id: str, title: str, venue: str = "ArXiv", doi: str | None = None) -> dict[str, Any]:
    external = {"ArXiv": arxiv_id, **({"DOI": doi} if doi else {})}
    pid = hashlib.sha1(arxiv_id.encode()).hexdigest()
    return {"paperId": pid, "externalIds": external, "title": title, "venue": venue, "year": 2024,
            "authors": [{"name": "Ada Lovelace"}]}  # fmt: skip


def atom(version: int, updated: str) -> str:
    return (
        f"<entry><id>http://arxiv.org/abs/{P2}v{version}</id><updated>{updated}T10:00:00Z</updated>"
        "<title>Second preprint</title></entry>"
    )


@pytest.fixture
def scholar() -> Iterator[ScholarStandIn]:
    standin = ScholarStandIn().start()
    yield standin
    standin.stop()


def ts(at: datetime) -> str:
    return f"{at.timestamp():.0f}.000100"


def versions_waiting(harness: Harness, db: Database, ids: list[str], now: datetime) -> None:
    """U2 shared these arXiv papers 10, 11, ... days ago, and each has a new version's follow-up waiting."""
    for k, arxiv_id in enumerate(ids):
        harness.event(message_event(ts(now - (10 + k) * DAY), f"<https://arxiv.org/abs/{arxiv_id}>", user="U2"))
    harness.ctx.channels.activate(T, "C1")
    with db.connection() as conn:
        papers = dict(conn.execute("SELECT value, paper_id FROM paper_ids WHERE scheme = 'arxiv'").fetchall())
        for arxiv_id in ids:
            detail = {"version": 2, "date": "2026-05-12", "url": f"https://arxiv.org/abs/{arxiv_id}v2"}
            storage.follow_ups.record_follow_up(conn, T, "C1", papers[arxiv_id], "version", "2", detail, now)


def titled(db: Database, titles: Sequence[tuple[str, str]]) -> None:
    """Give the stored papers these (title, identity value) pairs' titles: what a lookup would have filled."""
    with db.connection() as conn:
        for title, value in titles:
            conn.execute(
                "UPDATE papers p SET title = %s FROM paper_ids i WHERE i.paper_id = p.id AND i.value = %s",
                (title, value),
            )


def acl_titles(*papers: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["title"], p["externalIds"]["ACL"]) for p in papers]


def two_acl_threads(
    harness: Harness, db: Database, scholar: ScholarStandIn, now: datetime
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two ACL papers shared 12 and 11 days ago, with their titles (what a lookup would have filled)."""
    a, b = scholar.papers[0], scholar.papers[1]
    for i, p in enumerate((a, b)):
        harness.event(message_event(ts(now - (12 - i) * DAY), f"<https://aclanthology.org/{p['externalIds']['ACL']}/>"))
    harness.ctx.channels.activate(T, "C1")
    titled(db, acl_titles(a, b))
    return a, b


def test_follow_ups_in_the_right_threads_and_none_twice(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    a, b = scholar.papers[0], scholar.papers[1]  # two ACL papers the channel discussed
    shares = {
        "p1": (ts(now - 20 * DAY), f"<https://arxiv.org/abs/{P1}>", "U2"),
        "p2": (ts(now - 15 * DAY), f"<https://arxiv.org/abs/{P2}>", "U4"),  # U4 turned mentions off
        "a": (ts(now - 12 * DAY), f"<https://aclanthology.org/{a['externalIds']['ACL']}/>", "U3"),
        "b": (ts(now - 10 * DAY), f"<https://aclanthology.org/{b['externalIds']['ACL']}/>", "U1"),
    }
    for at, text, user in shares.values():
        harness.event(message_event(at, text, user=user))
    harness.ctx.channels.activate(T, "C1")  # PaperPing was invited into the lab's channel
    titled(db, [*acl_titles(a, b), ("First preprint", P1), ("Second preprint", P2)])  # offline here
    harness.command("mentions off", user="U4")
    scholar.by_key["ARXIV:" + P1] = s2_arxiv(P1, "First preprint")
    scholar.by_key["ARXIV:" + P2] = s2_arxiv(P2, "Second preprint")
    scholar.arxiv_entries = atom(1, "2024-01-02")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    arxiv = ArxivApi(scholar.url + "api/", min_interval=0)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    send = thread_replier(harness.ctx.pacer, lambda team: client)

    def round_at(at: datetime) -> tuple[int, int]:
        noted = check_follow_ups(db, [s2, arxiv], at, DAY)
        return noted, send_follow_ups(db, send, at)

    assert round_at(now) == (0, 0), "the first look records what each paper is and says nothing"
    # a day later: P1 is published, P2 has a third version, and a new paper cites both ACL papers
    scholar.by_key["ARXIV:" + P1] = s2_arxiv(P1, "First preprint", "ACL 2026", doi="10.18653/v1/2026.acl-long.1")
    scholar.arxiv_entries = atom(3, "2026-05-12")
    citer = {"paperId": "c" * 40, "externalIds": {"DOI": "10.1/new"}, "title": "Building on both", "year": 2026}
    scholar.citations[a["paperId"]] = [citer]
    scholar.citations[b["paperId"]] = [citer]
    later = now + DAY + timedelta(minutes=1)
    assert round_at(later) == (3, 3)
    replies = {p["thread_ts"]: p["text"] for p in harness.standin.posts if p.get("thread_ts")}
    shared_on = (now - 20 * DAY).strftime("%-d %B")
    assert replies[shares["p1"][0]] == (
        f"The preprint <@U2> shared on {shared_on} is now published in "
        "<https://aclanthology.org/2026.acl-long.1|ACL 2026>."
    )
    assert replies[shares["p2"][0]] == f"<https://arxiv.org/abs/{P2}v3|Version 3> of this paper came out on 12 May."
    built = replies[shares["a"][0]]  # the earlier of the two threads the new paper cites
    assert built.startswith("A new paper builds on this one and on <https://lab.slack.com/archives/C1/p")
    assert built.endswith(
        f"|the thread on {b['title'][:120]}>: <https://www.semanticscholar.org/paper/{'c' * 40}|Building on both>"
    )
    assert shares["b"][0] not in replies, "said once, in the earliest thread it builds on"
    assert not [p for p in harness.standin.posts if "builds on" in p["text"] and not p.get("thread_ts")]
    # the next day nothing is new: nothing is noted or said again
    assert round_at(later + DAY + timedelta(minutes=1)) == (0, 0)
    # a channel that turned follow-ups off hears nothing more
    assert "Done: no more follow-ups" in harness.command("follow-ups off")
    scholar.arxiv_entries = atom(4, "2026-06-01")
    assert round_at(later + 3 * DAY) == (0, 0)
    time.sleep(0.1)
    assert sum(1 for p in harness.standin.posts if p.get("thread_ts")) == 3


def test_a_malformed_citations_page_costs_only_its_paper(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """Semantic Scholar answers one paper's citations with a page marker that is not a number: that paper's
    citations are skipped for the round, and the job goes on to the next papers, whose new citer (it builds on
    two of the channel's threads) is said (it used to raise ValueError and stop every follow-up, author check and
    member's paper of the run)."""
    now = datetime.now(UTC).replace(microsecond=0)
    a, b, c = scholar.papers[0], scholar.papers[1], scholar.papers[2]
    shares = {
        "a": (ts(now - 12 * DAY), f"<https://aclanthology.org/{a['externalIds']['ACL']}/>", "U3"),
        "b": (ts(now - 10 * DAY), f"<https://aclanthology.org/{b['externalIds']['ACL']}/>", "U1"),
        "c": (ts(now - 9 * DAY), f"<https://aclanthology.org/{c['externalIds']['ACL']}/>", "U2"),
    }
    for at, text, user in shares.values():
        harness.event(message_event(at, text, user=user))
    harness.ctx.channels.activate(T, "C1")
    titled(db, acl_titles(a, b, c))
    s2 = SemanticScholar(scholar.url, min_interval=0)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    send = thread_replier(harness.ctx.pacer, lambda team: client)
    assert check_follow_ups(db, [s2], now, DAY) == 0
    citer = {"paperId": "d" * 40, "externalIds": {"DOI": "10.1/newer"}, "title": "Building on b", "year": 2026}
    scholar.citation_answers[a["paperId"]] = {"offset": 0, "next": "soon", "data": [{"citingPaper": citer}]}
    scholar.citations[b["paperId"]] = scholar.citations[c["paperId"]] = [citer]
    later = now + DAY + timedelta(minutes=1)
    assert check_follow_ups(db, [s2], later, DAY) == 1
    assert send_follow_ups(db, send, later) == 1
    (reply,) = [p for p in harness.standin.posts if p.get("thread_ts")]
    assert reply["thread_ts"] == shares["b"][0] and "Building on b" in reply["text"]
    # a marker that does not move forward is refused too, never paged forever
    scholar.citation_answers[b["paperId"]] = {"offset": 0, "next": 0, "data": []}
    assert check_follow_ups(db, [s2], later + DAY + timedelta(minutes=1), DAY) == 0


def test_a_citer_missing_from_one_answer_is_not_new_when_it_comes_back(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """A paper citing both of the channel's threads was there at the first look. One round Semantic Scholar
    answers a's citations without a list, and another lists only some of them (a paper cited more often than it
    lists): when the citer is listed again it is not a new paper building on the threads (it used to be said)."""
    now = datetime.now(UTC).replace(microsecond=0)
    a, b = two_acl_threads(harness, db, scholar, now)
    old = {"paperId": "e" * 40, "externalIds": {}, "title": "Cites both", "year": 2020}
    other = {"paperId": "f" * 40, "externalIds": {}, "title": "Cites a only", "year": 2020}
    scholar.citations[a["paperId"]] = scholar.citations[b["paperId"]] = [old]
    s2 = SemanticScholar(scholar.url, min_interval=0)
    rounds = [now + k * (DAY + timedelta(minutes=1)) for k in range(4)]
    assert check_follow_ups(db, [s2], rounds[0], DAY) == 0, "the first look: a baseline"
    scholar.citation_answers[a["paperId"]] = {"message": "Too Many Requests"}  # no list: not "nobody cites a"
    assert check_follow_ups(db, [s2], rounds[1], DAY) == 0
    del scholar.citation_answers[a["paperId"]]
    scholar.citations[a["paperId"]] = [other]  # a window of a's citers without the old one
    assert check_follow_ups(db, [s2], rounds[2], DAY) == 0
    scholar.citations[a["paperId"]] = [old, other]
    assert check_follow_ups(db, [s2], rounds[3], DAY) == 0
    with db.connection() as conn:
        assert conn.execute("SELECT id FROM follow_ups").fetchall() == []


def test_a_citer_known_only_by_its_year_is_new_at_the_first_look_only_when_that_year_came_after(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """At a paper's first look, a catalog paper citing it is said only when it is known to have come out after the
    channel's share. One dated by its year alone was taken as out on 31 December: cited by a paper of the share's
    year that may have come out months before the share, the thread heard that a new paper builds on it. Its day
    is unknown, so only a later year says it is newer."""
    now = datetime.now(UTC).replace(microsecond=0)
    a, b = two_acl_threads(harness, db, scholar, now)
    shared_in = (now - 12 * DAY).year
    made: dict[str, int] = {}
    with db.connection() as conn:
        for title, year in (("Cites both, same year", shared_in), ("Cites both, a year on", shared_in + 1)):
            made[title] = conn.execute(
                "INSERT INTO papers (title, year, in_catalog) VALUES (%s, %s, true) RETURNING id", (title, year)
            ).fetchone()[0]
            for p in (a, b):
                conn.execute(
                    "INSERT INTO paper_references (citing_paper_id, cited_scheme, cited_value) VALUES (%s, 'acl', %s)",
                    (made[title], p["externalIds"]["ACL"]),
                )
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_follow_ups(db, [s2], now, DAY) == 1
    with db.connection() as conn:
        said = [row[0] for row in conn.execute("SELECT (detail->>'paper_id')::int FROM follow_ups").fetchall()]
    assert said == [made["Cites both, a year on"]], (said, made)


def test_a_paper_only_another_workspace_shared_is_never_said_to_build_on_a_thread(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """Two stored papers cite both of the lab's threads in their reference lists: one is a catalog paper, the
    other is known only because another workspace's private channel shared it. Only the first is said."""
    now = datetime.now(UTC).replace(microsecond=0)
    a, b = scholar.papers[0], scholar.papers[1]
    for at, paper, user in ((now - 12 * DAY, a, "U3"), (now - 10 * DAY, b, "U1")):
        harness.event(message_event(ts(at), f"<https://aclanthology.org/{paper['externalIds']['ACL']}/>", user=user))
    harness.ctx.channels.activate(T, "C1")
    titled(db, acl_titles(a, b))
    s2 = SemanticScholar(scholar.url, min_interval=0)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    send = thread_replier(harness.ctx.pacer, lambda team: client)
    assert check_follow_ups(db, [s2], now, DAY) == 0
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, "T0OTHER")
        storage.workspaces.upsert_channel(conn, Channel("T0OTHER", "G9", "private-drafts"))
        made = {}
        for title, catalog in (("Our private draft on both", False), ("A public paper on both", True)):
            made[title] = conn.execute(
                "INSERT INTO papers (title, year, in_catalog) VALUES (%s, 2026, %s) RETURNING id", (title, catalog)
            ).fetchone()[0]
            for paper in (a, b):
                conn.execute(
                    "INSERT INTO paper_references (citing_paper_id, cited_scheme, cited_value) VALUES (%s, 'acl', %s)",
                    (made[title], paper["externalIds"]["ACL"]),
                )
        mid = conn.execute(
            "INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at) "
            "VALUES ('T0OTHER', 'G9', '1700000000.000100', 'UX', 'our draft', now()) RETURNING id"
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url) "
            "VALUES (%s, %s, 'T0OTHER', 'G9', 'x')",
            (mid, made["Our private draft on both"]),
        )
    later = now + DAY + timedelta(minutes=1)
    assert check_follow_ups(db, [s2], later, DAY) == 1
    assert send_follow_ups(db, send, later) == 1
    (reply,) = [p for p in harness.standin.posts if p.get("thread_ts")]
    assert "A public paper on both" in reply["text"] and "private draft" not in reply["text"]


def test_a_batch_of_follow_ups_keeps_the_channels_weekly_cap(harness: Harness, db: Database) -> None:
    """Five follow-ups wait in one channel, all loaded in one batch: the weekly cap of three is checked as each
    is claimed, so three are said this week and two wait."""
    from socialrag.recommender.serve.thread_follow_ups import PER_WEEK

    now = datetime.now(UTC).replace(microsecond=0)
    ids = [f"2402.0000{k}" for k in range(5)]
    versions_waiting(harness, db, ids, now)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    send = thread_replier(harness.ctx.pacer, lambda team: client)
    assert send_follow_ups(db, send, now) == PER_WEEK == 3
    assert sum(1 for p in harness.standin.posts if p.get("thread_ts")) == 3
    assert send_follow_ups(db, send, now + DAY) == 0, "the cap holds for the rest of the week"
    assert send_follow_ups(db, send, now + 8 * DAY) == 2


def test_follow_ups_turned_off_while_a_batch_is_sent_stop_at_once(harness: Harness, db: Database) -> None:
    """Two follow-ups wait in one channel; a member turns follow-ups off while the first is being said: the
    second, loaded in the same batch, is not said (it used to be, the setting read only when the batch was)."""
    now = datetime.now(UTC).replace(microsecond=0)
    ids = ["2403.00001", "2403.00002"]
    versions_waiting(harness, db, ids, now)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    reply = thread_replier(harness.ctx.pacer, lambda team: client)

    def send_then_turn_off(team: str, channel: str, thread_ts: str, note: FollowUpNote) -> str:
        with db.connection() as conn:
            storage.settings.upsert_channel_setting(conn, team, channel, follow_ups=False)
        return reply(team, channel, thread_ts, note)

    assert send_follow_ups(db, send_then_turn_off, now) == 1
    assert sum(1 for p in harness.standin.posts if p.get("thread_ts")) == 1
    with db.connection() as conn:
        assert conn.execute("SELECT status FROM follow_ups ORDER BY status").fetchall() == [("posted",), ("waiting",)]


def test_a_paused_channel_hears_its_follow_ups_after_resume_and_a_sharer_who_left_is_not_named(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    shared = ts(now - 20 * DAY)
    harness.event(message_event(shared, f"<https://arxiv.org/abs/{P1}>", user="U2"))
    harness.ctx.channels.activate(T, "C1")
    with db.connection() as conn:
        conn.execute(
            "UPDATE papers p SET title = 'First preprint' FROM paper_ids i WHERE i.paper_id = p.id AND i.value = %s",
            (P1,),
        )
    scholar.by_key["ARXIV:" + P1] = s2_arxiv(P1, "First preprint")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    send = thread_replier(harness.ctx.pacer, lambda team: client)
    assert check_follow_ups(db, [s2], now, DAY) == 0, "the first look says nothing"
    scholar.by_key["ARXIV:" + P1] = s2_arxiv(P1, "First preprint", "ACL 2026", doi="10.18653/v1/2026.acl-long.1")
    assert "Done" in harness.command("pause", user="U1")
    later = now + DAY + timedelta(minutes=1)
    assert check_follow_ups(db, [s2], later, DAY) == 1
    assert send_follow_ups(db, send, later) == 0, "a paused channel hears nothing"
    # the member who shared it left the channel meanwhile: after `resume` the thread hears it, naming nobody
    harness.event({"type": "member_left_channel", "user": "U2", "channel": "C1", "team": T, "event_ts": "5.0"})
    assert "Done" in harness.command("resume", user="U1")
    assert send_follow_ups(db, send, later + timedelta(minutes=5)) == 1
    (reply,) = [p["text"] for p in harness.standin.posts if p.get("thread_ts") == shared]
    assert reply.startswith("The preprint shared here on") and "<@" not in reply, reply


def test_a_linked_venue_is_escaped_once() -> None:
    note = FollowUpNote(
        "published", None, datetime(2026, 1, 2, tzinfo=UTC), venue="Science & Society", url="https://doi.org/10.1/x"
    )
    text = render_follow_up(note)
    assert "|Science &amp; Society>" in text and "&amp;amp;" not in text


def test_a_linked_title_keeps_neither_markup_nor_control_characters() -> None:
    title = "Attention\u202e <!here> <@U123> <https://evil.test|click> again"
    note = FollowUpNote("builds_on", None, datetime(2026, 1, 2, tzinfo=UTC), title=title, url="https://doi.org/10.1/x",
                        others=[("Earlier <!channel>\u200f", "https://x.slack.com/archives/C1/p1")])  # fmt: skip
    text = render_follow_up(note)
    assert "\u202e" not in text and "\u200f" not in text
    assert "here" not in text and "U123" not in text and "channel" not in text and "evil" not in text
    assert text.count("<") == text.count(">") == 2  # the two links, and no markup of the source's
