"""A group is a union of interests, not their average: a member who reads about two things is named for a
paper on either, and the ranking measures a candidate against the interest it fits best (its nearest liked
papers, the member whose own shares it is closest to), so a quiet interest is not drowned by the loudest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from socialrag.recommender.rank.features import FEATURES, features
from socialrag.recommender.rank.history import build_history
from socialrag.recommender.rank.universe import build_universe
from socialrag.recommender.retrieve.context import ChannelContext, SharedPaper
from socialrag.recommender.retrieve.signals import Relations, SignalInput, signal_h8
from socialrag.rows import AuthorRef, MemberInfo, PaperInfo, Share

NOW = datetime(2026, 5, 1, tzinfo=UTC)
DIM = 16


def direction(k: int) -> np.ndarray:
    v = np.zeros(DIM)
    v[k] = 1.0
    return v


def near(base: np.ndarray, rng: np.random.Generator, spread: float = 0.15) -> np.ndarray:
    v = base + rng.normal(scale=spread, size=DIM)
    return (v / np.linalg.norm(v)).astype(np.float32)


def info(pid: int) -> PaperInfo:
    return PaperInfo(pid, f"Paper {pid}", None, None, 2026, (AuthorRef(pid, f"A{pid}", f"a{pid}"),), None)


def lab(shares: list[tuple[str, np.ndarray]]) -> tuple[ChannelContext, dict[int, np.ndarray]]:
    """A channel where each (member, vector) is one paper that member shared, a day apart."""
    papers, vectors = {}, {}
    for pid, (member, vector) in enumerate(shares, start=1):
        at = NOW - timedelta(days=len(shares) - pid + 1)
        papers[pid] = SharedPaper(info(pid), [Share(pid, f"{pid}.0", member, at, None, None)])
        vectors[pid] = vector
    members = {m: MemberInfo(m, m.lower()) for m, _ in shares}
    return ChannelContext("T", "C", NOW, papers, members, {}, {}, {}, vectors=vectors), vectors


def test_a_member_who_reads_about_two_things_is_named_for_either() -> None:
    """Ana shares parsing and speech papers alike; Ben shares papers between the two and beyond. For a speech
    paper, the mean of Ana's papers sits between her topics and would name Ben; her closest papers name her."""
    rng = np.random.default_rng(1)
    parsing, speech = direction(0), direction(1)
    between = (parsing + speech + direction(2)) / np.sqrt(3)
    shares = [("ANA", near(parsing, rng)) for _ in range(4)] + [("ANA", near(speech, rng)) for _ in range(4)]
    shares += [("BEN", near(between, rng, 0.05)) for _ in range(3)]
    ctx, _ = lab(shares)
    found = signal_h8(SignalInput(ctx, info(99), near(speech, rng, 0.05), Relations()))
    assert [s.members for s in found] == [("ANA",)]
    # a paper on neither of Ana's topics nor near Ben's names nobody
    assert signal_h8(SignalInput(ctx, info(99), direction(7).astype(np.float32), Relations())) == []


def test_the_ranking_measures_a_candidate_against_the_interest_it_fits_best() -> None:
    """Twelve summarization papers from three members, three bias papers from one: the average over the channel
    (``similarity``) prefers a paper between the two topics to a paper squarely on bias; the closest member's own
    shares (``interest``) prefer the bias paper. ``nearby`` is the mean of the ten closest liked papers."""
    rng = np.random.default_rng(2)
    summarization, bias = direction(0), direction(1)
    shares = [(m, near(summarization, rng, 0.1)) for m in ("ANA", "BEN", "CHO") for _ in range(4)]
    shares += [("DEV", near(bias, rng, 0.1)) for _ in range(3)]
    ctx, vectors = lab(shares)
    infos = {pid: p.info for pid, p in ctx.papers.items()}
    on_bias, between = near(bias, rng, 0.05), near(summarization * 0.75 + bias * 0.66, rng, 0.02)
    infos.update({100: info(100), 101: info(101)})
    vectors.update({100: on_bias, 101: between})
    universe = build_universe(infos, vectors)
    history = build_history(ctx, universe, 60.0)
    state, _ = history.state_at(NOW.timestamp())
    assert len(state.interests) == 4, "one interest per member with two or more shares of their own"
    rows = np.array([universe.index[100], universe.index[101]])
    x = features(state, universe.candidates(rows, NOW.timestamp()), NOW.timestamp())
    sim, nearby, interest = (FEATURES.index(f) for f in ("similarity", "nearby", "interest"))
    assert x[1, sim] > x[0, sim], "the channel's average is pulled toward its loudest topic"
    assert x[0, interest] > x[1, interest] > 0.5
    liked = np.stack([vectors[pid] for pid in range(1, 16)])
    for k, v in enumerate((on_bias, between)):
        assert np.isclose(x[k, nearby], np.sort(np.maximum(liked @ v, 0.0))[-10:].mean())
    # interests are what was shared before the moment ranked: Dev's bias papers are not known a week earlier
    early, _ = history.state_at((NOW - timedelta(days=4)).timestamp())
    assert len(early.interests) == 3


def test_a_channel_where_no_member_shared_twice_has_no_interest_to_measure() -> None:
    """Unknown is not zero: with no member's own interest yet, the feature is unknown, not a low value."""
    rng = np.random.default_rng(3)
    ctx, vectors = lab([(f"M{k}", near(direction(k), rng)) for k in range(5)])
    infos = {pid: p.info for pid, p in ctx.papers.items()} | {50: info(50)}
    vectors[50] = near(direction(0), rng)
    universe = build_universe(infos, vectors)
    state, _ = build_history(ctx, universe, 60.0).state_at(NOW.timestamp())
    x = features(state, universe.candidates(np.array([universe.index[50]]), NOW.timestamp()), NOW.timestamp())
    assert len(state.interests) == 0 and np.isnan(x[0, FEATURES.index("interest")])
    assert not np.isnan(x[0, FEATURES.index("nearby")])


def test_a_single_members_interest_is_the_channels_centroid_and_counts_for_nothing() -> None:
    """A group of one (a curator's list) has one interest: the centroid of everything shared, which ``similarity``
    already measures and the ten nearest papers beat. ``interest`` stays unknown until a second member has one, or
    the channel declares one (a focus)."""
    rng = np.random.default_rng(4)
    ctx, vectors = lab([("ANA", near(direction(k % 2), rng)) for k in range(6)])
    infos = {pid: p.info for pid, p in ctx.papers.items()} | {50: info(50)}
    vectors[50] = near(direction(0), rng)
    universe = build_universe(infos, vectors)
    history = build_history(ctx, universe, 60.0)
    cands = universe.candidates(np.array([universe.index[50]]), NOW.timestamp())
    state, _ = history.state_at(NOW.timestamp())
    assert len(state.interests) == 1 and np.isnan(
        features(state, cands, NOW.timestamp())[0, FEATURES.index("interest")]
    )
    focused, _ = history.state_at(NOW.timestamp(), direction(0))
    assert features(focused, cands, NOW.timestamp())[0, FEATURES.index("interest")] > 0.5, "a focus is an interest"


def test_the_catalog_is_searched_around_each_members_own_interest() -> None:
    """Twenty summarization shares from three members would fill every seed of the catalog search; Dev's bias
    papers are searched too, as Dev's own interest (a member with one share has none yet)."""
    from socialrag.recommender.retrieve.candidates import CandidateQuery, CatalogSource, member_interests

    rng = np.random.default_rng(4)
    shares = [(m, near(direction(0), rng, 0.1)) for m in ("ANA", "BEN", "CHO") for _ in range(7)]
    shares += [("DEV", near(direction(1), rng, 0.1)) for _ in range(3)] + [("EVE", near(direction(2), rng))]
    ctx, _ = lab(shares)
    centres = member_interests(ctx, 10)
    assert len(centres) == 4, "Eve shared once"
    assert max(float(c @ direction(1)) for c in centres) > 0.9
    weights = {pid: 1.0 if pid <= 21 else 0.1 for pid in ctx.papers}
    queries = CatalogSource(seeds=20).query_vectors(CandidateQuery(ctx, weights, "m"))
    assert sum(float(q @ direction(1)) > 0.9 for q in queries) >= 1
    assert len(member_interests(ctx, 2)) == 2, "only the busiest members, when asked for fewer"
