"""The authors a channel follows, against hostile timing and answers, through the real bolt app and slack_sdk
against the Slack stand-in and Semantic Scholar's stand-in: members following at once never pass a channel's
cap; an answer without a list of papers is no first look; an author that keeps failing waits its turn; a channel
that follows an author last asked for long ago hears only of later papers, and of no paper listed before it came;
dozens of papers new at once bring the newest ten; a member's paper that the channel also follows, or that they
shared there first, goes out once; an author followed by ORCID is unfollowed by it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

import pytest
from slack_sdk import WebClient

from bot.delivery.author_posts import news_poster
from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import check_authors
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.models import Channel
from socialrag.recommender import announce_member_papers
from tests.slack.test_authors import ADA, DAY, GRAHAM, by, embed, online
from tests.support.harness import Harness, T
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab
from tests.support.scholar_standin import ScholarStandIn
from tests.support.slots import slot_worker


@pytest.fixture
def scholar() -> Iterator[ScholarStandIn]:
    standin = ScholarStandIn().start()
    yield standin
    standin.stop()


def channels(harness: Harness, db: Database, *names: str) -> None:
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        for name in names:
            storage.workspaces.upsert_channel(conn, Channel(T, name, name.lower()))
    for name in names:
        harness.ctx.channels.activate(T, name, AS_OF - 30 * DAY)


def follow(db: Database, channel: str, author: str, at: datetime) -> None:
    with db.connection() as conn:
        storage.followed_authors.follow_author(conn, T, channel, author, "Ada Byron", "U2", at)


def test_members_following_at_once_never_pass_the_channels_cap(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """`follow` counted the channel's authors, then asked Semantic Scholar for seconds, then added the author:
    two members following at once, with the channel one short of its cap, both passed the count and the channel
    followed one more than it may. Now the count is made again, under the channel's lock, as the author is added."""
    from bot.commands.authors import MAX_FOLLOWED

    channels(harness, db, "C1")
    online(harness, db, scholar)
    scholar.authors = {aid: {"name": f"Author {aid}", "papers": []} for aid in ("8001", "8002")}
    with db.connection() as conn:
        for k in range(MAX_FOLLOWED - 1):
            storage.followed_authors.follow_author(conn, T, "C1", f"9{k:04d}", f"Author {k}", "U4", AS_OF)
    gate = threading.Event()
    scholar.author_gate = gate  # both members' lookups wait at Semantic Scholar, past the first count
    before = len(harness.standin.responses)
    for user, author in (("U2", "8001"), ("U3", "8002")):
        fields = {"token": "x", "team_id": T, "channel_id": "C1", "user_id": user, "command": "/paperping"}
        body = {**fields, "text": f"follow {author}", "response_url": harness.standin.response_url, "trigger_id": "1"}
        assert harness.signed(urlencode(body), "application/x-www-form-urlencoded").status_code == 200
    time.sleep(1.0)
    gate.set()
    deadline = time.monotonic() + 15
    while len(harness.standin.responses) < before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    answers = [str(r["text"]) for r in harness.standin.responses[before:]]
    assert len(answers) == 2, answers
    with db.connection() as conn:
        assert len(storage.followed_authors.load_followed(conn, T, "C1")) == MAX_FOLLOWED
    assert sum("as many as a channel may" in a for a in answers) == 1, answers
    assert sum(a.startswith("Done: this channel follows") for a in answers) == 1, answers


def test_a_workspace_follows_a_bounded_number_of_authors(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """Any member may make channels and invite PaperPing, each following 30 authors, and the authors' job asks a
    few authors a run for every workspace: a workspace follows at most 300 distinct authors. An author another of
    its channels follows already adds no request, and is followed still."""
    from bot.commands.authors import MAX_FOLLOWED_IN_WORKSPACE

    channels(harness, db, "C1", "C2")
    online(harness, db, scholar)
    scholar.authors = {aid: {"name": f"Author {aid}", "papers": []} for aid in ("8001", "90000")}
    with db.connection() as conn:  # the workspace's other channels, full between them
        for k in range(MAX_FOLLOWED_IN_WORKSPACE):
            storage.workspaces.upsert_channel(conn, Channel(T, f"CX{k // 30}", f"x{k // 30}"))
            storage.followed_authors.follow_author(conn, T, f"CX{k // 30}", f"9{k:04d}", f"Author {k}", "U4", AS_OF)
    refused = harness.command("follow 8001", user="U2", channel="C1", timeout=10)
    assert "as many as a workspace may" in refused, refused
    assert "CX" not in refused and "Author 1" not in refused, "nothing of the other channels"
    followed = harness.command("follow 90000", user="U2", channel="C1", timeout=10)
    assert followed.startswith("Done: this channel follows"), followed
    with db.connection() as conn:
        assert [f.s2_author_id for f in storage.followed_authors.load_followed(conn, T, "C1")] == ["90000"]


def test_an_answer_without_papers_is_no_first_look_and_a_failing_author_waits_its_turn(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """Semantic Scholar's answer without a list of papers (or with none readable) was read as an author with no
    papers: the first look recorded nothing as seen, and at the next every recent paper of theirs was news for the
    channel. Now it is no answer. And an author whose papers kept failing (an id merged away) was asked again at
    every run, before any other author, since its failure was not recorded; now it waits its turn."""
    channels(harness, db, "C1")
    first, second = scholar.papers[10:12]
    scholar.authors = {ADA: {"name": "Ada Byron", "papers": [by(first, ADA, "Ada Byron"), by(second, ADA, "Ada")]}}
    follow(db, "C1", ADA, AS_OF - DAY)
    s2 = SemanticScholar(scholar.url, min_interval=0)
    for malformed in ({"offset": 0}, {"data": None}, {"data": [{"paperId": None}, 7]}):
        scholar.author_refusal = (200, malformed)
        assert check_authors(db, [s2], AS_OF, DAY) == 0
        with db.connection() as conn:
            assert conn.execute("SELECT count(*) FROM author_checks").fetchone() == (0,), malformed
    scholar.author_refusal = None
    assert check_authors(db, [s2], AS_OF + timedelta(minutes=1), DAY) == 0, "the first look: nothing is news"
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM author_news").fetchone() == (0,)
    # the author's id is merged away: the failure is recorded, the papers seen are kept
    del scholar.authors[ADA]
    later = AS_OF + DAY + timedelta(minutes=2)
    assert check_authors(db, [s2], later, DAY) == 0
    with db.connection() as conn:
        assert storage.followed_authors.load_authors_due(conn, later + timedelta(minutes=5) - DAY) == {}
        checked_at, seen = storage.followed_authors.load_author_seen(conn, ADA)
    assert checked_at == later and seen == {first["paperId"], second["paperId"]}


def test_a_channel_hears_of_no_paper_written_before_it_followed(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """The papers new since an author's last ask were news to every channel following them now. When that ask was
    months ago, for a channel that no longer follows them, a channel following today heard of all the author
    wrote meanwhile. Now such a channel's first look is the first ask after it came; when the last ask was
    recent, a channel that followed since hears of what it found, as before."""
    channels(harness, db, "C1", "C2", "C3")
    papers = [by(p, ADA, "Ada Byron") for p in scholar.papers[10:13]]
    scholar.authors = {ADA: {"name": "Ada Byron", "papers": papers[:1]}}
    s2 = SemanticScholar(scholar.url, min_interval=0)
    follow(db, "C1", ADA, AS_OF - DAY)
    assert check_authors(db, [s2], AS_OF, DAY) == 0, "the first look"
    with db.connection() as conn:
        storage.followed_authors.unfollow_author(conn, T, "C1", ADA)
    # two months without anyone following her; she wrote a paper meanwhile; then C2 follows her
    scholar.authors[ADA]["papers"].append(papers[1])
    months = AS_OF + 60 * DAY
    follow(db, "C2", ADA, months)
    assert check_authors(db, [s2], months + timedelta(minutes=1), DAY) == 0, "written before C2 came"
    # asked daily since: a paper that appears is news to C2, and to C3 that followed since the last ask
    follow(db, "C3", ADA, months + DAY)
    scholar.authors[ADA]["papers"].append(papers[2])
    assert check_authors(db, [s2], months + DAY + timedelta(minutes=2), DAY) == 2
    with db.connection() as conn:
        noted = conn.execute("SELECT channel_id, paper_id FROM author_news ORDER BY channel_id").fetchall()
    assert [c for c, _ in noted] == ["C2", "C3"] and noted[0][1] == noted[1][1], noted


def test_of_an_author_with_thousands_of_papers_seen_the_listed_ones_are_kept(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """Of an author with more than 2,000 papers seen, the ids kept were the last 2,000 in alphabetical order, so
    a paper listed at every ask could be forgotten, and was then news to a channel that followed later. Now the
    papers listed at an ask are kept first."""
    channels(harness, db, "C1", "C2")
    papers = [by(p, ADA, "Ada Byron") for p in scholar.papers[10:13]]
    scholar.authors = {ADA: {"name": "Ada Byron", "papers": papers}}
    s2 = SemanticScholar(scholar.url, min_interval=0)
    follow(db, "C1", ADA, AS_OF - DAY)
    with db.connection() as conn:  # asked for before, 2,100 papers seen (ids after Semantic Scholar's hex ones)
        storage.followed_authors.record_author_check(conn, ADA, AS_OF, [f"z{k:05d}" for k in range(2100)])
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY) == 3, "news to C1"
    with db.connection() as conn:
        _, seen = storage.followed_authors.load_author_seen(conn, ADA)
    assert {p["paperId"] for p in papers} <= seen and len(seen) == 2000
    follow(db, "C2", ADA, AS_OF + DAY + timedelta(minutes=2))
    assert check_authors(db, [s2], AS_OF + 2 * DAY + timedelta(minutes=3), DAY) == 0, "nothing new for C2"
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM author_news WHERE channel_id = 'C2'").fetchone() == (0,)


def test_dozens_of_new_papers_at_once_bring_the_newest_few(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """An author whose list suddenly holds dozens of papers not seen before (a profile merged with another's) made
    every one of them news: the channel's slots went to that author for weeks. Now one ask notes the newest ten,
    a paper without a date after the dated ones."""
    channels(harness, db, "C1")
    first = by(scholar.papers[10], ADA, "Ada Byron")
    scholar.authors = {ADA: {"name": "Ada Byron", "papers": [first]}}
    follow(db, "C1", ADA, AS_OF - DAY)
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY) == 0
    undated = by(scholar.papers[19], ADA, "Ada Byron")
    undated["year"], undated["publicationDate"] = None, None
    merged = [undated]
    for i, paper in enumerate(scholar.papers[20:50]):
        one = by(paper, ADA, "Ada Byron")
        one["year"], one["publicationDate"] = 2020, (date(2020, 1, 1) + timedelta(days=10 * i)).isoformat()
        merged.append(one)
    scholar.authors[ADA]["papers"] += merged
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY) == 10
    with db.connection() as conn:
        titles = {r[0] for r in conn.execute("SELECT p.title FROM author_news n JOIN papers p ON p.id = n.paper_id")}
    assert titles == {p["title"] for p in merged[-10:]}
    assert check_authors(db, [s2], AS_OF + 2 * DAY + timedelta(minutes=2), DAY) == 0, "the others are seen"


@pytest.mark.slow
def test_a_members_paper_that_the_channel_also_follows_goes_out_once(
    harness: Harness, db: Database, tmp_path: Path, scholar: ScholarStandIn
) -> None:
    """A member who let the channel hear of their papers, and whom the channel follows too: their new paper was
    announced ("New from the group"), then posted again at the next slot as a followed author's. Now the
    announcement means the paper waits no more for a slot."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = online(harness, db, scholar)
    first, second = scholar.papers[10:12]
    scholar.authors = {GRAHAM: {"name": "Graham Neubig", "papers": [by(first, GRAHAM, "Graham Neubig")]}}
    harness.command(f"link-author {GRAHAM}", user="U1")
    assert "Done" in harness.command("my-papers on", user="U1")
    assert "Done: this channel follows" in harness.command(f"follow {GRAHAM}", user="U1")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY, embed) == 0
    scholar.authors[GRAHAM]["papers"].append(by(second, GRAHAM, "Graham Neubig"))
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY, embed) == 2, "for both reasons"
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    assert announce_member_papers(db, news_poster(harness.ctx.pacer, lambda team: client), AS_OF + DAY) == 1
    slot = AS_OF + 2 * DAY
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=slot, style="template")
    slot_worker(db, lambda team: client, recommender, clock=lambda: slot).tick()
    said = json.dumps([p.get("blocks") or p["text"] for p in harness.standin.posts])
    assert said.count(second["title"][:40]) == 1, "announced once, not posted again"


def test_a_member_who_shared_their_new_paper_first_is_not_announced_again(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """A member shared the link to their new paper in the channel; the next ask noticed it as new, and PaperPing
    announced it there again ("New from the group"). Now a paper the channel already shared is not announced."""
    channels(harness, db, "C1")
    with db.connection() as conn:
        storage.workspaces.add_channel_member(conn, T, "C1", "U1")
    online(harness, db, scholar)
    first, second, third = scholar.papers[10:13]
    scholar.authors = {GRAHAM: {"name": "Graham Neubig", "papers": [by(first, GRAHAM, "Graham Neubig")]}}
    harness.command(f"link-author {GRAHAM}", user="U1")
    assert "Done" in harness.command("my-papers on", user="U1")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY) == 0
    scholar.authors[GRAHAM]["papers"] += [by(second, GRAHAM, "Graham Neubig"), by(third, GRAHAM, "Graham Neubig")]
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY) == 2
    link = f"https://aclanthology.org/{second['externalIds']['ACL']}"
    ts = "1611000000.000100"
    harness.event(
        {"type": "message", "channel": "C1", "user": "U1", "text": f"Ours: <{link}>", "ts": ts, "event_ts": ts}
    )
    harness.settle()
    with db.connection() as conn:
        shared = conn.execute("SELECT count(*) FROM message_papers WHERE channel_id = 'C1'").fetchone()
    assert shared == (1,), "the share is stored as the same paper"
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    assert announce_member_papers(db, news_poster(harness.ctx.pacer, lambda team: client), AS_OF + DAY) == 1
    (news,) = [p["text"] for p in harness.standin.posts if p["text"].startswith("New from the group")]
    assert third["title"][:30] in news and second["title"][:30] not in news, news


def test_an_author_followed_by_orcid_is_unfollowed_by_it(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """`follow` takes an ORCID, `unfollow` took only a Semantic Scholar id or the name: the same ORCID was answered
    with "This channel does not follow"."""
    channels(harness, db, "C1")
    online(harness, db, scholar)
    first, second = (by(p, ADA, "Ada Byron") for p in scholar.papers[10:12])
    scholar.authors = {ADA: {"name": "Ada Byron", "papers": [first]}}
    s2 = SemanticScholar(scholar.url, min_interval=0)
    follow(db, "C1", ADA, AS_OF - DAY)
    check_authors(db, [s2], AS_OF, DAY)
    scholar.authors[ADA]["papers"].append(second)
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY) == 1  # her author row is stored
    with db.connection() as conn:
        conn.execute("UPDATE authors SET orcid = '0000-0002-1825-0097' WHERE s2_author_id = %s", (ADA,))
    answer = harness.command("unfollow https://orcid.org/0000-0002-1825-0097", user="U2")
    assert "no longer follows Ada Byron" in answer, answer
    with db.connection() as conn:
        assert storage.followed_authors.load_followed(conn, T, "C1") == []


def test_a_paper_by_two_followed_authors_waits_while_either_is_followed(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """A new paper by two authors the channel follows is noted once, under the first whose ask found it.
    Unfollowing that one dropped the paper, though the channel still followed the other. Now it waits under the
    other's name, and goes only when neither is followed."""
    channels(harness, db, "C1")
    earlier = {a: by(scholar.papers[i], a, n) for i, (a, n) in enumerate(((ADA, "Ada"), (GRAHAM, "Graham")), 10)}
    scholar.authors = {a: {"name": "x", "papers": [p]} for a, p in earlier.items()}
    joint = by(scholar.papers[12], ADA, "Ada Byron")
    joint["authors"].insert(1, {"authorId": GRAHAM, "name": "Graham Neubig"})
    for author in (ADA, GRAHAM):
        follow(db, "C1", author, AS_OF - DAY)
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY) == 0, "the first look"
    for author in (ADA, GRAHAM):
        scholar.authors[author]["papers"].append(joint)
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY) == 1, "noted once"
    with db.connection() as conn:
        ((paper, (first,)),) = storage.followed_authors.load_waiting_followed(conn, T, "C1").items()
        storage.followed_authors.unfollow_author(conn, T, "C1", first)
        other = GRAHAM if first == ADA else ADA
        assert storage.followed_authors.load_waiting_followed(conn, T, "C1") == {paper: [other]}
        storage.followed_authors.unfollow_author(conn, T, "C1", other)
        assert storage.followed_authors.load_waiting_followed(conn, T, "C1") == {}


def test_a_members_paper_posted_as_a_pick_is_not_one_of_the_weeks_announcements(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """A member's new paper that the channel, following them too, got as a pick at its slot was marked as
    announced: it counted against the channel's three announcements a week, and a third paper of the group's
    waited a week. Now only announcements count."""
    channels(harness, db, "C1")
    with db.connection() as conn:
        storage.workspaces.add_channel_member(conn, T, "C1", "U1")
    online(harness, db, scholar)
    papers = [by(p, GRAHAM, "Graham Neubig") for p in scholar.papers[10:15]]
    scholar.authors = {GRAHAM: {"name": "Graham Neubig", "papers": papers[:1]}}
    harness.command(f"link-author {GRAHAM}", user="U1")
    assert "Done" in harness.command("my-papers on", user="U1")
    assert "Done: this channel follows" in harness.command(f"follow {GRAHAM}", user="U1")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY) == 0
    scholar.authors[GRAHAM]["papers"] += papers[1:]
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY) == 8, "four papers, two reasons"
    with db.connection() as conn:  # the channel's slot posts the first as a followed author's paper
        picked = min(storage.followed_authors.load_waiting_followed(conn, T, "C1"))
        storage.followed_authors.mark_news_posted(conn, T, "C1", [picked], AS_OF + DAY)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    poster = news_poster(harness.ctx.pacer, lambda team: client)
    assert announce_member_papers(db, poster, AS_OF + DAY + timedelta(hours=1)) == 3, "the three not picked"
    with db.connection() as conn:
        sent = conn.execute("SELECT count(*) FROM author_news WHERE kind = 'member' AND status = 'posted'").fetchone()
    assert sent == (3,), "the pick is not an announcement"
