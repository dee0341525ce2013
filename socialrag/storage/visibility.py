"""Which stored papers a channel may see: a paper known only because another channel shared it (a private
channel, another workspace) is that channel's, never another's candidate, citer, planner row or venue name."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

# A paper a channel may see (``p``; the channel in ``%(team)s`` and ``%(channel)s``): the catalog's, one a source
# found that no channel shared, or one this channel shared itself. A paper known only because another channel
# shared it (a private channel, another workspace) is that channel's: never another's candidate, citer or row.
VISIBLE = """
(p.in_catalog
 OR NOT EXISTS (SELECT 1 FROM message_papers o WHERE o.paper_id = p.id)
 OR EXISTS (SELECT 1 FROM message_papers m WHERE m.paper_id = p.id
             AND m.team_id = %(team)s AND m.channel_id = %(channel)s))
"""


def load_visible(conn: psycopg.Connection, paper_ids: Sequence[int], team_id: str, channel_id: str) -> set[int]:
    """Those of ``paper_ids`` the channel may see (``VISIBLE``)."""
    if not paper_ids:
        return set()
    rows = conn.execute(
        f"SELECT p.id FROM papers p WHERE p.id = ANY(%(ids)s::bigint[]) AND {VISIBLE}",
        {"ids": list(paper_ids), "team": team_id, "channel": channel_id},
    ).fetchall()
    return {int(r[0]) for r in rows}
