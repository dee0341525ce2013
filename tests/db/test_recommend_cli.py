"""``paperping recommend`` and ``paperping eval`` on the real-data lab base, offline."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.cli import main
from socialrag import storage
from socialrag.db import Database
from socialrag.models import signal_from_json
from socialrag.recommender.rank.evaluate import METHODS, evaluate_channel
from socialrag.recommender.rank.features import FEATURES
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab

pytestmark = pytest.mark.slow


@pytest.fixture
def lab_env(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    lab = build_lab(db, tmp_path, CachedEmbedder())
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    return lab


def test_recommend_json(lab_env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "nlp-lab", "--json", "--as-of", AS_OF.isoformat(), "--top", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["candidates"]) == 3
    first = data["candidates"][0]
    assert set(first) >= {"acl_id", "title", "score"}
    # the best first; those after it are re-ranked for variety (see test_recommend.py)
    assert data["candidates"][0]["score"] == max(c["score"] for c in data["candidates"])
    draft = data["draft"]
    assert draft["style"] == "template+tldr" and draft["paper"]["title"] == first["title"]
    assert all({"kind", "fact", "members", "permalinks", "category"} <= set(s) for s in draft["signals"])
    assert draft["signals"] and all(signal_from_json(s).kind == s["kind"] for s in draft["signals"])


def test_recommend_text_and_styles(lab_env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "C1", "--as-of", "2021-01-15", "--style", "template"]) == 0
    out = capsys.readouterr().out
    assert "Candidates:" in out and "Signals used:" in out and "Message (template):" in out
    assert "{@" not in out, "members are shown by name in the terminal"
    assert main(["recommend", "C1", "--style", "fancy"]) == 2
    assert "--style takes one of tldr, template, template+tldr, llm" in capsys.readouterr().err
    assert main(["recommend", "C1", "--as-of", "last week"]) == 2
    assert "--as-of takes an ISO date" in capsys.readouterr().err


def test_eval_replay(lab_env: dict[str, Any], db: Database, capsys: pytest.CaptureFixture[str]) -> None:
    with db.connection() as conn:
        report = evaluate_channel(conn, "T0LAB", "C1", "all-MiniLM-L6-v2", warmup=2)
    assert report.steps >= 2 and report.candidates > 50
    for name in METHODS:
        r = report.results[name]
        assert len(r.reciprocal) == len(r.precision5) == report.steps and 0.0 <= r.mrr <= 1.0
        assert 0.0 <= r.p5 <= 1.0 and 0.0 <= r.r10 <= 1.0 and 1 <= r.topics <= 10
    table = report.table()
    assert "P@5" in table and "R@10" in table and "topics@10" in table and METHODS[0] in table
    assert main(["eval", "nlp-lab", "--warmup", "2"]) == 0
    assert "Replay of #nlp-lab" in capsys.readouterr().out


def test_refit_learns_the_channel_and_status_says_so(
    lab_env: dict[str, Any], db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    from socialrag.recommender.rank.refit import fit_history, load_fit
    from socialrag.storage.rankers import channels_to_refit

    now = datetime.now(UTC)
    with db.connection() as conn:
        assert ("T0LAB", "C1") in channels_to_refit(conn, now)  # never fitted
    assert main(["refit", "nlp-lab"]) == 0
    out = capsys.readouterr().out
    assert "#nlp-lab: learnt from" in out and "Ranking:" in out
    with db.connection() as conn:
        model = load_fit(conn, "T0LAB", "C1")
        assert model.fitted_at is not None and model.shares > 0 and model.pairs >= model.shares
        assert ("T0LAB", "C1") not in channels_to_refit(conn, now)  # fresh, and no feedback since
        assert ("T0LAB", "C1") in channels_to_refit(conn, now + timedelta(days=8))  # a week on
    assert main(["refit", "nlp-lab"]) == 0
    with db.connection() as conn:
        assert len(fit_history(conn, "T0LAB", "C1")) >= 2  # every fit is kept with its date
    capsys.readouterr()
    assert main(["status", "--channel", "nlp-lab"]) == 0
    status = capsys.readouterr().out
    assert "#nlp-lab: Ranking:" in status
    # whether the channel reads new work is kept with the fit, its default blend rebuilt from it, and said
    from socialrag.recommender.rank.calibrate import prior_weights

    with db.connection() as conn:
        stored = load_fit(conn, "T0LAB", "C1")
    assert np.array_equal(stored.prior, prior_weights(leanings=stored.leanings))
    assert ("its default leans to new papers" in status) == stored.new_work


def test_the_scheduler_refits_channels_when_due(lab_env: dict[str, Any], db: Database) -> None:
    from socialrag.config import Settings
    from socialrag.recommender.serve.service import Recommender

    now = datetime.now(UTC)
    with Recommender(Settings(home=Path("."), offline=True), db, embedder=CachedEmbedder()) as recommender:
        assert recommender.refit_due(now) >= 1
        assert recommender.refit_due(now) == 0  # nothing new since
        assert recommender.ranker("T0LAB", "C1").fitted_at == now
        assert recommender.refit_due(now + timedelta(days=8)) >= 1


def test_the_scheduler_refits_a_channel_in_one_process_and_a_failed_one_an_hour_later(
    lab_env: dict[str, Any], db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    from socialrag.config import Settings
    from socialrag.recommender.serve.refits import claim_refit
    from socialrag.recommender.serve.service import Recommender

    now = datetime.now(UTC)
    failed = "refitting T0LAB/C1 failed"
    with Recommender(Settings(home=Path("."), offline=True), db, embedder=CachedEmbedder()) as recommender:
        with db.connection() as other:  # another process is refitting the channel: this one leaves it
            assert claim_refit(other, "T0LAB", "C1", now)
            assert recommender.refit_due(now) == 0
        with db.connection() as conn:  # Postgres refuses the channel's new fit
            conn.execute(
                "CREATE FUNCTION refuse_fit() RETURNS trigger LANGUAGE plpgsql AS $$"
                " BEGIN RAISE EXCEPTION 'the disk is full'; END $$"
            )
            conn.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON channel_rankers FOR EACH ROW EXECUTE FUNCTION refuse_fit()"
            )
        assert recommender.refit_due(now) == 0
        assert sum(failed in r.getMessage() for r in caplog.records) == 1
        assert recommender.refit_due(now + timedelta(minutes=10)) == 0
        assert sum(failed in r.getMessage() for r in caplog.records) == 1, "not tried again at every tick"
        with db.connection() as conn:
            conn.execute("DROP TRIGGER refuse ON channel_rankers")
        assert recommender.refit_due(now + timedelta(minutes=61)) == 1, "tried again an hour later"
        with db.connection() as conn:  # a channel PaperPing was removed from is no longer relearnt
            storage.settings.upsert_channel_setting(conn, "T0LAB", "C1", active=True)
            assert storage.workspaces.deactivate_channels(conn, "T0LAB", "C1") == 1
        assert recommender.refit_due(now + timedelta(days=8)) == 0


def test_a_refit_reads_the_catalog_beside_the_channel_and_learns_the_same(
    lab_env: dict[str, Any], db: Database
) -> None:
    """The service's refit reads the catalog's papers on two more connections while it reads the channel's
    history: the same history, the same papers (vectors, readings, authors), the same fit as reading them one after
    the other. A channel that shared nothing has no papers to rank either way, and a connection that cannot be
    had stops the refit with the database's error, storing nothing."""
    from socialrag.db import DatabaseError
    from socialrag.recommender.rank.refit import read_together, refit_channel

    model = CachedEmbedder().model_name
    with db.connection() as conn:
        pool = [r[0] for r in conn.execute("SELECT paper_id FROM paper_embeddings ORDER BY paper_id").fetchall()]
        alone = read_together(conn, "T0LAB", "C1", model, AS_OF, pool=pool)
        beside = read_together(conn, "T0LAB", "C1", model, AS_OF, pool=pool, connect=db.connection)
    (ctx_a, u_a), (ctx_b, u_b) = alone, beside
    assert u_a is not None and u_b is not None and len(u_a.ids) > 50
    assert sorted(ctx_a.papers) == sorted(ctx_b.papers) and ctx_a.emoji_learnt == ctx_b.emoji_learnt
    assert [len(p.reactions) for p in ctx_a.papers.values()] == [len(p.reactions) for p in ctx_b.papers.values()]
    for name in ("ids", "vectors", "published", "reading_start", "reading_t", "reading_v", "author_flat", "venues"):
        assert np.array_equal(getattr(u_a, name), getattr(u_b, name), equal_nan=True), name
    with db.connection() as conn:
        fits = [
            refit_channel(conn, "T0LAB", "C1", model, now=AS_OF, pool=pool, connect=connect)
            for connect in (None, db.connection)
        ]
        assert np.array_equal(fits[0].weights, fits[1].weights) and fits[0].decision == fits[1].decision
        assert read_together(conn, "T0LAB", "C-quiet", model, AS_OF, connect=db.connection)[1] is None

    def refused() -> Any:
        raise DatabaseError("the database connection failed: no connection to spare")

    stored = "SELECT count(*) FROM channel_rankers WHERE team_id = 'T0LAB' AND channel_id = 'C1'"
    with db.connection() as conn:
        kept = conn.execute(stored).fetchone()
    with pytest.raises(DatabaseError, match="no connection to spare"), db.connection() as conn:
        refit_channel(conn, "T0LAB", "C1", model, now=AS_OF, connect=refused)
    with db.connection() as conn:
        assert conn.execute(stored).fetchone() == kept == (2,)


def test_refit_as_of_learns_only_the_past_and_recommend_as_of_uses_it(
    lab_env: dict[str, Any], db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backtest through the two commands: the fit is stored with the replayed date, learns nothing from after
    it, and is the ranking a replay at that date uses (and none before it)."""
    from socialrag.recommender.rank.calibrate import default_model
    from socialrag.recommender.rank.refit import load_fit

    as_of = AS_OF
    assert main(["refit", "nlp-lab", "--as-of", as_of.isoformat()]) == 0
    assert f"before {as_of:%Y-%m-%d %H:%M} UTC (stored with that date)" in capsys.readouterr().out
    with db.connection() as conn:
        shared_before = conn.execute(
            "SELECT count(DISTINCT mp.paper_id) FROM message_papers mp JOIN messages m ON m.id = mp.message_id"
            " WHERE mp.team_id = 'T0LAB' AND mp.channel_id = 'C1' AND m.posted_at < %s",
            (as_of,),
        ).fetchone()
        model = load_fit(conn, "T0LAB", "C1", as_of=as_of)
        assert model.fitted_at == as_of and model.decision
        assert shared_before is not None and 0 < model.shares <= shared_before[0]
        assert model.trained_until is None or model.trained_until < as_of.timestamp()
        earlier = load_fit(conn, "T0LAB", "C1", as_of=as_of - timedelta(days=1))
        assert np.array_equal(earlier.weights, default_model().weights) and earlier.fitted_at is None
    assert main(["recommend", "nlp-lab", "--json", "--as-of", as_of.isoformat(), "--top", "3"]) == 0
    top = json.loads(capsys.readouterr().out)["candidates"][0]
    assert top["score"] == pytest.approx(sum(top["parts"].values()), abs=1e-3), "scored by the stored fit's weights"
    assert set(top["parts"]) <= {f for f, w in zip(FEATURES, model.weights, strict=True) if w}


def test_a_paper_model_survives_the_database_ranks_in_serving_and_status_says_so(
    lab_env: dict[str, Any], db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refit chose the channel's paper model: the direction is stored with the fit, read back by the next
    process, said by `status`, and it is what serving ranks by (each candidate's score is its taste)."""
    from socialrag import storage
    from socialrag.recommender.rank.calibrate import default_model
    from socialrag.recommender.rank.refit import load_fit
    from socialrag.storage.embeddings import load_vectors

    ids = lab_env["ids"]
    with db.connection() as conn:
        toward = load_vectors(conn, "all-MiniLM-L6-v2", [ids[lab_env["others"][30]]])
    direction = next(iter(toward.values())).astype(np.float64)
    weights = np.eye(len(FEATURES))[FEATURES.index("taste")]
    note = "learnt from 40 papers the channel picked against 800 it passed over; on the latest 12 held-out shares it had ROC-AUC 0.91"
    fitted = default_model()
    chosen = {
        **fitted.to_json(),
        "weights": weights.tolist(),
        "taste": direction.tolist(),
        "taste_note": note,
        "decision": "the paper model: on the latest 12 shares, from 9 days, it had MRR 0.40 against the default blend 0.20",
    }
    when = datetime.now(UTC) - timedelta(minutes=5)
    with db.connection() as conn:
        storage.rankers.save_fit(conn, "T0LAB", "C1", when, chosen, 40, 800)
    with db.connection() as conn:
        back = load_fit(conn, "T0LAB", "C1")
    assert back.taste is not None and np.allclose(back.taste, direction, atol=1e-5)
    assert back.decision.startswith("the paper model") and back.taste_note == note

    assert main(["status", "--channel", "nlp-lab"]) == 0
    status = capsys.readouterr().out
    assert "Last refit" in status and "the paper model: on the latest 12 shares" in status
    assert f"Its paper model: {note}" in status

    assert main(["recommend", "nlp-lab", "--json", "--top", "20"]) == 0
    data = json.loads(capsys.readouterr().out)
    with db.connection() as conn:
        vectors = load_vectors(conn, "all-MiniLM-L6-v2", [ids[c["acl_id"]] for c in data["candidates"]])
    for c in data["candidates"]:
        taste = float(vectors[ids[c["acl_id"]]] @ direction)
        assert set(c["parts"]) <= {"taste"} and abs(c["score"] - taste) < 1e-3, c
    best = max(data["candidates"], key=lambda c: c["score"])
    assert best["acl_id"] == lab_env["others"][30], "the paper the direction points at ranks first"


def test_a_default_blend_with_a_direction_orders_its_first_papers_in_serving(
    lab_env: dict[str, Any], db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refit kept the default blend and learnt a direction: serving ranks the blend's first 50 papers with it
    (the same papers with the same scores, in another order), the next process reads it back, and `status`
    says what it does."""
    from socialrag import storage
    from socialrag.recommender.rank.calibrate import default_model
    from socialrag.recommender.rank.refit import load_fit
    from socialrag.storage.embeddings import load_vectors

    ids = lab_env["ids"]
    blend = {**default_model().to_json(), "decision": "kept the default blend: 4 of its latest shares could be judged"}
    with db.connection() as conn:
        storage.rankers.save_fit(conn, "T0LAB", "C1", datetime.now(UTC) - timedelta(minutes=10), blend, 40, 800)
    assert main(["recommend", "nlp-lab", "--json", "--top", "1000"]) == 0
    plain = {c["acl_id"]: c for c in json.loads(capsys.readouterr().out)["candidates"]}
    by_blend = sorted(plain, key=lambda a: -plain[a]["score"])
    assert len(by_blend) > 60 and all("taste" not in c["parts"] for c in plain.values())
    lifted = by_blend[12]  # the direction points at the blend's thirteenth
    with db.connection() as conn:
        direction = next(iter(load_vectors(conn, "all-MiniLM-L6-v2", [ids[lifted]]).values())).astype(np.float64)
    note = "learnt from 40 papers the channel picked against 800 it passed over"
    ordered = {**blend, "taste": direction.tolist(), "taste_note": note, "shortlist": True}
    with db.connection() as conn:
        storage.rankers.save_fit(conn, "T0LAB", "C1", datetime.now(UTC) - timedelta(minutes=5), ordered, 40, 800)
    with db.connection() as conn:
        assert load_fit(conn, "T0LAB", "C1").orders_shortlist
    assert main(["status", "--channel", "nlp-lab"]) == 0
    assert f"Its paper model: {note}; it helps order the default blend's first 50 papers." in capsys.readouterr().out

    assert main(["recommend", "nlp-lab", "--json", "--top", "1000"]) == 0
    shaped = {c["acl_id"]: c for c in json.loads(capsys.readouterr().out)["candidates"]}
    by_shaped = sorted(shaped, key=lambda a: -shaped[a]["score"])
    assert set(by_shaped[:50]) == set(by_blend[:50]), "the same papers reach the top 50"
    assert [shaped[a]["score"] for a in by_shaped[:50]] == pytest.approx([plain[a]["score"] for a in by_blend[:50]])
    assert by_shaped.index(lifted) < 12 and shaped[lifted]["parts"]["taste"] > 0
    assert all(shaped[a]["score"] == pytest.approx(plain[a]["score"]) for a in by_blend[50:])
    for c in shaped.values():
        assert c["score"] == pytest.approx(sum(c["parts"].values()), abs=1e-3), c


def test_a_window_asked_for_narrows_the_channels_own_and_never_widens_it(
    lab_env: dict[str, Any], db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recommend --window-days N` ranks what serving would offer the channel, within the last N days: a fit that
    learnt the channel picks among the last 60 days is not widened to a year (a weekly replay through the command
    line ranks the pool a replay ranks), and a narrower N narrows it. A channel with no window of its own gets N."""
    from socialrag import storage
    from socialrag.recommender.rank.calibrate import default_model

    others = lab_env["others"]
    ids = lab_env["ids"]
    ages = {**{a: 5 for a in others[10:20]}, **{a: 40 for a in others[20:30]}}  # the rest are 194 days old
    with db.connection() as conn:
        for acl, days in ages.items():
            day = (AS_OF - timedelta(days=days)).date()
            conn.execute(
                "UPDATE papers SET publication_date = %s, date_precision = 'day' WHERE id = %s", (day, ids[acl])
            )

    def ages_offered(*window: str) -> set[int]:
        args = ["recommend", "nlp-lab", "--json", "--as-of", AS_OF.isoformat(), "--top", "500", *window]
        assert main(args) == 0
        found = json.loads(capsys.readouterr().out)["candidates"]
        assert found, "something is offered"
        return {ages.get(c["acl_id"], 194) for c in found}

    assert ages_offered("--window-days", "365") == {5, 40, 194}  # no window of its own: the one asked for
    learnt = {**default_model().to_json(), "window_days": 60.0, "decision": "kept the default blend: too few shares"}
    with db.connection() as conn:
        storage.rankers.save_fit(conn, "T0LAB", "C1", AS_OF - timedelta(hours=1), learnt, 5, 100)
    assert ages_offered() == {5, 40}
    assert ages_offered("--window-days", "365") == {5, 40}, "a year asked for is still the channel's 60 days"
    assert ages_offered("--window-days", "20") == {5}
    with db.connection() as conn:  # the papers 40 days old are outside 39.6 days, as the replay has it
        learnt = {**learnt, "window_days": 39.6}
        storage.rankers.save_fit(conn, "T0LAB", "C1", AS_OF - timedelta(minutes=30), learnt, 5, 100)
    assert ages_offered() == {5}, "the learnt window is used as it is, not rounded up to 40 days"
    for odd in ("0", "-30", "1000000"):
        assert main(["recommend", "nlp-lab", "--window-days", odd]) == 2
        assert "--window-days takes a number of days from 1 to 36500" in capsys.readouterr().err


@pytest.mark.parametrize("odd", ["0", "-3", "1001"])
def test_a_number_of_candidates_outside_reason_is_refused_before_any_work(
    odd: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """`--top -3` listed all but the last three; a million asked for every candidate's identifiers. Both are refused
    with what is allowed, before a database is opened (the home named here does not exist)."""
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/absent")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    assert main(["recommend", "nlp-lab", "--top", odd]) == 2
    assert "--top takes a number of candidates from 1 to 1000" in capsys.readouterr().err


def test_stored_text_reaches_the_terminal_shown_never_obeyed(
    lab_env: dict[str, Any], db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """A title from a catalog file or a source, or a member's name, can carry a terminal's escape sequences (OSC 52
    writes the operator's clipboard, CSI 2J clears the screen): `recommend`, `ask` and `eval` print them escaped."""
    hostile = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J"
    with db.connection() as conn:
        conn.execute("UPDATE papers SET title = title || %(h)s", {"h": hostile})
        conn.execute("UPDATE members SET display_name = display_name || %(h)s", {"h": hostile})
        conn.execute(
            "UPDATE channels SET name = name || %(h)s", {"h": hostile}
        )  # as an export's channels.json may have it
    commands = (
        ["recommend", "C1", "--as-of", AS_OF.isoformat(), "--style", "template"],
        ["ask", "C1", "who shared the most", "--as-of", AS_OF.isoformat()],
        ["ask", "C1", "parsing", "--as-of", AS_OF.isoformat()],
        ["eval", "C1", "--warmup", "2"],
        ["refit", "C1", "--as-of", AS_OF.isoformat()],
    )
    for command in commands:
        assert main(command) == 0, command
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out, command
        assert "\\x1b]52;c;" in out, command  # shown, escaped
