"""Paper metadata and model output are data: whatever markup they carry, a post notifies and links no one.

The lab's catalog is poisoned (titles, abstracts, author names, affiliations and venues carry member tokens,
Slack mentions, broadcasts, channel links, link markup and bare addresses), and a recommendation is made in
every style, the `llm` one with a stand-in model that tries to add a mention, a broadcast and a link.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.views.post_blocks import build_blocks, build_fallback_text
from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.models import STYLES, Style
from socialrag.recommender.serve.service import Recommender
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab
from tests.support.openai_standin import OpenAIStandIn

POISON = "{@U0ADMIN1} <@U0ADMIN2> <!channel> <!here> <!everyone> <!subteam^S0TEAM|@lab> <#C0OTHER|general> @here"
LINKS = "<https://evil.example.com/x|click here> https://evil.example.com/y evil.example.com/z"
FORBIDDEN = (
    "U0ADMIN1",
    "<@U0ADMIN2>",
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<!subteam",
    "<#C0OTHER",
    "evil.example",
    "S0TEAM",
)


def poison(db: Database) -> None:
    """Every paper's title, abstract, authors, affiliations and venue carry markup."""
    with db.connection() as conn:
        conn.execute(
            "UPDATE papers SET title = title || %(p)s, abstract = %(p)s || ' ' || %(l)s || ' ' || abstract",
            {"p": " " + POISON, "l": LINKS},
        )
        conn.execute("UPDATE authors SET name = name || ' <!channel> {@U0ADMIN1}'")
        conn.execute(
            "UPDATE paper_authors SET affiliations = ARRAY['Carnegie Mellon University <!here> evil.example.com']"
        )
        conn.execute("UPDATE venues SET name = name || ' <https://evil.example.com|venue> <!everyone>'")


def hostile_model(prompt: str) -> str:
    """A model that obeys the poisoned abstract and adds a mention, a broadcast and a link."""
    return "This paper is great <!channel> {@U0ADMIN1} <@U0ADMIN2>, read it at https://evil.example.com/x."


@pytest.fixture
def poisoned(db: Database, tmp_path: Path) -> Iterator[dict[str, Any]]:
    lab = build_lab(db, tmp_path, CachedEmbedder())
    poison(db)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, "T0LAB", "C1", sources=["catalog"])
    model = OpenAIStandIn(hostile_model)
    yield {"lab": lab, "model": model}
    model.stop()


@pytest.mark.parametrize("style", STYLES)
def test_no_style_lets_markup_through(db: Database, poisoned: dict[str, Any], style: Style) -> None:
    model: OpenAIStandIn = poisoned["model"]
    settings = Settings(home=Path("."), offline=False, openai_base_url=model.base_url)
    with Recommender(settings, db, embedder=CachedEmbedder()) as recommender:
        rec = recommender.recommend("T0LAB", "C1", at=AS_OF, style=style)
    draft = rec.draft
    assert draft is not None
    blocks = build_blocks(draft)
    posted = json.dumps(blocks) + build_fallback_text(draft)
    for bad in FORBIDDEN:
        assert bad not in posted, (style, bad, posted)
    assert "<@" not in posted or all(f"<@{m}>" in posted for m in draft.mentions)
    signal_members = {m for s in draft.signals for m in s.members}
    assert set(draft.mentions) <= signal_members and set(draft.named) <= signal_members
    text_objects = [
        t for b in blocks if b["type"] != "actions" for t in ([b["text"]] if "text" in b else b["elements"])
    ]
    assert text_objects and all(t["verbatim"] is True for t in text_objects)
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert buttons and all(e["text"]["type"] == "plain_text" for e in buttons), "a button's label is never markup"
    if style == "llm":
        assert model.prompts, "the model was asked"
        assert draft.style != "llm" and "verification" in (draft.fallback_reason or "")
        assert all("<<<DATA" in p for p in model.prompts), "abstracts and titles are fenced as data"
        # what the catalog holds reaches the model without its markup (the final prompt edits the model's own
        # earlier answers, which this hostile model filled with markup: the verifier stops those)
        firsts = [p for p in model.prompts if not p.startswith("You edit a draft")]
        assert firsts and not any("U0ADMIN" in p or "evil.example" in p or "<!" in p for p in firsts)


def test_context_replies_answers_and_digests_let_no_markup_through(db: Database, poisoned: dict[str, Any]) -> None:
    from datetime import timedelta

    from bot.views.post_blocks import build_digest_blocks
    from bot.views.replies import answer_blocks, context_blocks
    from socialrag.knowledge import index_messages
    from socialrag.models import Digest, Message, PaperRef
    from socialrag.recommender import answer_question, share_context
    from socialrag.recommender.explain.llm import LLMClient
    from tests.support.labbase import NEUBIG, SHARED

    lab = poisoned["lab"]
    share = next(d["acl_id"] for d in lab["lines"] if NEUBIG in d["authors"] and d["acl_id"] not in SHARED.values())
    ts, at = f"{AS_OF.timestamp():.6f}", AS_OF
    ref = PaperRef("acl", share, f"https://aclanthology.org/{share}/")
    shown: list[str] = []
    with db.connection() as conn:
        index_messages(conn, [Message("T0LAB", "C1", ts, "U3", f"<{ref.url}>", at, papers=(ref,))])
        found = share_context(conn, "all-MiniLM-L6-v2", "T0LAB", "C1", ts)
        assert not isinstance(found, str), found
        shown.append(json.dumps(context_blocks(found)))
        plain = answer_question(conn, "all-MiniLM-L6-v2", "T0LAB", "C1", ts, "<!channel> what?", None, at)
        assert not isinstance(plain, str)
        shown.append(answer_blocks(plain))
        model = poisoned["model"]
        llm = LLMClient(model="m", base_url=model.base_url, api_key="k", timeout=10)
        asked = answer_question(conn, "all-MiniLM-L6-v2", "T0LAB", "C1", ts, "ping <!here>", llm, at)
        assert not isinstance(asked, str) and asked.text is None, "the hostile answer is never posted"
        shown.append(answer_blocks(asked))
        llm.close()
    settings = Settings(home=Path("."), offline=True)
    with Recommender(settings, db, embedder=CachedEmbedder()) as recommender:
        digest = recommender.recommend_digest("T0LAB", "C1", 5, at=AS_OF + timedelta(days=1))
    assert isinstance(digest, Digest)
    shown.append(json.dumps(build_digest_blocks(digest)))
    for text in shown:
        for bad in FORBIDDEN:
            assert bad not in text, (bad, text)
