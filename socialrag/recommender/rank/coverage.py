"""Posts that serve the whole group: the channel's interests (its topics, as the profile clusters them) get posts
in proportion to their engagement, not all to the loudest. Pure (numpy only).

Each interest with at least ``MIN_ENGAGEMENT_SHARE`` of the channel's engagement is owed that share of the posts.
Its claim on the next post follows the Sainte-Laguë rule: its share over ``2 × posts it already got + 1`` among
the channel's last posts (``RECENT_POSTS``, about a month of daily posts). A candidate inside the interest with the
strongest claim gains up to ``COVERAGE_WEIGHT`` standard deviations of score (``diversity.diversify`` adds it
while it picks, counting each pick at once), so a well-ranked paper of an interest that waited long enough
comes first, and a weak one never does. The figure ``covered`` says which interests a run of posts reached.
Pure (numpy, and the profile's k-means for ``clustered_interests``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from socialrag.recommender.retrieve.topics import direction_and_radius, topic_groups

MIN_ENGAGEMENT_SHARE = 0.1  # an interest with less of the channel's engagement is not owed posts
COVERAGE_WEIGHT = 2.0  # in standard deviations of score: what the interest with the strongest claim adds
RECENT_POSTS = 30  # the posts the claims count (about a month of daily posts)
INTEREST_FIT = 0.5  # a paper this close to an interest's direction belongs to it (when none is closer)


@dataclass(frozen=True)
class Interests:
    """The channel's interests: unit directions, the radius of each (a paper within it, or within
    ``INTEREST_FIT``, and closer to no other, belongs to it), and the share of the channel's engagement each
    holds (summing to 1 over those owed posts)."""

    directions: np.ndarray  # (k, d)
    radii: np.ndarray  # (k,)
    shares: np.ndarray  # (k,)

    @staticmethod
    def of(directions: np.ndarray, radii: np.ndarray, engagement: np.ndarray) -> Interests:
        """Only the interests with ``MIN_ENGAGEMENT_SHARE`` of the engagement, their shares renormalised."""
        engagement = np.maximum(np.asarray(engagement, dtype=np.float64), 0.0)
        total = float(engagement.sum())
        keep = engagement >= MIN_ENGAGEMENT_SHARE * total if total > 0 else np.zeros(len(engagement), dtype=bool)
        kept = engagement[keep]
        dim = directions.shape[1] if directions.ndim == 2 else 0
        return Interests(
            np.asarray(directions, dtype=np.float32)[keep].reshape(-1, dim),
            np.asarray(radii, dtype=np.float64)[keep],
            kept / kept.sum() if len(kept) else kept,
        )

    def __len__(self) -> int:
        return len(self.shares)

    def assign(self, vectors: np.ndarray) -> np.ndarray:
        """The interest each vector belongs to (the closest whose radius it is within), or -1."""
        if len(self) == 0 or len(vectors) == 0:
            return np.full(len(vectors), -1, dtype=np.int64)
        sims = np.asarray(vectors, dtype=np.float32) @ self.directions.T
        best = np.argmax(sims, axis=1)
        inside = sims[np.arange(len(vectors)), best] >= np.minimum(self.radii[best], INTEREST_FIT)
        return np.where(inside, best, -1).astype(np.int64)

    def counts(self, posts: np.ndarray | None) -> np.ndarray:
        """How many of these posts fell in each interest."""
        if posts is None or len(posts) == 0 or len(self) == 0:
            return np.zeros(len(self), dtype=np.float64)
        owner = self.assign(posts)
        return np.bincount(owner[owner >= 0], minlength=len(self)).astype(np.float64)

    def bonus(self, counts: np.ndarray) -> np.ndarray:
        """What a candidate of each interest gains now (the strongest claim gains ``COVERAGE_WEIGHT``), with a
        last 0 for a candidate of none."""
        if len(self) == 0:
            return np.zeros(1)
        claim = self.shares / (2.0 * counts + 1.0)
        return np.append(COVERAGE_WEIGHT * claim / (float(claim.max()) or 1.0), 0.0)


def clustered_interests(vectors: np.ndarray, weights: np.ndarray) -> Interests:
    """The interests of a channel whose papers are ``vectors``, engaged with by ``weights``: its topics as the
    profile clusters them (``retrieve.topics``), each owed posts by its engagement. A channel of one topic has
    nothing to balance: no interests."""
    groups = topic_groups(vectors) if len(vectors) >= 2 else []
    if len(groups) < 2:
        return Interests(np.zeros((0, vectors.shape[1]), dtype=np.float32), np.zeros(0), np.zeros(0))
    parts = [direction_and_radius(vectors[g]) for g in groups]
    engagement = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    return Interests.of(
        np.stack([d for d, _ in parts]),
        np.array([r for _, r in parts]),
        np.array([engagement[g].sum() for g in groups]),
    )


def covered(interests: Interests, posts: np.ndarray) -> float:
    """The share of the interests owed posts that got at least one of ``posts`` (1.0 when none is owed)."""
    if len(interests) == 0:
        return 1.0
    return float((interests.counts(posts) > 0).mean())


@dataclass(frozen=True)
class Coverage:
    """How much of the group a run of posts served: the interests owed posts that got one, and the active
    members named as possibly interested."""

    interests: int
    interests_posted: int
    members: int
    members_named: int

    @property
    def interest_share(self) -> float:
        return self.interests_posted / self.interests if self.interests else 1.0

    @property
    def member_share(self) -> float:
        return self.members_named / self.members if self.members else 0.0

    def sentence(self, posts: int) -> str:
        return (
            f"{self.interests_posted} of the channel's {self.interests} topics with a tenth of its engagement got "
            f"one of the {posts} picks; {self.members_named} of its {self.members} active members were named as "
            "possibly interested"
        )
