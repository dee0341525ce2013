"""The recommender on a small real-data base: signals h1-h9, exclusion, styles, the verifier, the LLM chain
and its fallback (through a stand-in OpenAI-compatible server), and ``--as-of`` replay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from socialrag import storage
from socialrag.db import Database
from socialrag.models import (
    Author,
    AuthorDiscussedHere,
    EarlierPaperByMember,
    EarlierReception,
    MemberIsAuthor,
    Paper,
    RelatedToEarlierPaper,
    SharedAffiliation,
    VenueEngagedWith,
    WhyMemberMayCare,
)
from socialrag.recommender.explain.generate import GenerateConfig, build_allowed, build_draft
from socialrag.recommender.explain.llm import LLMClient
from socialrag.recommender.explain.verify import check_text
from socialrag.recommender.explain.wording import member_token
from socialrag.recommender.rank.engagement import ScoringConfig, channel_weights, select_signals
from socialrag.recommender.retrieve.candidates import CandidateQuery, CatalogSource
from socialrag.recommender.retrieve.context import load_channel_context
from socialrag.recommender.retrieve.signals import SignalInput, compute_signals
from socialrag.recommender.serve.pipeline import ChannelRequest, RecommendConfig, load_relations, recommend
from socialrag.storage.context_rows import load_paper_infos
from socialrag.storage.embeddings import load_vectors
from tests.support.labbase import AS_OF, CITING, CITING_SENTENCE, SHARED, CachedEmbedder, build_lab
from tests.support.openai_standin import OpenAIStandIn, chain_answer

pytestmark = pytest.mark.slow
MODEL = "all-MiniLM-L6-v2"


@pytest.fixture(scope="session")
def embedder() -> CachedEmbedder:
    return CachedEmbedder()


@pytest.fixture
def lab(db: Database, tmp_path: Path, embedder: CachedEmbedder) -> dict[str, Any]:
    return build_lab(db, tmp_path, embedder)


def signals_for(db: Database, acl_id: str, ids: dict[str, int]) -> tuple[list[Any], Any]:
    with db.connection() as conn:
        ctx = load_channel_context(conn, "T0LAB", "C1", AS_OF, MODEL)
        pid = ids[acl_id]
        info = load_paper_infos(conn, [pid])[pid]
        vec = load_vectors(conn, MODEL, [pid]).get(pid)
        inp = SignalInput(ctx, info, vec, load_relations(conn, ctx, pid))
    weights = channel_weights(ctx.papers, AS_OF, ScoringConfig(), ctx.emoji_overrides)
    return compute_signals(inp, weights), ctx


def by_kind(signals: list[Any]) -> dict[str, Any]:
    return {s.kind: s for s in signals}


def test_signals_h1_h2_h4_h5_h6_h7_h8_h9(db: Database, lab: dict[str, Any]) -> None:
    signals, ctx = signals_for(db, CITING, lab["ids"])
    got = by_kind(signals)
    # h1: the candidate's author Graham Neubig is member U1 (a name the member confirmed)
    assert got["h1"].fact == MemberIsAuthor(member="U1", author="Graham Neubig")
    # h2: Neubig wrote the three papers the channel discussed in the last three months
    assert got["h2"].fact == AuthorDiscussedHere(author="Graham Neubig", count=3) and len(got["h2"].permalinks) == 3
    # h4: the ACL meeting recurs among the papers the group engaged with positively
    assert got["h4"].fact == VenueEngagedWith(venue="ACL", count=5)
    assert got["h4"].counts == (5,)  # all ACL shares but the one the group turned down
    # h5: it cites the weight-poisoning paper, with the citing sentence
    h5 = got["h5"]
    assert isinstance(h5.fact, RelatedToEarlierPaper)
    assert h5.fact.relation == "cites" and h5.fact.context == CITING_SENTENCE
    assert h5.fact.paper_title == "Weight Poisoning Attacks on Pretrained Models" and h5.members == ("U2",)
    assert h5.permalinks[0].startswith("https://lab.slack.com/archives/C1/p")
    # h6: how the group received that paper
    h6 = got["h6"].fact
    assert isinstance(h6, EarlierReception) and h6.reactions == 3 and h6.positive_reactions == 2
    assert h6.replies == 2 and h6.repliers == ("U3", "U1")
    # h7: that earlier paper was written by a member, with how the new one relates to it (the h5's relation)
    assert got["h7"].fact == EarlierPaperByMember(
        member="U1", paper_title=h5.fact.paper_title, relation=h5.fact.relation, shared_authors=h5.fact.shared_authors
    )
    # h8/h9: the member closest to the paper, and why
    assert got["h8"].members[0] in {"U2", "U3", "U4"}, "never U1: the paper is theirs, not one for them to read"
    h9 = got["h9"].fact
    assert isinstance(h9, WhyMemberMayCare) and h9.reason in {"similar", "author", "venue", "own"}
    assert all(s.counts == () or all(isinstance(c, int) for c in s.counts) for s in signals)
    assert ctx.papers, "only this channel's papers are in the context"


def test_h3_shared_affiliation(db: Database, lab: dict[str, Any]) -> None:
    with db.connection() as conn:
        # Graham (U1) has a paper with an affiliation; a candidate author shares it.
        storage.papers.record_papers(
            conn,
            [
                Paper(
                    ids={"acl": SHARED["weight"]},
                    source="semanticscholar",
                    title="Weight Poisoning Attacks on Pretrained Models",
                    authors=(Author("Graham Neubig", affiliations=("Carnegie Mellon University",)),),
                )
            ],
        )
        storage.papers.record_papers(
            conn,
            [
                Paper(
                    ids={"acl": lab["others"][10]},
                    source="semanticscholar",
                    authors=(Author("Someone Else", affiliations=("Carnegie Mellon University",)),),
                )
            ],
        )
    signals, _ = signals_for(db, lab["others"][10], lab["ids"])
    h3 = by_kind(signals)["h3"]
    assert h3.fact == SharedAffiliation(affiliation="Carnegie Mellon University", member="U1", author="Someone Else")


def test_signal_selection_rule(db: Database, lab: dict[str, Any]) -> None:
    signals, _ = signals_for(db, CITING, lab["ids"])
    chosen = select_signals(signals)
    assert len(chosen) == 3
    assert chosen[0].kind == "h1", "a member's own authorship comes first"
    assert {s.category for s in chosen} == {"I", "II", "III"}
    assert "h7" not in [s.kind for s in chosen], "h7 would repeat h1's member"


def test_recommend_excludes_shared_papers_under_other_identities(db: Database, lab: dict[str, Any]) -> None:
    with db.connection() as conn:
        # The channel shared TaBERT by its ACL id; Semantic Scholar says it is also this arXiv paper.
        storage.papers.record_papers(
            conn,
            [Paper(ids={"acl": SHARED["tabert"], "arxiv": "2005.08314"}, source="semanticscholar", title="TaBERT")],
        )
        rec = recommend(
            conn, ChannelRequest("T0LAB", "C1", AS_OF, [CatalogSource()], RecommendConfig(model=MODEL, top=50))
        )
        shared = set(
            conn.execute(
                """SELECT DISTINCT mp.paper_id FROM message_papers mp JOIN messages m
                                        ON m.id = mp.message_id WHERE m.posted_at < %s""",
                (AS_OF,),
            ).fetchall()
        )
    ids = {c.paper_id for c in rec.candidates}
    assert ids and not ids & {p[0] for p in shared}
    assert rec.draft is not None and rec.draft.paper.paper_id == rec.candidates[0].paper_id
    titles = [c.title for c in rec.candidates]
    assert "TaBERT: Pretraining for Joint Understanding of Textual and Tabular Data" not in titles
    # best first; the first ten are re-ranked for variety (maximal marginal relevance), the rest by score
    assert rec.candidates[0].score == max(c.score for c in rec.candidates)
    assert rec.candidates[10:] == sorted(rec.candidates[10:], key=lambda c: c.score, reverse=True)


def test_recommended_papers_are_not_recommended_again(db: Database, lab: dict[str, Any]) -> None:
    with db.connection() as conn:
        first = recommend(conn, ChannelRequest("T0LAB", "C1", AS_OF, [CatalogSource()], RecommendConfig(model=MODEL)))
        assert first.draft is not None
        conn.execute(
            """INSERT INTO recommendations (team_id, channel_id, slot_key, paper_id, style, created_at)
                        VALUES ('T0LAB', 'C1', 'test', %s, 'tldr', %s)""",
            (first.draft.paper.paper_id, AS_OF - timedelta(days=1)),
        )
        second = recommend(conn, ChannelRequest("T0LAB", "C1", AS_OF, [CatalogSource()], RecommendConfig(model=MODEL)))
    assert second.draft is not None and second.draft.paper.paper_id != first.draft.paper.paper_id


def test_as_of_replay_uses_only_the_past(db: Database, lab: dict[str, Any]) -> None:
    later = lab["ids"][lab["others"][3]]
    with db.connection() as conn:
        before = load_channel_context(conn, "T0LAB", "C1", AS_OF, MODEL)
        after = load_channel_context(conn, "T0LAB", "C1", AS_OF + timedelta(days=60), MODEL)
        early = load_channel_context(conn, "T0LAB", "C1", AS_OF - timedelta(days=70), MODEL)
        windowed = recommend(
            conn, ChannelRequest("T0LAB", "C1", AS_OF, [CatalogSource()], RecommendConfig(model=MODEL, window_days=30))
        )
        wide = recommend(
            conn, ChannelRequest("T0LAB", "C1", AS_OF, [CatalogSource()], RecommendConfig(model=MODEL, window_days=365))
        )
    assert later not in before.papers and later in after.papers
    assert set(early.papers) == {lab["ids"][SHARED["weight"]]}
    assert windowed.candidates == [], "no catalog paper was published in the 30 days before"
    assert wide.candidates


def render_for(db: Database, lab: dict[str, Any], style: str, **kw: Any) -> Any:
    with db.connection() as conn:
        return recommend(
            conn,
            ChannelRequest("T0LAB", "C1", AS_OF, [CatalogSource()], RecommendConfig(model=MODEL, style=style)),
            **kw,
        )  # type: ignore[arg-type]


@pytest.mark.parametrize("style", ["tldr", "template", "template+tldr"])
def test_styles_without_llm(db: Database, lab: dict[str, Any], style: str) -> None:
    draft = render_for(db, lab, style).draft
    assert draft.style == style and 0 < len(draft.explanation) <= 400
    text = draft.explanation
    if style == "tldr":
        assert "{@" not in text and not draft.mentions
    else:
        assert any(tok in text for tok in ("{@U", "also wrote", "engaged with", "cites", "close in topic"))
    assert draft.paper.url.startswith("https://aclanthology.org/") and draft.paper.year == 2020
    assert "U4" not in draft.mentions, "a member who turned mentions off is named, not mentioned"


def test_verifier_rejects_inventions(db: Database, lab: dict[str, Any]) -> None:
    signals, ctx = signals_for(db, CITING, lab["ids"])
    chosen = select_signals(signals)
    with db.connection() as conn:
        info = load_paper_infos(conn, [lab["ids"][CITING]])[lab["ids"][CITING]]
    allowed = build_allowed(ctx, info, chosen)
    good = build_draft(ctx, info, {}, chosen, "template", GenerateConfig()).explanation
    assert check_text(good, allowed) == [], good
    assert any("member" in p for p in check_text(good + " Also for {@U999}.", allowed))
    assert any("links" in p for p in check_text(good + " See https://lab.slack.com/archives/C1/p1", allowed))
    assert any("number" in p for p in check_text(good + " It got 17 reactions.", allowed))
    assert any("emoji" in p for p in check_text(good + " :tada:", allowed))
    too_bold = "*one* *two* *three* *four* " + good
    assert any("bold" in p for p in check_text(too_bold, allowed, limit=2000))
    assert any("limit" in p for p in check_text("x" * 401, allowed))
    assert any("required" in p for p in check_text("A paper.", allowed, required=["Weight Poisoning Attacks"]))


def test_a_member_token_in_an_abstract_pings_nobody(db: Database, lab: dict[str, Any]) -> None:
    from dataclasses import replace

    from bot.views.post_blocks import build_blocks, build_fallback_text

    signals, ctx = signals_for(db, CITING, lab["ids"])
    with db.connection() as conn:
        info = load_paper_infos(conn, [lab["ids"][CITING]])[lab["ids"][CITING]]
    hostile = replace(info, abstract="{@U0ADMIN1} <!channel> We study attacks on models. {@U0ADMIN1}", tldr=None)
    draft = build_draft(ctx, hostile, {}, select_signals(signals), "template+tldr", GenerateConfig())
    assert "It studies attacks" in draft.explanation and "{@U0ADMIN1}" not in draft.explanation
    assert "U0ADMIN1" not in draft.mentions and "U0ADMIN1" not in draft.named
    posted = json.dumps(build_blocks(draft)) + build_fallback_text(draft)
    assert "<@U0ADMIN1>" not in posted and "<!channel>" not in posted


@pytest.fixture
def llm_server() -> Iterator[OpenAIStandIn]:
    server = OpenAIStandIn(chain_answer)
    yield server
    server.stop()


def llm_client(db: Database, server: OpenAIStandIn, timeout: float = 5.0) -> LLMClient:
    def record(call: Any) -> None:
        with db.connection() as conn:
            storage.llm_log.record_llm_call(conn, "T0LAB", "C1", call)

    return LLMClient(model="test-model", base_url=server.base_url, api_key="k", timeout=timeout, recorder=record)


def test_llm_chain_is_verified_and_recorded(db: Database, lab: dict[str, Any], llm_server: OpenAIStandIn) -> None:
    draft = render_for(db, lab, "llm", llm=llm_client(db, llm_server)).draft
    assert draft.style == "llm" and draft.fallback_reason is None, draft.fallback_reason
    assert "This paper" in draft.explanation
    with db.connection() as conn:
        calls = conn.execute(
            "SELECT prompt_name, prompt_version, length(prompt_hash), model, outcome FROM llm_calls"
        ).fetchall()
    names = [c[0] for c in calls]
    assert names[0] == "paper" and names[-1] == "final"
    assert all(
        c[1] == (4 if c[0] == "final" else 3) and c[2] == 16 and c[3] == "test-model" and c[4] == "ok" for c in calls
    )


def test_llm_that_invents_a_member_falls_back(db: Database, lab: dict[str, Any], llm_server: OpenAIStandIn) -> None:
    llm_server.responder = lambda prompt: "This paper is great for {@U777} who liked 12 papers."
    draft = render_for(db, lab, "llm", llm=llm_client(db, llm_server)).draft
    assert draft.style == "template+tldr"
    assert draft.fallback_reason and "verification" in draft.fallback_reason
    assert sum(1 for p in llm_server.prompts if p.startswith("You edit a draft")) == 2, "retried once"


def test_llm_error_and_timeout_fall_back(db: Database, lab: dict[str, Any], llm_server: OpenAIStandIn) -> None:
    llm_server.status = 500
    draft = render_for(db, lab, "llm", llm=llm_client(db, llm_server)).draft
    assert draft.style == "template+tldr" and "LLM failed" in (draft.fallback_reason or "")
    llm_server.status = 200
    llm_server.delay = 2.0
    draft = render_for(db, lab, "llm", llm=llm_client(db, llm_server, timeout=0.3)).draft
    assert draft.style == "template+tldr" and "LLM failed" in (draft.fallback_reason or "")
    with db.connection() as conn:
        outcomes = {r[0] for r in conn.execute("SELECT outcome FROM llm_calls").fetchall()}
    assert outcomes == {"error"}


def test_no_llm_configured_means_template_tldr(db: Database, lab: dict[str, Any]) -> None:
    draft = render_for(db, lab, "llm").draft
    assert draft.style == "template+tldr" and draft.fallback_reason == "no LLM is configured"


def test_candidate_query_seeds(db: Database, lab: dict[str, Any]) -> None:
    from socialrag.recommender.retrieve.candidates import seed_papers

    with db.connection() as conn:
        ctx = load_channel_context(conn, "T0LAB", "C1", AS_OF, MODEL)
    weights = channel_weights(ctx.papers, AS_OF, ScoringConfig(), ctx.emoji_overrides)
    positive, negative = seed_papers(CandidateQuery(ctx, weights, MODEL))
    assert lab["ids"][SHARED["weight"]] == positive[0]
    assert negative == [lab["ids"][lab["others"][0]]]
    assert member_token("U1") == "{@U1}"


def test_a_member_who_left_the_channel_is_neither_mentioned_nor_named(db: Database, lab: dict[str, Any]) -> None:
    """Once a member leaves, the channel's post neither notifies nor names them: the reasons about them go, and the
    post still goes out on the others."""
    draft = render_for(db, lab, "template").draft
    assert draft.mentions, "the lab's post mentions someone"
    gone = draft.mentions[0]
    with db.connection() as conn:
        storage.workspaces.remove_channel_member(conn, "T0LAB", "C1", gone)
    again = render_for(db, lab, "template").draft
    assert gone not in again.mentions and gone not in again.named, "a member who left is not named"
    assert again.explanation and again.signals, "the post stands on the other reasons"


def test_a_small_catalog_window_is_ranked_whole_and_a_large_one_searched(db: Database, lab: dict[str, Any]) -> None:
    """Retrieval loses nothing a small catalog holds: every paper of the window reaches the ranking; past
    ``whole`` papers the window is searched from each engaged paper, so what reaches the ranking is fewer."""
    from socialrag.recommender.retrieve.candidates import CandidateQuery

    with db.connection() as conn:
        ctx = load_channel_context(conn, "T0LAB", "C1", AS_OF, MODEL)
        query = CandidateQuery(ctx, {pid: 1.0 for pid in ctx.papers}, MODEL, 365)
        in_window = conn.execute(
            "SELECT count(*) FROM papers p JOIN paper_embeddings e ON e.paper_id = p.id AND e.model = %s"
            " WHERE p.in_catalog AND p.available_on < %s AND p.available_on >= %s",
            (MODEL, AS_OF, AS_OF - timedelta(days=365)),
        ).fetchone()
        whole = CatalogSource().fetch_candidates(conn, query)
        searched = CatalogSource(per_query=5, whole=10).fetch_candidates(conn, query)
    assert in_window is not None and len(whole) == in_window[0] > 10
    assert 0 < len(searched) < len(whole) and set(searched) <= set(whole)


def test_the_catalog_searched_on_two_connections_finds_the_same_papers_in_the_same_order(
    db: Database, lab: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """The service searches half of the catalog's queries on a second connection (two cores for the database's
    work). It finds what one connection finds, in the same order; a second connection that cannot be had in
    time (the pool full) costs only the wait: its half is searched on the first, and the log says so."""
    from functools import partial

    with db.connection() as conn:
        ctx = load_channel_context(conn, "T0LAB", "C1", AS_OF, MODEL)
        query = CandidateQuery(ctx, {pid: 1.0 for pid in ctx.papers}, MODEL, 365)
        alone = CatalogSource(per_query=5, whole=10).fetch_candidates(conn, query)
        beside = CatalogSource(per_query=5, whole=10, beside=partial(db.connection, wait=5.0))
        assert len(beside.query_vectors(query)) >= 2, "there are queries for both connections"
        assert beside.fetch_candidates(conn, query) == alone and alone
    assert "searching on one" not in caplog.text, "the second connection searched"
    full = Database(db.conninfo, pool_size=1)
    try:
        with full.connection() as conn:  # the pool's only connection
            busy = CatalogSource(per_query=5, whole=10, beside=partial(full.connection, wait=0.2))
            assert busy.fetch_candidates(conn, query) == alone
    finally:
        full.close()
    assert "searching on one" in caplog.text
