"""The authors a channel follows and the group's own papers, through the real bolt app and slack_sdk against the
Slack stand-in and a stand-in of Semantic Scholar's author endpoints: `follow` by name asks which when several
authors match, by link follows; a followed author's new paper is posted at the channel's next slot with its
signal, whatever the ranking; a member's new paper is announced only once they said `my-papers on`."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from slack_sdk import WebClient

from bot.delivery.author_posts import news_poster
from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import check_authors, embed_papers
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.recommender import announce_member_papers
from socialrag.recommender.serve.service import Recommender
from tests.support.harness import Harness, T
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab
from tests.support.scholar_standin import ScholarStandIn, source_urls
from tests.support.slots import slot_worker

DAY = timedelta(days=1)
ADA, OTHER_ADA, GRAHAM = "9001", "9002", "9003"


@pytest.fixture
def scholar() -> Iterator[ScholarStandIn]:
    standin = ScholarStandIn().start()
    yield standin
    standin.stop()


def by(paper: dict[str, Any], author_id: str, name: str) -> dict[str, Any]:
    """A stand-in paper as a new one of this author's (this January's)."""
    new = copy.deepcopy(paper)
    new["authors"] = [{"authorId": author_id, "name": name}, {"authorId": "1", "name": "A. Coauthor"}]
    new["year"], new["publicationDate"] = 2021, "2021-01-10"
    return new


def embed(conn: psycopg.Connection, ids: list[int]) -> int:
    return embed_papers(conn, CachedEmbedder(), ids)


def online(harness: Harness, db: Database, scholar: ScholarStandIn) -> Recommender:
    settings = harness.settings.with_changes(
        offline=False,
        **source_urls(scholar.url),
        orcid_api_url=scholar.url + "orcid/",
    )
    recommender = Recommender(settings, db, embedder=CachedEmbedder())
    harness.ctx.recommender = recommender
    return recommender


@pytest.mark.slow
def test_a_followed_authors_new_paper_is_posted_with_its_signal(
    harness: Harness, db: Database, tmp_path: Path, scholar: ScholarStandIn
) -> None:
    lab = build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = online(harness, db, scholar)
    outside = [p for p in scholar.papers if p["externalIds"]["ACL"] not in lab["ids"] and p.get("abstract")]
    old, new = outside[0], outside[1]  # papers the lab's base does not hold yet
    scholar.authors = {
        ADA: {"name": "Ada Byron", "paperCount": 12, "affiliations": ["Lab A"], "papers": [by(old, ADA, "Ada Byron")]},
        OTHER_ADA: {"name": "Ada Byron", "paperCount": 3, "affiliations": ["Lab B"], "papers": []},
    }
    asked = harness.command("follow Ada Byron")
    assert "Several authors are called Ada Byron" in asked and f"`/paperping follow {ADA}`" in asked, asked
    done = harness.command(f"follow https://www.semanticscholar.org/author/Ada-Byron/{ADA}")
    assert "Done: this channel follows Ada Byron" in done, done
    assert "Ada Byron" in harness.command("following")
    assert any("asked PaperPing to follow Ada Byron" in p["text"] for p in harness.standin.posts), "announced"
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY, embed) == 0, "the first look: what she wrote is not news"
    scholar.authors[ADA]["papers"].append(by(new, ADA, "Ada Byron"))
    later = AS_OF + DAY + timedelta(minutes=1)
    assert check_authors(db, [s2], later, DAY, embed) == 1
    assert check_authors(db, [s2], later, DAY, embed) == 0, "asked at most once a day"
    # the channel's next slot posts it, with why, whatever the ranking would have put first
    slot = AS_OF + 2 * DAY
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=slot, style="template")
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    assert slot_worker(db, lambda team: client, recommender, clock=lambda: slot).tick() == 1
    (post,) = [p for p in harness.standin.posts if p.get("metadata")]
    text = json.dumps(post["blocks"])
    assert new["title"][:40] in text and "It is by Ada Byron, *whom this channel follows*" in text, text
    assert text.count("this channel follows") == 1, "the post says once that a followed author drove it"
    with db.connection() as conn:
        status = conn.execute("SELECT status FROM author_news WHERE kind = 'followed'").fetchone()
    assert status == ("posted",), "it waits no more"
    assert "no longer follows Ada Byron" in harness.command(f"unfollow {ADA}")
    # an ORCID resolves when a stored paper listed the author with it and their Semantic Scholar id
    with db.connection() as conn:
        cur = conn.execute("UPDATE authors SET orcid = '0000-0002-1825-0097' WHERE s2_author_id = %s", (ADA,))
        assert cur.rowcount == 1, "her new paper's author row, stored when it was looked up"
    assert "Done: this channel follows Ada Byron" in harness.command("follow https://orcid.org/0000-0002-1825-0097")
    # any other: the name on the ORCID record, looked for on Semantic Scholar (two Ada Byrons: it asks which)
    scholar.orcid_names["0000-0001-5109-3700"] = ("Ada", "Byron")
    assert "Several authors are called Ada Byron" in harness.command("follow 0000-0001-5109-3700")
    assert "ORCID has no public name" in harness.command("follow 0000-0003-1415-9269")


@pytest.mark.slow
def test_a_members_new_paper_is_announced_only_when_they_opted_in(
    harness: Harness, db: Database, tmp_path: Path, scholar: ScholarStandIn
) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    online(harness, db, scholar)
    first, second, third = scholar.papers[10:13]
    scholar.authors = {GRAHAM: {"name": "Graham Neubig", "papers": [by(first, GRAHAM, "Graham Neubig")]}}
    assert "link your Semantic Scholar author profile" in harness.command("my-papers on", user="U1")
    harness.command(f"link-author {GRAHAM}", user="U1")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    send = news_poster(harness.ctx.pacer, lambda team: client)
    # not opted in: a new paper of theirs is not even looked for, nor announced
    scholar.authors[GRAHAM]["papers"].append(by(second, GRAHAM, "Graham Neubig"))
    assert check_authors(db, [s2], AS_OF, DAY, embed) == 0
    assert announce_member_papers(db, send, AS_OF) == 0
    assert "Done" in harness.command("my-papers on", user="U1")
    assert check_authors(db, [s2], AS_OF, DAY, embed) == 0, "the first look at their papers: nothing is new"
    scholar.authors[GRAHAM]["papers"].append(by(third, GRAHAM, "Graham Neubig"))
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY, embed) == 1
    assert announce_member_papers(db, send, AS_OF + DAY) == 1
    assert announce_member_papers(db, send, AS_OF + DAY) == 0, "once"
    (news,) = [p for p in harness.standin.posts if p["text"].startswith("New from the group")]
    assert news["text"] == (
        f"New from the group: <https://aclanthology.org/{third['externalIds']['ACL']}|{third['title']}> by <@U1> "
        "and co-authors."
    )


def test_one_members_burst_of_slow_commands_never_makes_another_wait(harness: Harness, db: Database) -> None:
    """Slow commands (`follow`, `profile`, ...) run in a bounded pool. One member holds at most two places in it:
    with two of U2's requests still under way, U2's third is refused with a sentence of its own, while U3's
    `profile` is answered. A channel follows at most thirty authors, and the refusal announces nothing."""
    import threading

    from bot.commands.authors import MAX_FOLLOWED
    from bot.listeners.commands import MEMBER_BUSY
    from socialrag.models import Channel

    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "papers"))
    harness.ctx.channels.activate(T, "C1")
    release = threading.Event()
    for _ in range(2):  # two of U2's slow requests, still under way
        assert harness.ctx.slow.submit(lambda: release.wait(10), owner=f"{T}:U2")
    try:
        assert harness.command("profile", user="U2") == MEMBER_BUSY
        assert harness.command("follow Ada Lovelace", user="U2") == MEMBER_BUSY
        assert "busy" not in harness.command("profile", user="U3").lower()
    finally:
        release.set()
    with db.connection() as conn:
        for k in range(MAX_FOLLOWED):
            storage.followed_authors.follow_author(conn, T, "C1", f"9{k:04d}", f"Author {k}", "U3", AS_OF)
    before = len(harness.standin.posts)
    answer = harness.command("follow https://www.semanticscholar.org/author/1741101", user="U3", timeout=10)
    assert "as many as a channel may" in answer, answer
    assert len(harness.standin.posts) == before, "nothing announced"


def test_a_refusal_from_semantic_scholar_is_said_without_its_words(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """`follow` quoted Semantic Scholar's error text to the member: a refusal's body, whatever a gateway in front of
    it writes there, reached Slack. Now the member reads that Semantic Scholar did not answer, and the log keeps
    the rest for the admin."""
    from bot.commands.authors import S2_SILENT
    from socialrag.models import Channel

    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "papers"))
    harness.ctx.channels.activate(T, "C1")
    online(harness, db, scholar)
    scholar.author_refusal = (403, {"message": "Forbidden: key s2k-****9F2A is not allowed via edge-pop-internal-3"})
    for asked in ("follow Ada Byron", f"follow https://www.semanticscholar.org/author/Ada-Byron/{ADA}"):
        answer = harness.command(asked, timeout=10)
        assert answer == S2_SILENT, answer
    assert not any("edge-pop" in p["text"] or "s2k-" in p["text"] for p in harness.standin.posts)


@pytest.mark.slow
def test_my_papers_is_a_channel_setting_bounded_and_stopped_by_pause_and_leaving(
    harness: Harness, db: Database, tmp_path: Path, scholar: ScholarStandIn
) -> None:
    """`my-papers on` makes the whole channel hear of someone's papers, so it obeys the settings rule (guests,
    locks), the author must be the member (the profile's name agrees with theirs on Slack), at most three such
    papers a week go to one channel, and none while the channel is paused or after the member left it."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    online(harness, db, scholar)
    papers = scholar.papers[20:27]
    scholar.authors = {GRAHAM: {"name": "Graham Neubig", "papers": [by(papers[0], GRAHAM, "Graham Neubig")]}}
    scholar.authors[ADA] = {"name": "Ada Byron", "papers": []}
    # a guest cannot make the channel hear of anything; a member cannot claim someone else's profile
    harness.command(f"link-author {GRAHAM}", user="UG1")
    assert "Guests can't change" in harness.command("my-papers on", user="UG1")
    harness.command(f"link-author {GRAHAM}", user="U2")  # ben is not Graham Neubig
    refused = harness.command("my-papers on", user="U2")
    assert "is Graham Neubig on Semantic Scholar, which is not the name on your Slack profile" in refused, refused
    harness.command("link-author 99999999", user="U3")
    assert "knows no author" in harness.command("my-papers on", user="U3")
    # in a locked channel, only the inviter and admins change what the channel gets
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", locked=True, invited_by="U4")
    harness.command(f"link-author {GRAHAM}", user="U1")
    assert "settings here are locked" in harness.command("my-papers on", user="U1")
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", locked=False)
    assert "3 a week at most" in harness.command("my-papers on", user="U1")
    with db.connection() as conn:
        assert storage.settings.load_member_setting(conn, T, "U2").my_papers_channels == []
    # linking another profile afterwards stops the announcements until `my-papers on` checks it: nobody's papers
    # are announced as a member's without the name check
    relinked = harness.command(f"link-author {ADA}", user="U1")
    assert "no longer announced in <#C1>" in relinked and "<@" not in relinked, relinked
    with db.connection() as conn:
        assert storage.settings.load_member_setting(conn, T, "U1").my_papers_channels == []
    assert "not the name on your Slack profile" in harness.command("my-papers on", user="U1")
    harness.command(f"link-author {GRAHAM}", user="U1")
    assert "3 a week at most" in harness.command("my-papers on", user="U1")
    assert "no longer announced" not in harness.command(f"link-author {GRAHAM}", user="U1"), "the same profile again"

    s2 = SemanticScholar(scholar.url, min_interval=0)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    send = news_poster(harness.ctx.pacer, lambda team: client)
    assert check_authors(db, [s2], AS_OF, DAY, embed) == 0, "the first look: nothing is new"
    scholar.authors[GRAHAM]["papers"] += [by(p, GRAHAM, "Graham Neubig") for p in papers[1:6]]
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY, embed) == 5

    def announced() -> int:
        return sum(p["text"].startswith("New from the group") for p in harness.standin.posts)

    # paused: nothing goes out, and the papers wait
    assert "paused" in harness.command("pause", user="U1").lower()
    assert announce_member_papers(db, send, AS_OF + DAY) == 0
    harness.command("resume", user="U1")
    # at most three in seven days, the rest the week after
    assert announce_member_papers(db, send, AS_OF + DAY) == 3
    assert announce_member_papers(db, send, AS_OF + 2 * DAY) == 0
    assert announced() == 3
    # the member left the channel: their papers are no longer announced there
    harness.event({"type": "member_left_channel", "user": "U1", "channel": "C1", "team": T})
    assert announce_member_papers(db, send, AS_OF + 9 * DAY) == 0
    assert announced() == 3
    # `off` is theirs to say, always
    assert "won't hear of your new papers" in harness.command("my-papers off", user="U1")


@pytest.mark.slow
@pytest.mark.parametrize("address", ["!channel", "mailto:all@lab.example"])
def test_a_sources_odd_paper_address_notifies_nobody(
    harness: Harness, db: Database, tmp_path: Path, scholar: ScholarStandIn, address: str
) -> None:
    """A source's record with no DOI, arXiv or ACL id is linked to the address the source gave. One that is not a
    web address (``!channel``, ``@U2``) became Slack markup of its own: ``<!channel|title>`` notified everyone."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    online(harness, db, scholar)
    first, second = scholar.papers[10:12]
    scholar.authors = {GRAHAM: {"name": "Graham Neubig", "papers": [by(first, GRAHAM, "Graham Neubig")]}}
    harness.command(f"link-author {GRAHAM}", user="U1")
    assert "Done" in harness.command("my-papers on", user="U1")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY, embed) == 0
    odd = by(second, GRAHAM, "Graham Neubig")
    odd["externalIds"], odd["url"] = {}, address
    scholar.authors[GRAHAM]["papers"].append(odd)
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY, embed) == 1
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    assert announce_member_papers(db, news_poster(harness.ctx.pacer, lambda team: client), AS_OF + DAY) == 1
    (news,) = [p for p in harness.standin.posts if p["text"].startswith("New from the group")]
    said = news["text"] + json.dumps(news["blocks"])
    assert f"<{address}" not in said and "mailto:" not in said, said
    assert odd["title"][:30] in news["text"] and "by <@U1>" in news["text"], "the title, unlinked"


@pytest.mark.slow
def test_a_followed_authors_paper_with_no_hook_is_in_the_weekly_digest(
    harness: Harness, db: Database, tmp_path: Path, scholar: ScholarStandIn
) -> None:
    """In a channel that gets a weekly digest, a followed author's two new papers, which none of the group's threads
    or venues relates to: the first hung on the author, and the second, whose only hook was taken, was left for
    last and cut once five papers with a hook filled the digest. It never came, whatever the ranking. Now a
    followed author's papers are in the digest first, with a hook or without one."""
    lab = build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = online(harness, db, scholar)
    outside = [p for p in scholar.papers if p["externalIds"]["ACL"] not in lab["ids"] and p.get("abstract")]
    unrelated = copy.deepcopy(outside[1])
    unrelated["title"] = "Sourdough starters kept at four temperatures over a winter"
    unrelated["abstract"] = "We fed rye and wheat starters daily and measured their rise, acidity and smell."
    unrelated["venue"] = "Quarterly Notes of Home Baking"
    scholar.authors = {ADA: {"name": "Ada Byron", "papers": []}}
    assert "Done: this channel follows Ada Byron" in harness.command(f"follow {ADA}")
    assert "digest of 5 papers" in harness.command("frequency weekly-digest 5")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY, embed) == 0
    second = copy.deepcopy(outside[2])
    second["title"] = "Rye breads proofed overnight in a cold room"
    second["abstract"] = "Loaves proofed for twelve hours at six degrees rose less and tasted more sour."
    second["venue"] = "Quarterly Notes of Home Baking"
    scholar.authors[ADA]["papers"] += [by(unrelated, ADA, "Ada Byron"), by(second, ADA, "Ada Byron")]
    later = AS_OF + DAY + timedelta(minutes=1)
    assert check_authors(db, [s2], later, DAY, embed) == 2
    slot = AS_OF + 2 * DAY
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=slot, weekdays_only=False)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    assert slot_worker(db, lambda team: client, recommender, clock=lambda: slot).tick() == 1
    (post,) = [p for p in harness.standin.posts if p.get("metadata")]
    rows = [b for b in post["blocks"] if b["type"] == "actions"]
    assert len(rows) == 5, "a digest of five"
    shown = json.dumps(post["blocks"])
    assert "Sourdough starters" in shown and "Rye breads proofed" in shown, shown[:3000]


@pytest.mark.slow
def test_my_papers_on_asks_semantic_scholar_a_bounded_number_of_times_an_hour(
    harness: Harness, db: Database, tmp_path: Path, scholar: ScholarStandIn
) -> None:
    """Each `my-papers on` asked Semantic Scholar (whose pace every workspace of the service shares) and Slack about
    the linked profile, with no bound: a member typing it again and again spent the service's lookups. Now ten
    checks an hour a member; past them they are told when it works again, and nothing is asked."""
    from bot.commands.authors import CHECKS_PER_HOUR

    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    online(harness, db, scholar)
    scholar.authors = {ADA: {"name": "Ada Byron", "papers": []}}
    harness.command(f"link-author {ADA}", user="U2")
    for _ in range(CHECKS_PER_HOUR):
        assert "not the name on your Slack profile" in harness.command("my-papers on", user="U2", timeout=30)
    asked = len([r for r in scholar.requests if "/author/" in r[1]])
    assert asked >= CHECKS_PER_HOUR
    said = harness.command("my-papers on", user="U2", timeout=30)
    assert said.startswith(f"I checked your author profile {CHECKS_PER_HOUR} times this hour"), said
    assert len([r for r in scholar.requests if "/author/" in r[1]]) == asked, "nothing more was asked"
    # another member has their own count
    harness.command(f"link-author {ADA}", user="U3")
    assert "not the name on your Slack profile" in harness.command("my-papers on", user="U3", timeout=30)


def test_follow_asks_semantic_scholar_a_bounded_number_of_times_an_hour(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    """Each `follow NAME` asked Semantic Scholar, with only the slow requests' two at a time to bound it: one
    member could follow and unfollow all day on the pace every workspace shares. Now thirty lookups an hour a
    member (a channel's whole list at one sitting); past them nothing is asked."""
    from datetime import UTC, datetime

    from bot.commands.authors import FOLLOWS_PER_HOUR

    assert "PaperPing here" in harness.command("status")  # the channel is known
    harness.ctx.channels.activate(T, "C1", AS_OF)
    online(harness, db, scholar)
    scholar.authors = {ADA: {"name": "Ada Byron", "papers": []}}
    assert "Done: this channel follows" in harness.command(f"follow {ADA}", user="U2", timeout=30)
    with db.connection() as conn:  # the rest of the hour's lookups, spent as `follow` spends them
        now = datetime.now(UTC)
        for _ in range(FOLLOWS_PER_HOUR - 1):
            assert storage.usage.take_member_hourly(conn, T, "U2", "author lookups", now, FOLLOWS_PER_HOUR)
    asked = len(scholar.requests)
    said = harness.command(f"follow {GRAHAM}", user="U2", timeout=30)
    assert said.startswith(f"I looked up {FOLLOWS_PER_HOUR} authors for you this hour"), said
    assert len(scholar.requests) == asked, "nothing was asked"
    scholar.authors[GRAHAM] = {"name": "Graham Neubig", "papers": []}
    assert "Done: this channel follows" in harness.command(f"follow {GRAHAM}", user="U3", timeout=30), "U3's own"
