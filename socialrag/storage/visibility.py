"""Which stored papers a channel may see: a paper known only because another channel brought it in (shared,
saved or focused on it, or had it in a member's personal picks; a private channel, another workspace) is that
channel's, never another's candidate, citer, planner row or venue name."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

# The channels that brought a paper ``p`` in: by sharing it, saving it (``/paperping save``), sending it to
# Zotero or taking it off their reading list, focusing on it, or getting it in a member's personal picks.
_BROUGHT_IN = """
SELECT team_id, channel_id FROM message_papers WHERE paper_id = p.id
UNION ALL SELECT team_id, channel_id FROM saved_papers WHERE paper_id = p.id
UNION ALL SELECT team_id, channel_id FROM zotero_items WHERE paper_id = p.id
UNION ALL SELECT team_id, channel_id FROM reading_list_removals WHERE paper_id = p.id
UNION ALL SELECT team_id, channel_id FROM personal_picks WHERE paper_id = p.id
UNION ALL SELECT team_id, channel_id FROM channel_settings WHERE p.id = ANY(focus_paper_ids)
"""

# A paper a channel may see (``p``; the channel in ``%(team)s`` and ``%(channel)s``): the catalog's, one a source
# found that no channel brought in, or one this channel brought in itself. A paper only another channel brought
# in (a private channel, another workspace) is that channel's: never another's candidate, citer or row.
VISIBLE = f"""
(p.in_catalog
 OR NOT EXISTS ({_BROUGHT_IN})
 OR EXISTS (SELECT 1 FROM ({_BROUGHT_IN}) b WHERE b.team_id = %(team)s AND b.channel_id = %(channel)s))
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
