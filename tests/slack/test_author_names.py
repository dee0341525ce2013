"""Hostile author names, from a Semantic Scholar profile its author edits and an ORCID record anyone writes, through
the real bolt app and slack_sdk against the Slack stand-in: what members read of them (`follow`'s replies and
announcement, `following`, App Home's list, a post's authors and its why) carries their words only, and the
name PaperPing keeps is the cleaned one. A NUL byte in a profile's name used to fail `follow` outright."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import check_authors
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from tests.slack.test_authors import DAY, by, embed, online
from tests.support.harness import Harness, T
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab
from tests.support.scholar_standin import ScholarStandIn
from tests.support.slots import slot_worker
from tests.unit.test_author_names import HOSTILE, shows_nothing_hidden

ADA, GRACE, OTHER = "9001", "9004", "9005"
ADA_PROFILE = "Ada\x00 Byron <!channel>\u202e\U000e0041"  # a NUL byte, a broadcast, an override, a tag character
ORCID = "0000-0001-5109-3700"


@pytest.fixture
def scholar() -> Iterator[ScholarStandIn]:
    standin = ScholarStandIn().start()
    yield standin
    standin.stop()


def said(harness: Harness, since: int = 0) -> str:
    """All PaperPing wrote in the channel and in replies, as Slack received it."""
    posts = harness.standin.posts[since:]
    return json.dumps([p.get("text") for p in posts] + [p.get("blocks") for p in posts]) + json.dumps(
        [r.get("text") for r in harness.standin.responses]
    )


def test_following_authors_with_hostile_names_shows_and_keeps_their_words_only(
    harness: Harness, db: Database, scholar: ScholarStandIn
) -> None:
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    online(harness, db, scholar)
    scholar.authors = {
        ADA: {"name": ADA_PROFILE, "affiliations": []},
        GRACE: {"name": "Grace Hopper", "affiliations": ["<!here> Navy\u2066", "\x1b]52;c;ZXZpbA==\x07Yale"]},
        OTHER: {"name": "Grace Hopper <@U1>", "affiliations": ["<https://evil.example|Harvard>"]},
        "<!everyone>": {"name": "Grace Hopper", "affiliations": []},  # not an author id: never offered
    }
    done = harness.command(f"follow {ADA}")
    assert "Done: this channel follows Ada Byron." in done, done
    asked = harness.command("follow Grace Hopper")  # two authors (and an id that is none): it asks which
    assert f"`/paperping follow {GRACE}` — Grace Hopper, Navy" in asked, asked
    assert f"`/paperping follow {OTHER}` — Grace Hopper, Harvard" in asked, asked
    # the name on an ORCID record, looked for on Semantic Scholar, cleaned before it is
    scholar.orcid_names[ORCID] = ("<@U1> Grace\u200b", "Hopper\x1b\x07")
    assert "Several authors are called Grace Hopper;" in harness.command(f"follow https://orcid.org/{ORCID}")
    assert "Done: this channel follows Grace Hopper." in harness.command(f"follow {GRACE}")
    following = harness.command("following")
    assert "|Ada Byron>" in following and "|Grace Hopper>" in following, following
    with db.connection() as conn:
        kept = [f.name for f in storage.followed_authors.load_followed(conn, T, "C1")]
    assert kept == ["Ada Byron", "Grace Hopper"]
    harness.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "1.0"})
    harness.settle()  # the Home is built off the listener pool
    home = json.dumps(harness.standin.views["U1"])
    assert "Authors followed: Ada Byron, Grace Hopper" in home, home
    everything = said(harness) + home
    assert "Ada Byron" in everything and "<!channel>" not in everything and "<!everyone>" not in everything
    assert "<@U1>" not in everything and "evil.example" not in everything and "\\u001b" not in everything
    assert not any(mark in everything for mark in ("\\u202e", "\\u2066", "\\u200b", "\\udb40", "\\u0000"))


@pytest.mark.slow
def test_a_post_of_a_paper_with_hostile_author_names_shows_their_words_only(
    harness: Harness, db: Database, tmp_path: Path, scholar: ScholarStandIn
) -> None:
    """A followed author's new paper whose authors are named with markup, invisible and control characters: the
    post names them by their words, in its authors line and in why it was picked."""
    lab = build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = online(harness, db, scholar)
    outside = [p for p in scholar.papers if p["externalIds"]["ACL"] not in lab["ids"] and p.get("abstract")]
    profile = "Ada\x9b Byron\U000e0041"  # a C1 escape and a tag character: no markup, nothing the old cleaning saw
    scholar.authors = {ADA: {"name": profile, "papers": [by(outside[0], ADA, profile)]}}
    assert "Done: this channel follows Ada Byron." in harness.command(f"follow {ADA}")
    s2 = SemanticScholar(scholar.url, min_interval=0)
    assert check_authors(db, [s2], AS_OF, DAY, embed) == 0
    new: dict[str, Any] = copy.deepcopy(by(outside[1], ADA, profile))
    new["authors"][1:] = [{"authorId": str(20 + i), "name": n} for i, n in enumerate(HOSTILE)]
    scholar.authors[ADA]["papers"].append(new)
    assert check_authors(db, [s2], AS_OF + DAY + timedelta(minutes=1), DAY, embed) == 1
    slot = AS_OF + 2 * DAY
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=slot, style="template")
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    before = len(harness.standin.posts)
    assert slot_worker(db, lambda team: client, recommender, clock=lambda: slot).tick() == 1
    (post,) = [p for p in harness.standin.posts[before:] if p.get("metadata")]
    text = json.dumps(post["blocks"]) + json.dumps(post["text"])
    assert "Ada Byron, Ada Byron" in text and "It is by Ada Byron, *whom this channel follows*" in text, text
    assert "\\u009b" not in text and "\\udb40" not in text and "<!" not in text and "evil.example" not in text
    shown = [post["text"], *(json.dumps(b, ensure_ascii=False) for b in post["blocks"])]
    assert all(shows_nothing_hidden(line) for part in shown for line in part.split("\n")), shown
