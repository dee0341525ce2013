"""A post's paper read before it goes out: the channel's pick, when PaperPing has never looked for its full text,
is read at once (bounded by the reader's time for a paper), so that the post may name the section that meets what
the group discussed. Every channel's pick is read the same way, whether or not another channel had the paper: a
section line says nothing of any other channel."""

from __future__ import annotations

from collections.abc import Callable

from socialrag import storage
from socialrag.db import Database
from socialrag.recommender.serve.paper_text import text_in_use
from socialrag.recommender.serve.pipeline import Recommendation

ReadNow = Callable[[int], bool]  # reads a paper's full text now; True when it was read


def pick_with_text(
    recommend: Callable[[], Recommendation], db: Database, team_id: str, channel_id: str, read_now: ReadNow | None
) -> Recommendation:
    """The channel's pick; when its full text was never looked for and the channel uses full text, read first and
    the pick made again (the same pick, its explanation now able to name a section)."""
    found = recommend()
    if read_now is None or found.draft is None:
        return found
    paper_id = found.draft.paper.paper_id
    with db.connection() as conn:
        if not text_in_use(conn, team_id, channel_id) or storage.fulltext.load_fulltext_state(conn, paper_id):
            return found
    if not read_now(paper_id):
        return found
    again = recommend()
    return again if again.draft is not None else found
