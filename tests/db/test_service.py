"""The recommender service: one per process, every channel addressed by (workspace, channel), one style rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.slack.workspace_export import import_export
from socialrag import storage
from socialrag.cli.subcommand import resolve_channel
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import InputError
from socialrag.recommender.explain.styles import describe_style, resolve_style
from socialrag.recommender.serve.service import Recommender
from tests.support.exports import msg, user, write_export
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab, t

OTHER = "T0OTHER"


@pytest.fixture
def two_workspaces(db: Database, tmp_path: Path) -> dict[str, Any]:
    """The lab in T0LAB/C1, and a second workspace whose channel has the same id C1 (as Slack Connect gives)
    but its own members and shares."""
    lab = build_lab(db, tmp_path, CachedEmbedder())
    others = lab["others"]
    users = [{**user("U7", "yuki"), "team_id": OTHER}, {**user("U8", "omar"), "team_id": OTHER}]
    messages = [
        msg(
            t("2020-12-02"),
            "U7",
            f"<https://aclanthology.org/{others[20]}/>",
            reactions=[{"name": "+1", "users": ["U8"], "count": 1}],
        ),
        msg(
            t("2020-12-09"),
            "U8",
            f"<https://aclanthology.org/{others[21]}/>",
            reactions=[{"name": "fire", "users": ["U7"], "count": 1}],
        ),
    ]
    export = write_export(tmp_path / "other.zip", {"reading": ("C1", ["U7", "U8"], messages)}, users)
    import_export(db, export, team_id=OTHER, domain="other", progress=False)
    return lab


def test_two_workspaces_with_one_channel_id_each_get_their_own_recommendation(
    db: Database, two_workspaces: dict[str, Any]
) -> None:
    ids = two_workspaces["ids"]
    others = two_workspaces["others"]
    settings = Settings(home=Path("."), offline=True)
    with Recommender(settings, db, embedder=CachedEmbedder()) as recommender:
        lab = recommender.recommend("T0LAB", "C1", at=AS_OF)
        other = recommender.recommend(OTHER, "C1", at=AS_OF)
    assert lab.context is not None and other.context is not None
    assert set(other.context.papers) == {ids[others[20]], ids[others[21]]}, "only its own shares"
    assert {ids[others[20]], ids[others[21]]}.isdisjoint(lab.context.papers)
    assert set(other.context.members) == {"U7", "U8"} and "U7" not in lab.context.members
    assert lab.draft is not None and other.draft is not None
    assert (lab.draft.team_id, other.draft.team_id) == ("T0LAB", OTHER)
    other_links = [link for s in other.draft.signals for link in s.permalinks]
    assert all(link.startswith("https://other.slack.com/") for link in other_links)
    assert all(m in {"U7", "U8"} for s in other.draft.signals for m in s.members)
    assert all(m in lab.context.members for s in lab.draft.signals for m in s.members)
    assert ids[others[20]] not in {c.paper_id for c in other.candidates}, "what it shared is not recommended back"


def test_the_command_line_names_a_channel_of_one_workspace(db: Database, two_workspaces: dict[str, Any]) -> None:
    with pytest.raises(InputError, match="T0LAB/C1, T0OTHER/C1"):
        resolve_channel(db, "C1")
    assert resolve_channel(db, f"{OTHER}/C1") == (OTHER, "C1", "reading")
    assert resolve_channel(db, "nlp-lab") == ("T0LAB", "C1", "nlp-lab")


def test_one_style_rule() -> None:
    assert resolve_style(None, llm_configured=True) == "llm"
    assert resolve_style(None, llm_configured=False) == "template+tldr"
    assert resolve_style("tldr", llm_configured=True) == "tldr"
    assert describe_style(None, True) == "`llm` (the default)" and describe_style("template", True) == "`template`"


def test_a_channel_that_never_chose_stores_no_style(db: Database) -> None:
    """The settings row a command creates keeps "not chosen", and the store's defaults are the schema's."""
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, "T1")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('T1', 'C9', 'x')")
        storage.settings.upsert_channel_setting(conn, "T1", "C9", frequency="weekly")
        stored = storage.settings.load_channel_settings(conn, "T1", "C9")
        defaults = dict(
            conn.execute(
                """SELECT column_name, column_default FROM information_schema.columns
                    WHERE table_name = 'channel_settings'"""
            ).fetchall()
        )
    assert stored.style is None and stored.frequency == "weekly"
    assert defaults["style"] is None
    assert defaults["frequency"] == "'every-other-day'::text"
    assert defaults["post_start_hour"] == "9" and defaults["post_end_hour"] == "17"
    fresh = storage.settings.load_channel_settings
    with db.connection() as conn:
        none_yet = fresh(conn, "T1", "C-none")
    assert none_yet.style is None and none_yet.frequency == "every-other-day"
    assert none_yet.sources == ["catalog", "semanticscholar", "arxiv", "openalex", "biorxiv", "medrxiv", "pubmed"]


def test_the_service_searches_the_catalog_on_a_second_connection_of_its_pool(
    db: Database, two_workspaces: dict[str, Any]
) -> None:
    """The catalog source the service builds has a second connection to search on, taken from the process's pool
    (bounded, and not waited for past a second), and a recommendation through it leaves no connection taken."""
    from socialrag.recommender.retrieve.candidates import CatalogSource

    settings = Settings(home=Path("."), offline=True)
    with Recommender(settings, db, embedder=CachedEmbedder()) as recommender:
        with db.connection() as conn:
            chosen = storage.settings.load_channel_settings(conn, "T0LAB", "C1")
        catalog = [s for s in recommender.candidate_sources(chosen) if isinstance(s, CatalogSource)]
        assert len(catalog) == 1 and catalog[0].beside is not None
        with catalog[0].beside() as other:
            assert other.execute("SELECT 1").fetchone() == (1,)
        assert recommender.recommend("T0LAB", "C1", at=AS_OF).candidates
    stats = db.pool().get_stats()
    assert stats["pool_size"] - stats.get("pool_available", 0) == 0, stats


def test_a_catalog_paper_of_this_month_is_offered_now_and_not_in_a_replay_of_the_day_before(
    db: Database, tmp_path: Path
) -> None:
    """A paper the catalog dates only to the current month (a conference's proceedings) exists once it is in the
    store: serving offers it in the week of the conference. A replay (``recommend --as-of``) of the day before
    still holds it back until the month has ended, as it could not have been known to exist then."""
    import json
    from datetime import UTC, datetime, timedelta

    from socialrag.knowledge.embed import embed_pending
    from socialrag.knowledge.papers.local_catalog import import_catalog

    embedder = CachedEmbedder()
    lab = build_lab(db, tmp_path, embedder)
    now = datetime.now(UTC)
    new = {
        "acl_id": "2099.confx-main.1",
        "title": "Backdoors in pretrained weights survive fine-tuning on new tasks",
        "abstract": "We study weight poisoning of pretrained models and how fine-tuning keeps the backdoor.",
        "authors": ["Ada Example"],
        "venue": "Proceedings of this month's conference",
        "year": now.year,
        "month": f"{now:%B}",
    }
    path = tmp_path / "this-month.jsonl"
    path.write_text(json.dumps(new) + "\n")
    import_catalog(db, path)
    embed_pending(db, embedder)
    with db.connection() as conn:
        pid = conn.execute("SELECT paper_id FROM paper_ids WHERE scheme = 'acl' AND value = %s", (new["acl_id"],))
        paper_id = pid.fetchone()[0]
        precision = conn.execute("SELECT date_precision FROM papers WHERE id = %s", (paper_id,)).fetchone()[0]
    assert precision == "month"
    settings = Settings(home=Path("."), offline=True)
    with Recommender(settings, db, embedder=embedder) as recommender:
        serving = recommender.recommend("T0LAB", "C1", top=500)
        replay = recommender.recommend("T0LAB", "C1", at=now - timedelta(days=1), top=500)
    assert paper_id in {c.paper_id for c in serving.candidates}, "serving offers what the store holds"
    offered_then = {c.paper_id for c in replay.candidates}
    assert paper_id not in offered_then, "a replay of the day before holds the month's paper back"
    assert lab["ids"][lab["others"][10]] in offered_then, "the replay offers the catalog's older papers"
