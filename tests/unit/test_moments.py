"""A refit computes the features of every moment it learns from and judges on at once (``moment_features``).
They must be exactly what one moment at a time gives (``features`` of ``state_at``), on a history with the gaps
real ones have: papers with no date, no authors, no venue or no popularity reading; members who reacted badly;
PaperPing posts nobody answered; moments before anything was shared; a paper shared again later."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from socialrag.recommender.rank import moments
from socialrag.recommender.rank.features import FEATURES, features
from socialrag.recommender.rank.history import ChannelHistory, build_history
from socialrag.recommender.rank.moments import moment_features
from socialrag.recommender.rank.universe import build_universe
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper
from socialrag.rows import AuthorRef, MemberInfo, PaperInfo, ReactionEvent, Reply, Share

START = datetime(2024, 1, 1, tzinfo=UTC)
MEMBERS = ("U1", "U2", "U3", "U4")


def gappy_history(seed: int) -> ChannelHistory:
    """120 papers shared over a year by four members and PaperPing (BOT), 300 more in the pool; one in five with
    no date, one in four with no authors, one in three with no venue, one in three never read for popularity."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(6, 12))
    infos: dict[int, PaperInfo] = {}
    vectors: dict[int, np.ndarray] = {}
    readings: dict[int, list[tuple[float, float]]] = {}
    papers: dict[int, SharedPaper] = {}
    for pid in range(1, 421):
        published = START + timedelta(days=int(rng.integers(-300, 365)))
        authors = () if pid % 4 == 0 else tuple(AuthorRef(int(a), f"A{a}", f"a{a}") for a in rng.integers(1, 60, 3))
        infos[pid] = PaperInfo(
            pid,
            f"P{pid}",
            None if pid % 3 == 0 else int(rng.integers(1, 8)),
            None,
            None if pid % 5 == 0 else published.year,
            authors,
            publication_date=None if pid % 5 == 0 else published.date(),
            date_precision=None if pid % 5 == 0 else ("month" if pid % 7 == 0 else "day"),
        )
        v = topics[pid % 6] + 0.5 * rng.normal(size=12)
        vectors[pid] = (v / np.linalg.norm(v)).astype(np.float32)
        if pid % 3:
            readings[pid] = [(published.timestamp() + 86400.0 * 60 * k, float(k * (pid % 40))) for k in range(1, 5)]
        if pid > 120:
            continue
        at = START + timedelta(days=3 * pid, hours=int(rng.integers(0, 12)))
        by = "BOT" if pid % 9 == 0 else MEMBERS[int(rng.integers(0, 4))]
        shares = [Share(pid, f"{pid}.1", by, at, None, None)]
        if pid % 11 == 0:  # shared again a month later
            shares.append(Share(pid + 1000, f"{pid}.2", "U2", at + timedelta(days=30), None, None))
        reactions = []
        if by != "BOT" or pid % 2 == 0:  # PaperPing's odd posts nobody answered
            emoji = "-1" if pid % 6 == 0 else "+1"
            reactions.append(ReactionEvent(pid, MEMBERS[pid % 4], emoji, at + timedelta(hours=2)))
        replies = [Reply(pid + 2000, pid, "U3", at + timedelta(days=1), "a reply", None)] if pid % 5 == 1 else []
        papers[pid] = SharedPaper(infos[pid], shares, reactions, replies)
    members = {m: MemberInfo(m, m.lower(), author_ids=frozenset({int(m[1:]) * 7})) for m in MEMBERS}
    members["BOT"] = MemberInfo("BOT", "paperping", is_bot=True)
    ctx = ChannelContext("T", "C", START + timedelta(days=400), papers, members, {}, {}, {}, vectors)
    universe = build_universe({pid: infos[pid] for pid in infos}, vectors, readings)
    return build_history(ctx, universe, 45.0)


def one_at_a_time(
    history: ChannelHistory, at: np.ndarray, rows: list[np.ndarray], known_by: float | None
) -> list[np.ndarray]:
    u = history.universe
    out = []
    for t, r in zip(at.tolist(), rows, strict=True):
        state, known = history.state_at(t, vectors=False)
        sims = u.vectors[r] @ u.vectors[history.rows[known]].T
        out.append(features(state, u.candidates(r, t, known_by), t, sims))
    return out


@pytest.mark.parametrize("known_by", [None, (START + timedelta(days=400)).timestamp()])
@pytest.mark.parametrize("seed", [1, 2])
def test_all_moments_at_once_are_each_moment_on_its_own(seed: int, known_by: float | None) -> None:
    history = gappy_history(seed)
    u = history.universe
    rng = np.random.default_rng(seed + 10)
    at = np.sort(rng.uniform((START - timedelta(days=5)).timestamp(), (START + timedelta(days=380)).timestamp(), 60))
    rows = [rng.choice(len(u.ids), size=int(rng.integers(0, 50)), replace=False) for _ in at]
    got = moment_features(history, at, rows, known_by)
    want = one_at_a_time(history, at, rows, known_by)
    assert [g.shape for g in got] == [w.shape for w in want]
    both = np.vstack(got), np.vstack(want)
    assert (np.isnan(both[0]) == np.isnan(both[1])).all()
    assert np.nanmax(np.abs(both[0] - both[1])) < 1e-6
    # the history has every kind of gap, so every feature was both known and unknown somewhere, and every
    # channel-dependent feature took more than one value
    for name in ("popularity", "recency", "authors", "venue"):
        column = both[1][:, FEATURES.index(name)]
        assert np.isnan(column).any() and (~np.isnan(column)).any(), name
    for name in ("similarity", "nearest", "disliked", "nearby", "interest", "member_author"):
        assert len(np.unique(np.nan_to_num(both[1][:, FEATURES.index(name)]))) > 1, name


def test_memory_is_held_to_chunks_however_many_moments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny chunks give the same answer: candidates, their cosines and the moments' weights are taken a bounded
    number at a time (for a channel of many thousands of papers, the cosines chunk by chunk)."""
    history = gappy_history(3)
    u = history.universe
    rng = np.random.default_rng(4)
    at = np.sort(rng.uniform(START.timestamp(), (START + timedelta(days=370)).timestamp(), 30))
    rows = [rng.choice(len(u.ids), size=20, replace=False) for _ in at]
    whole = np.vstack(moment_features(history, at, rows))
    monkeypatch.setattr(moments, "CHUNK_CELLS", 50)
    monkeypatch.setattr(moments, "MIN_CHUNK_ROWS", 7)
    monkeypatch.setattr(moments, "EVENT_CELLS", 50)
    monkeypatch.setattr(moments, "COSINE_CELLS", 0)
    chunked = np.vstack(moment_features(history, at, rows))
    assert np.array_equal(np.isnan(whole), np.isnan(chunked))
    assert np.nanmax(np.abs(whole - chunked)) < 1e-6


def test_no_moments_and_no_candidates() -> None:
    history = gappy_history(5)
    assert moment_features(history, np.zeros(0), []) == []
    empty = moment_features(history, np.array([START.timestamp()]), [np.zeros(0, dtype=np.int64)])
    assert [e.shape for e in empty] == [(0, len(FEATURES))]
