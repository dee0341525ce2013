"""Members who asked to be forgotten: their rows scrubbed, and their id kept so that no later import
brings them back."""

from __future__ import annotations

import re
from collections.abc import Sequence

import psycopg

from socialrag.storage.embeddings import drop_orphaned_papers, forget_text_vectors
from socialrag.storage.follow_ups import forget_gone_shares
from socialrag.storage.llm_log import forget_llm_outputs
from socialrag.storage.locks import hold_forget_lists
from socialrag.storage.post_sources import load_team_channels_with_posts, prune_fallen_reasons
from socialrag.storage.queue import requeue_shared
from socialrag.storage.usage import hand_over_limits


def load_forgotten(conn: psycopg.Connection, team_ids: Sequence[str]) -> set[tuple[str, str]]:
    """(team, user) of the members of these workspaces who asked PaperPing to forget them; the lists stay as read
    until the transaction ends (a forget-me meanwhile waits for it, then deletes what it wrote)."""
    hold_forget_lists(conn, team_ids, exclusive=False)
    rows = conn.execute(
        "SELECT team_id, user_id FROM forgotten_members WHERE team_id = ANY(%(t)s::text[])", {"t": list(team_ids)}
    ).fetchall()
    return {(r[0], r[1]) for r in rows}


def load_every_forgotten(conn: psycopg.Connection) -> list[tuple[str, str]]:
    """(team, user) of every member on any workspace's forget list (none in a database without the list)."""
    if conn.execute("SELECT to_regclass('public.forgotten_members') IS NULL").fetchone() == (True,):
        return []
    rows = conn.execute("SELECT team_id, user_id FROM forgotten_members ORDER BY team_id, user_id").fetchall()
    return [(r[0], r[1]) for r in rows]


def is_forgotten(conn: psycopg.Connection, team_ids: Sequence[str], user_id: str) -> bool:
    """Whether the member asked to be forgotten in any of these workspaces (nothing of theirs is stored there)."""
    row = conn.execute(
        "SELECT 1 FROM forgotten_members WHERE team_id = ANY(%(t)s::text[]) AND user_id = %(u)s LIMIT 1",
        {"t": list(team_ids), "u": user_id},
    ).fetchone()
    return row is not None


def remember_member(conn: psycopg.Connection, team_id: str, user_id: str) -> bool:
    """Lift a member's forget-me: what they post from now on is stored again, and the limits that held them on the
    list still do (``hand_over_limits``). False if they were not listed."""
    lifted = (
        conn.execute(
            "DELETE FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
        ).rowcount
        > 0
    )
    if lifted:
        hand_over_limits(conn, team_id, user_id, forgotten=False)
    return lifted


FORMER = "a former member"
# who invited PaperPing into a channel, once that member asked to be forgotten: no member id matches it, so the
# channel's stewards are its workspace's admins, and a member who invites PaperPing again does not take the place
FORMER_STEWARD = "a-former-member"
# a reply (row ``m``) in the thread of a share by member ``%(u)s``
_IN_THEIR_THREAD = """m.is_reply AND EXISTS (
    SELECT 1 FROM messages s WHERE (s.team_id, s.channel_id, s.ts) = (m.team_id, m.channel_id, m.thread_ts)
       AND s.user_id = %(u)s AND NOT s.is_reply)"""
NAMED_FROM = 3  # a display name this long or longer is taken out of stored text; a shorter one matches too much


def _name_pattern(name: str | None) -> str | None:
    """A Postgres regular expression matching ``name`` as a whole word (None for a name too short to look for)."""
    if not name or len(name.strip()) < NAMED_FROM:
        return None
    escaped = re.sub(r"([^A-Za-z0-9 ])", r"\\\1", name.strip())
    return rf"\m{escaped}\M"


def _scrub_member(conn: psycopg.Connection, team_id: str, user_id: str, name: str | None) -> None:
    """The member's id and name out of stored drafts, PaperPing's own posts (a post that @-mentioned or named them:
    thread search no longer finds them there) and LLM logs' errors, and their id out of import checkpoints; what
    the model wrote in the workspace's LLM logs is cleared."""
    params = {"t": team_id, "u": user_id, "n": f'"{name}"' if name else f'"{user_id}"', "like": f"%{user_id}%"}
    conn.execute(
        """
        UPDATE recommendations
           SET draft = replace(replace((draft #- ARRAY['named', %(u)s])::text, %(u)s, 'a-former-member'),
                               %(n)s, '"a former member"')::jsonb
         WHERE team_id = %(t)s AND draft::text LIKE %(like)s
        """,
        params,
    )
    # what the model wrote may quote the member's words anywhere in the workspace: all of it goes, the rows stay
    forget_llm_outputs(conn, team_id)
    pattern = _name_pattern(name)
    conn.execute(
        """
        UPDATE llm_calls
           SET error = CASE WHEN %(p)s::text IS NULL THEN replace(error, %(u)s, '')
                            ELSE regexp_replace(replace(error, %(u)s, ''), %(p)s, %(former)s, 'gi') END
         WHERE team_id = %(t)s AND (error LIKE %(like)s OR (%(p)s::text IS NOT NULL AND error ~* %(p)s))
        """,
        {**params, "p": pattern, "former": FORMER},
    )
    conn.execute(  # PaperPing's own posts: by the workspace's bot user, or by a member stored as a bot
        """
        UPDATE messages m
           SET text = CASE WHEN %(p)s::text IS NULL THEN replace(m.text, '<@' || %(u)s || '>', %(former)s)
                           ELSE regexp_replace(replace(m.text, '<@' || %(u)s || '>', %(former)s),
                                               %(p)s, %(former)s, 'gi')
                      END
         WHERE m.team_id = %(t)s
           AND (m.user_id = (SELECT bot_user_id FROM teams WHERE team_id = %(t)s)
                OR m.user_id IN (SELECT user_id FROM members WHERE team_id = %(t)s AND is_bot))
           AND (m.text LIKE %(like)s OR (%(p)s::text IS NOT NULL AND m.text ~* %(p)s))
        """,
        {**params, "p": pattern, "former": FORMER},
    )
    conn.execute(
        """
        UPDATE import_checkpoints SET state = jsonb_set(state, '{users}', (state -> 'users') - %(u)s)
         WHERE team_id = %(t)s AND state -> 'users' ? %(u)s
        """,
        params,
    )


# the tables whose rows are one member's (their ``user_id``), deleted by forget-me
_MEMBER_ROWS = (
    "saved_papers",
    "reading_list_unsaves",
    "member_cooldowns",
    "llm_usage",
    "personal_picks",
    "author_news",
    "channel_members",
    "member_settings",
    "assistant_threads",
    "members",
    "answer_feedback",
    "announcements",
)
_ASKED_BY = ("followed_authors", "topic_steering")  # the channel's rows that name who asked


def _holds_anything(conn: psycopg.Connection, team_id: str, user_id: str) -> bool:
    """Whether any row of the workspace is the member's or names them as its member (a write that slipped past
    the forget list, or one made before a restore): a forget-me then does its whole work again."""
    checks = [
        f"SELECT 1 FROM {table} WHERE team_id = %(t)s AND user_id = %(u)s"  # the table names are fixed above
        for table in ("messages", "reactions", *_MEMBER_ROWS, *_ASKED_BY)
    ]
    checks += [
        "SELECT 1 FROM installations WHERE team_id = %(t)s AND installer_id = %(u)s",
        "SELECT 1 FROM channel_settings WHERE team_id = %(t)s AND invited_by = %(u)s",
    ]
    found = conn.execute(
        "SELECT EXISTS (" + " UNION ALL ".join(f"({c} LIMIT 1)" for c in checks) + ")", {"t": team_id, "u": user_id}
    ).fetchone()
    return bool(found and found[0])


def forget_member(conn: psycopg.Connection, team_id: str, user_id: str) -> dict[str, int]:
    """Everything PaperPing holds of one member in a workspace: messages, replies (theirs, and others' in the
    threads of their shares), reactions, profile, their id and name in stored drafts, LLM logs, checkpoints and
    channels they invited PaperPing into, the reasons of stored posts that rested on their messages, the ts of
    their shares that follow-ups were said under, what the model wrote in the workspace; and a note that keeps it
    so (``remember_member`` lifts it)."""
    hold_forget_lists(conn, [team_id], exclusive=True)  # a write that read the list before this one ends first
    row = conn.execute(
        "SELECT display_name FROM members WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
    ).fetchone()
    listed = conn.execute(
        "INSERT INTO forgotten_members (team_id, user_id) VALUES (%(t)s, %(u)s) ON CONFLICT DO NOTHING",
        {"t": team_id, "u": user_id},
    ).rowcount
    if not listed and not _holds_anything(conn, team_id, user_id):
        # asked again with nothing of theirs left: the passes over the whole workspace (its drafts, LLM logs,
        # every channel's posts) were done when they were listed, so a repeated forget-me costs a few lookups
        return {"messages": 0, "reactions": 0, "replies": 0, "papers": 0}
    _scrub_member(conn, team_id, user_id, row[0] if row else None)
    # vectors made from the words of the messages about to go, so that nothing of theirs stays in one
    made_from = forget_text_vectors(
        conn, f"m.team_id = %(t)s AND (m.user_id = %(u)s OR {_IN_THEIR_THREAD})", {"t": team_id, "u": user_id}
    )
    theirs = conn.execute(  # papers only their own rows may refer to: saved, picked for them
        """
        SELECT paper_id FROM saved_papers WHERE team_id = %(t)s AND user_id = %(u)s
        UNION SELECT paper_id FROM personal_picks WHERE team_id = %(t)s AND user_id = %(u)s
        """,
        {"t": team_id, "u": user_id},
    ).fetchall()
    counts = {}
    hand_over_limits(conn, team_id, user_id, forgotten=True)  # their own cooldowns and counts go below
    counts["reactions"] = conn.execute(
        "DELETE FROM reactions WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
    ).rowcount
    # the rows of context replies to their shares carry their messages' ts: they go with the messages
    conn.execute(
        """
        DELETE FROM share_replies sr USING messages m
         WHERE m.team_id = %(t)s AND m.user_id = %(u)s
           AND (sr.team_id, sr.channel_id, sr.message_ts) = (m.team_id, m.channel_id, m.ts)
        """,
        {"t": team_id, "u": user_id},
    )
    # others' replies in the threads of their shares go with the shares, as when a share is deleted in Slack
    counts["replies"] = conn.execute(
        f"DELETE FROM messages m WHERE m.team_id = %(t)s AND {_IN_THEIR_THREAD}", {"t": team_id, "u": user_id}
    ).rowcount
    counts["messages"] = conn.execute(
        "DELETE FROM messages WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
    ).rowcount
    forget_gone_shares(conn, team_id)  # the follow-ups in their shares' threads keep no ts of them
    for table in _MEMBER_ROWS:
        conn.execute(
            f"DELETE FROM {table} WHERE team_id = %(t)s AND user_id = %(u)s",  # the table names are fixed above
            {"t": team_id, "u": user_id},
        )
    for table in _ASKED_BY:  # the channel keeps following, muting, boosting
        conn.execute(  # who asked is forgotten; the table names are fixed here
            f"UPDATE {table} SET user_id = NULL WHERE team_id = %(t)s AND user_id = %(u)s",
            {"t": team_id, "u": user_id},
        )
    conn.execute(
        "UPDATE installations SET installer_id = NULL WHERE team_id = %(t)s AND installer_id = %(u)s",
        {"t": team_id, "u": user_id},
    )
    conn.execute(  # the channels they invited PaperPing into are steered by the workspace's admins from now on
        "UPDATE channel_settings SET invited_by = %(former)s WHERE team_id = %(t)s AND invited_by = %(u)s",
        {"t": team_id, "u": user_id, "former": FORMER_STEWARD},
    )
    # a paper only their shares brought in goes with them: a later purge of the workspace could no longer find it
    counts["papers"] = drop_orphaned_papers(conn, made_from, [r[0] for r in theirs])
    requeue_shared(conn, made_from)  # embedded again from the messages that remain
    for channel_id in load_team_channels_with_posts(conn, team_id):  # reasons that rested on their messages
        prune_fallen_reasons(conn, team_id, channel_id)
    return counts


def forget_member_in(conn: psycopg.Connection, team_ids: Sequence[str], user_id: str) -> dict[str, int]:
    """``forget_member`` in each of these workspaces (the one a channel belongs to, and a Slack Connect
    partner's own), with the counts added up."""
    counts = {"messages": 0, "reactions": 0}
    hold_forget_lists(conn, team_ids, exclusive=True)  # both at once, in one order
    for team_id in dict.fromkeys(t for t in team_ids if t):
        for key, n in forget_member(conn, team_id, user_id).items():
            counts[key] = counts.get(key, 0) + n
    return counts
