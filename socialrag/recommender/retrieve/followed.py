"""The new papers of the authors a channel follows, waiting for its next slot (``author_news``, noticed by
``socialrag.knowledge.author_watch``): a candidate source that offers them whatever the channel's window, so the
ranking sees them, and the pipeline posts the best of them first."""

from __future__ import annotations

import psycopg

from socialrag import storage
from socialrag.recommender.retrieve.candidates import CandidateQuery

FOLLOWED = "followed"  # the source's name, which the pipeline knows its candidates by


class FollowedPapers:
    name = FOLLOWED

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        return list(storage.followed_authors.load_waiting_followed(conn, query.ctx.team_id, query.ctx.channel_id))
