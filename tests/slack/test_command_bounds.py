"""Bounds of the commands that read for one member (`ask`) and of what the channel's commands repeat back
(`sources`), through the real bolt app against the Slack stand-in."""

from __future__ import annotations

from pathlib import Path

import pytest
from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel
from tests.slack.test_group_memory import ask, lab
from tests.support.harness import Harness, T

pytestmark = pytest.mark.slow


def test_an_ask_in_a_channel_reads_that_channels_member_list_only(db: Database, tmp_path: Path) -> None:
    """`/paperping ask` in #nlp-lab answers about #nlp-lab alone: the member lists of the asker's other channels
    (50 at most, each of up to 100 pages) are not read for it."""
    harness, standin = lab(db, tmp_path)
    try:
        with db.connection() as conn:
            for n in range(2, 8):  # six more channels of U2's, their lists not read for days
                standin.state.channels[f"C{n}"] = {"id": f"C{n}", "name": f"lab-{n}", "members": ["U2", "UBOT"]}
                storage.workspaces.upsert_channel(conn, Channel(T, f"C{n}", f"lab-{n}"))
                storage.settings.upsert_channel_setting(conn, T, f"C{n}", active=True)
                storage.workspaces.add_channel_member(conn, T, f"C{n}", "U2")
            conn.execute("UPDATE channels SET members_read_at = NULL")
        before = len(standin.calls_to("conversations.members"))
        assert "TaBERT" in ask(harness, "Did anyone share the TaBERT paper?")
        read = [c.params.get("channel") for c in standin.calls_to("conversations.members")[before:]]
        assert read == ["C1"], read
    finally:
        harness.stop()
        standin.stop()


def test_a_pubmed_query_is_repeated_in_the_channel_as_text_that_ends_no_code_span(harness: Harness) -> None:
    """The members' PubMed query is data: repeated in the channel's announcement and in `sources`, a backtick of
    it cannot close the code span it is shown in and turn the rest of the line into markup."""
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    said = harness.command("sources pubmed mito`phagy *all* <!channel> `x")
    announced = [p["text"] for p in harness.standin.posts if "looks for papers" in p["text"]]
    assert announced and "mitophagy *all* x" in announced[-1], announced
    for text in (said, announced[-1], harness.command("sources")):
        assert text.count("`") % 2 == 0 and "<!channel>" not in text, text
    refused = harness.command("sources arx`iv")
    assert "`arxiv` is neither a source" in refused, refused


def test_fulltext_off_in_a_channel_paperping_left_says_nothing_there(harness: Harness, db: Database) -> None:
    """`fulltext off` works in a channel PaperPing has left (it only stops something), as `zotero off` does; like
    `zotero off`, it then neither posts there nor edits PaperPing's earlier announcement of the member's there."""
    assert harness.command("style tldr").startswith("Done")  # announced in #nlp-lab while PaperPing is in it
    assert [p for p in harness.standin.posts if "`tldr` style" in p["text"]]
    channel = harness.standin.state.channels["C1"]
    channel["members"] = [m for m in channel["members"] if m != "UBOT"]  # PaperPing is removed from the channel
    calls = len(harness.standin.calls)
    assert harness.command("fulltext off").startswith("Done: I won't read the full text")
    with db.connection() as conn:
        assert storage.settings.load_channel_settings(conn, T, "C1").fulltext is False
    acted = [c.method for c in harness.standin.calls[calls:] if c.method in ("chat.postMessage", "chat.update")]
    assert acted == [], acted


def test_a_made_up_arxiv_category_is_answered_with_the_ones_paperping_searches(harness: Harness, db: Database) -> None:
    """arXiv's search matches its own categories only: `sources arxiv cs.FOO` was stored and announced, and the
    channel's arXiv source then found nothing. Now it is answered with the cs categories, nothing stored or
    announced; real ones are taken in any case, written as arXiv writes them."""
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    posts = len(harness.standin.posts)
    for made_up in ("cs.FOO", "cs", "cs.CL cs.foo"):
        refused = harness.command(f"sources arxiv {made_up}")
        assert "is not an arXiv category" in refused and "cs.AI, cs.AR, cs.CC" in refused, refused
        assert "arxiv.org/category_taxonomy" in refused and "Candidates" not in refused, refused
    refused = harness.command("sources arxiv cs.CL hello")
    assert refused.startswith("`hello` is not an arXiv category. arXiv's are an archive and a subject"), refused
    assert "astro-ph, cond-mat, cs, econ" in refused and "Candidates" not in refused, refused
    with db.connection() as conn:
        assert storage.settings.load_channel_settings(conn, T, "C1").arxiv_categories == []
    assert harness.standin.posts[posts:] == [], "nothing announced"
    said = harness.command("sources arxiv CS.cl q-bio.gn")
    assert "new arXiv papers in cs.CL, q-bio.GN" in said, said
    with db.connection() as conn:
        assert storage.settings.load_channel_settings(conn, T, "C1").arxiv_categories == ["cs.CL", "q-bio.GN"]
