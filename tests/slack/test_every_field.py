"""A cell-biology lab with only ``paperping run``: its channel shares PubMed, PMC, bioRxiv and journal links
(PLOS, Nature, Science, Cell, a DOI), none of them on arXiv. The stand-ins of OpenAlex, PubMed, bioRxiv and
Crossref (``tests/support/bio_standin.py``) answer as their documentation says; Semantic Scholar knows none of
these papers, and in the second run answers 429 to everything.

The lab's shares are looked up, and the first post is a new paper on the lab's topic (mitophagy) from the new
sources, grounded in the lab's threads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from socialrag.db import Database
from tests.support.bio_standin import BioStandIn
from tests.support.scholar_standin import ScholarStandIn
from tests.support.service_lab import Lab, T, shared_history, slack_users, stop_lab, wait_for
from tests.support.slack_standin import SlackStandIn, SlackState

pytestmark = pytest.mark.slow

# the lab's shares: (the fixture's key, the link a member pasted)
SHARES = [
    ("narendra2008", "https://pubmed.ncbi.nlm.nih.gov/19029340/"),
    ("narendra2010", "https://journals.plos.org/plosbiology/article?id=10.1371/journal.pbio.1000298"),
    ("lazarou2015", "https://www.nature.com/articles/nature14893"),
    ("youle2012", "https://www.science.org/doi/10.1126/science.1219855"),
    ("friedman2011", "https://pmc.ncbi.nlm.nih.gov/articles/PMC3366557/"),
    ("mizushima2010", "https://www.cell.com/cell/fulltext/S0092-8674(10)00076-3"),
    ("matsuda2010", "https://doi.org/10.1083/jcb.200910140"),
    ("mdv2026", "https://www.biorxiv.org/content/10.1101/2026.07.21.605432v2"),
]
MEMBERS = ("U1", "U2", "U3", "U4")
REPLIES = ("the live imaging in figure 3 is lovely", "does this hold in neurons?", "we should try this assay")


def cell_lab_slack(now: float) -> SlackState:
    """#cell-lab with three months of shares, threads and reactions."""
    state = SlackState()
    state.users = slack_users({"U1": "ines", "U2": "kofi", "U3": "yuki", "U4": "lena", "UBOT": "paperping"})
    state.channels = {"C1": {"id": "C1", "name": "cell-lab", "is_channel": True, "members": [*MEMBERS, "UBOT"]}}
    texts = [f"new one from the mitochondria crowd <{url}>" for _, url in SHARES]
    reply = lambda i: REPLIES[i % len(REPLIES)]  # noqa: E731
    messages = shared_history(now, texts, MEMBERS, emoji="eyes", reply=reply, reply_after=900)
    state.messages = {"C1": messages}
    return state


def scalar(db: Database, sql: str, *params: Any) -> Any:
    with db.connection() as conn:
        row = conn.execute(sql, params).fetchone()
    return row[0] if row else None


@pytest.fixture(params=["semantic scholar answers", "semantic scholar answers 429 throughout"])
def cell_lab(request: pytest.FixtureRequest, db: Database, tmp_path: Path) -> Iterator[Lab]:
    slack = SlackStandIn(cell_lab_slack(time.time())).start()
    scholar = ScholarStandIn(rows=[]).start()
    scholar.refuse_all = "429" in request.param
    bio = BioStandIn().start()
    running = Lab(db.conninfo, tmp_path, slack, scholar, extra_env=bio.env())
    running.bio = bio  # type: ignore[attr-defined]
    try:
        yield running
    finally:
        log = stop_lab(running, slack, scholar, bio)
        assert "Traceback" not in log, "paperping run logged no unexpected failure"


def test_a_cell_biology_lab_gets_its_shares_looked_up_and_an_on_topic_post(cell_lab: Lab, db: Database) -> None:
    bio: BioStandIn = cell_lab.bio  # type: ignore[attr-defined]
    assert "Done" in cell_lab.command("C1", "hours 0-24 every-day")
    cell_lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T})
    wait_for(lambda: bool(cell_lab.posts("C1", blocks=True)), 180, "the first recommendation in #cell-lab")

    # every share was looked up, though none is on arXiv or known to Semantic Scholar
    titled = scalar(
        db,
        "SELECT count(DISTINCT p.id) FROM message_papers mp JOIN papers p ON p.id = mp.paper_id "
        "WHERE mp.channel_id = 'C1' AND p.title IS NOT NULL",
    )
    assert titled >= len(SHARES)
    cell = scalar(db, "SELECT p.title FROM papers p JOIN paper_ids i ON i.paper_id = p.id WHERE i.scheme = 'pii'")
    assert cell == "Methods in mammalian autophagy research", "the Cell link's PII found its DOI through Crossref"

    # the post: a new paper on the lab's topic, from the new sources, grounded in the lab's threads
    post = cell_lab.posts("C1", blocks=True)[0]
    shown = json.dumps(post["blocks"])
    assert "archives/C1/p" in shown, "the post links the earlier thread it relates to"
    paper = post["metadata"]["event_payload"]["paper_id"]
    title, source = scalar(db, "SELECT ARRAY[title, metadata_source] FROM papers WHERE id = %s", paper)
    on_topic = {p["title"] for p in bio.papers if p.get("on_topic")}
    assert title in on_topic, f"{title!r} is on the lab's topic"
    assert source in ("biorxiv", "openalex", "pubmed")
    assert bio.asked("/biorxiv/details/biorxiv/20"), "new bioRxiv preprints were asked for"
    categories = {q.get("category", [""])[0] for q in bio.asked("/biorxiv/details/biorxiv/20")}
    assert categories == {"cell_biology"}, "in the category of the preprint the lab shared"
    assert bio.asked("/openalex/works") and bio.asked("/pubmed/esearch.fcgi")
    assert all(q.get("mailto") == ["lab-admin@example.org"] for q in bio.asked("/openalex/"))
    if cell_lab.scholar.refuse_all:
        assert cell_lab.scholar.rate_limited > 0

    # what the channel reads, in words a member can check
    profile = cell_lab.command("C1", "profile")
    assert "mitochondria" in profile.lower() or "mitophagy" in profile.lower() or "parkin" in profile.lower()
    assert "archives/C1/p" in profile, "each topic is shown with example threads"


def test_members_steer_the_sources_and_the_profile_and_start_over(db: Database, tmp_path: Path) -> None:
    """The commands of every field through Slack: the sources' terms, muting a topic, starting over."""
    slack = SlackStandIn(cell_lab_slack(time.time())).start()
    scholar = ScholarStandIn(rows=[]).start()
    bio = BioStandIn().start()
    lab = Lab(db.conninfo, tmp_path, slack, scholar, extra_env=bio.env())
    try:
        assert "Done" in lab.command("C1", "hours 0-24 every-day")
        lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T})
        wait_for(lambda: bool(lab.posts("C1", blocks=True)), 180, "the first recommendation")

        # start-over posts now, so it keeps `now`'s ten minutes after a post; here they have passed
        assert "works again from" in lab.command("C1", "start-over")
        with db.connection() as conn:
            conn.execute("UPDATE channel_settings SET last_post_at = last_post_at - interval '11 minutes'")
        assert "five papers to rate" in lab.command("C1", "start-over")
        wait_for(lambda: len(lab.posts("C1", blocks=True)) >= 2, 120, "the five papers to rate")
        rating = lab.posts("C1", blocks=True)[-1]
        assert rating["blocks"][0]["text"]["text"].startswith("To learn what this channel reads")

        answer = lab.command("C1", "sources biorxiv Cell-Biology neuroscience pubmed mitophagy AND <!channel>")
        assert "new bioRxiv preprints in cell_biology, neuroscience" in answer, answer
        assert "PubMed's newest articles for `mitophagy AND" in answer and "<!channel>" not in answer
        assert "not a biorxiv category" in lab.command("C1", "sources biorxiv cellbio")  # the server's own list
        with db.connection() as conn:
            row = conn.execute("SELECT source_terms, sources_chosen FROM channel_settings WHERE channel_id = 'C1'")
            terms, chosen = row.fetchone()
        assert terms["biorxiv"] == ["cell_biology", "neuroscience"] and chosen is True

        muted = lab.command("C1", "profile mute 1")
        assert muted.startswith("Done: muted"), muted
        # the channel's note (the member's earlier changes' announcement, edited to add this one, or a new one)
        said = lambda: [m.get("text") or "" for m in lab.slack.state.messages.get("C1", [])]  # noqa: E731
        wait_for(lambda: any("muted the topic" in text for text in said()), 30, "the note")
        assert "Steered: muted" in lab.command("C1", "profile")
        # muted by words: papers titled with them stay out too, wherever their vectors fall
        by_words = lab.command("C1", "profile mute PINK1 import")
        assert "any paper whose title says *pink1 import*, won't be posted here" in by_words, by_words
        with db.connection() as conn:
            words = conn.execute("SELECT words FROM topic_steering WHERE 'import' = ANY(words)").fetchone()
        assert words == (["pink1", "import"],)
        lab.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "9.0"})
        wait_for(lambda: "U1" in lab.slack.views, 30, "App Home")
        assert "Topics steered: muted" in json.dumps(lab.slack.views["U1"]), "App Home shows what members steered"

    finally:
        log = stop_lab(lab, slack, scholar, bio)
    assert "Traceback" not in log


def test_a_source_that_trickles_holds_neither_channel(db: Database, tmp_path: Path) -> None:
    """PubMed answers a few bytes a second (each read is quick, the whole answer takes minutes). The first
    request to miss its deadline (three times PAPERPING_HTTP_TIMEOUT) is given up, PubMed is skipped for the
    round by indexing and by every channel's slot, and two labs' first posts come without waiting on it."""
    state = cell_lab_slack(time.time())
    state.channels["C2"] = {**state.channels["C1"], "id": "C2", "name": "mito-club"}
    state.messages["C2"] = [dict(m) for m in state.messages["C1"]]
    slack = SlackStandIn(state).start()
    scholar = ScholarStandIn(rows=[]).start()
    bio = BioStandIn().start()
    bio.trickle_prefix, bio.trickle = "/pubmed/", 1.0  # 16 bytes a second: an efetch answer takes minutes
    env = {**bio.env(), "PAPERPING_HTTP_TIMEOUT": "4"}  # each request has 12 s in all; skipped for 60 s after
    lab = Lab(db.conninfo, tmp_path, slack, scholar, extra_env=env)
    try:
        for channel in ("C1", "C2"):
            assert "Done" in lab.command(channel, "hours 0-24 every-day")
        started = time.monotonic()
        for channel in ("C1", "C2"):
            lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": channel, "team": T})
        posted: dict[str, float] = {}

        def both_posted() -> bool:
            for channel in ("C1", "C2"):
                if channel not in posted and lab.posts(channel, blocks=True):
                    posted[channel] = time.monotonic() - started
            return len(posted) == 2

        wait_for(both_posted, 240, "the first post in both channels")
        assert abs(posted["C1"] - posted["C2"]) < 60, f"neither channel waited on PubMed's trickle: {posted}"
        asked = len(bio.asked("/pubmed/"))
        assert asked <= 6, f"PubMed was skipped once it missed a deadline, not asked again and again ({asked})"
        status = lab.command("C2", "status")
        assert "PubMed has failed" in status and "skipped until" in status, status
    finally:
        log = stop_lab(lab, slack, scholar, bio)
    assert "Traceback" not in log
    assert "pubmed skipped for 60 s" in log


def test_a_new_channel_with_a_focus_and_no_shares_gets_a_post_while_semantic_scholar_refuses(
    db: Database, tmp_path: Path
) -> None:
    """A new biology channel: nothing shared yet, a focus set by a member, Semantic Scholar answering 429 to
    everything and arXiv finding nothing. OpenAlex and PubMed serve its focus (nobody knows its field yet, and the
    usual sources found nothing), and its first post is a paper on the focus from one of them."""
    state = SlackState()
    state.users = slack_users({"U1": "ines", "U2": "kofi", "UBOT": "paperping"})
    state.channels = {"C9": {"id": "C9", "name": "mito-new", "is_channel": True, "members": ["U1", "U2", "UBOT"]}}
    state.messages = {"C9": []}
    slack = SlackStandIn(state).start()
    scholar = ScholarStandIn(rows=[]).start()
    scholar.refuse_all = True
    bio = BioStandIn().start()
    lab = Lab(db.conninfo, tmp_path, slack, scholar, extra_env=bio.env())
    try:
        assert "Done" in lab.command("C9", "hours 0-24 every-day")
        focus = lab.command("C9", "focus mitophagy PINK1 Parkin mitochondria")
        assert focus.startswith("Done"), focus
        lab.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C9", "team": T})
        wait_for(lambda: bool(lab.posts("C9", blocks=True)), 180, "the first post in the new channel")
        post = lab.posts("C9", blocks=True)[0]
        payload = post["metadata"]["event_payload"]
        ids = payload.get("paper_ids") or [payload["paper_id"]]
        with db.connection() as conn:
            rows = conn.execute("SELECT title, metadata_source FROM papers WHERE id = ANY(%s)", (ids,)).fetchall()
        on_topic = {p["title"] for p in bio.papers if p.get("on_topic")}
        assert rows and all(source in ("openalex", "pubmed") for _, source in rows), rows
        assert rows[0][0] in on_topic, f"{rows[0][0]!r} is on the channel's focus"
        assert bio.asked("/openalex/works") and scholar.rate_limited > 0
    finally:
        log = stop_lab(lab, slack, scholar, bio)
    assert "Traceback" not in log
