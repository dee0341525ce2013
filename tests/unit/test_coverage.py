"""Posts for the whole group: each interest with a tenth of the engagement is owed posts in proportion to it, a
quiet interest gets its turn after the loud one has had its share, and nothing is ever picked twice."""

from __future__ import annotations

import numpy as np

from socialrag.recommender.rank.coverage import Interests, covered
from socialrag.recommender.rank.diversity import diversify

DIM = 12


def axis(k: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[k] = 1.0
    return v


def around(k: int, n: int, rng: np.random.Generator) -> np.ndarray:
    v = axis(k)[None, :] + rng.normal(scale=0.12, size=(n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def three_interests(engagement: tuple[float, ...] = (6.0, 3.0, 1.5, 0.2)) -> Interests:
    k = len(engagement)
    return Interests.of(np.stack([axis(i) for i in range(k)]), np.full(k, 0.6), np.array(engagement))


def test_only_interests_with_a_tenth_of_the_engagement_are_owed_posts() -> None:
    interests = three_interests()
    assert len(interests) == 3 and np.isclose(interests.shares.sum(), 1.0)
    assert np.allclose(interests.shares, np.array([6.0, 3.0, 1.5]) / 10.5)
    rng = np.random.default_rng(0)
    owner = interests.assign(np.vstack([around(0, 2, rng), around(2, 2, rng), around(3, 2, rng)]))
    assert owner.tolist() == [0, 0, 2, 2, -1, -1], "a paper of an interest owed nothing belongs to none"
    empty = Interests.of(np.zeros((0, DIM)), np.zeros(0), np.zeros(0))
    assert len(empty) == 0 and covered(empty, around(0, 3, rng)) == 1.0


def pool(rng: np.random.Generator, groups: list[tuple[int, float]], per: int = 40) -> tuple[np.ndarray, ...]:
    """Candidates around each interest's axis with scores about ``mean``, among 400 unrelated papers scored
    lower, as serving's pools are: most of a week's papers are for someone else."""
    other = rng.normal(size=(400, DIM))
    other[:, : len(groups)] = 0.0
    vectors = [other / np.linalg.norm(other, axis=1, keepdims=True)] + [around(k, per, rng) for k, _ in groups]
    scores = [rng.normal(0.0, 1.0, 400)] + [rng.normal(mean, 0.3, per) for _, mean in groups]
    return np.vstack(vectors).astype(np.float32), np.concatenate(scores)


def test_a_month_of_posts_follows_the_engagement_and_gives_the_quiet_interest_its_turn() -> None:
    """The loud interest's candidates score higher throughout; without coverage all seven posts go to it. With
    it, the posts split about as the engagement does (4:2:1), each paper at most once."""
    rng = np.random.default_rng(1)
    vectors, scores = pool(rng, [(0, 3.5), (1, 2.8), (2, 2.4)])
    interests = Interests.of(np.stack([axis(0), axis(1), axis(2)]), np.full(3, 0.6), np.array([4.0, 2.0, 1.0]))
    plain = diversify(scores, vectors, 7, weight=0.0)[:7]
    assert (interests.assign(vectors[plain]) == 0).all()
    picked = diversify(scores, vectors, 7, weight=0.0, interests=interests)[:7]
    counts = np.bincount(interests.assign(vectors[picked]), minlength=3)
    assert counts.tolist() == [4, 2, 1], counts
    assert len(set(picked.tolist())) == 7
    assert covered(interests, vectors[picked]) == 1.0


def test_posts_already_made_count_toward_what_each_interest_is_owed() -> None:
    """The last month's posts all went to the loud interest: the next pick is the quieter one's best paper,
    even though the loud interest has a higher-scoring candidate."""
    rng = np.random.default_rng(2)
    vectors, scores = pool(rng, [(0, 3.5), (1, 2.8)], per=20)
    interests = Interests.of(np.stack([axis(0), axis(1)]), np.full(2, 0.6), np.array([2.0, 1.0]))
    posted = around(0, 4, rng)

    def first(values: np.ndarray, posts: np.ndarray | None) -> int:
        top = diversify(values, vectors, 1, weight=0.0, interests=interests, posted=posts)[0]
        return int(interests.assign(vectors[top : top + 1])[0])

    assert first(scores, posted) == 1, "the quiet interest's turn"
    assert first(scores, None) == 0, "with no posts, the loud one"
    # a weak paper of the owed interest does not come first: the bonus is bounded
    weak = scores.copy()
    weak[420:] -= 3.0
    assert first(weak, posted) == 0
