"""Storage: every SQL query of PaperPing, one module per family of tables, each function one query (or one
short transaction) on a connection the caller passes in. Nothing outside this package, ``socialrag.db`` and
``socialrag.migrate`` writes SQL; the architecture tests check that.

Callers import the package and name the family: ``storage.messages.upsert_messages(conn, ...)``.
"""

from socialrag.storage import (
    checkpoints,
    citations,
    context_rows,
    embeddings,
    follow_ups,
    followed_authors,
    installs,
    llm_log,
    locks,
    lookups,
    member_picks,
    messages,
    papers,
    posts,
    privacy,
    queue,
    rankers,
    reading_list,
    reports,
    settings,
    share_replies,
    slack_events,
    source_pace,
    usage,
    venues,
    workspaces,
)

__all__ = [
    "checkpoints",
    "citations",
    "context_rows",
    "embeddings",
    "follow_ups",
    "followed_authors",
    "installs",
    "llm_log",
    "locks",
    "lookups",
    "member_picks",
    "messages",
    "papers",
    "posts",
    "privacy",
    "queue",
    "rankers",
    "reading_list",
    "reports",
    "settings",
    "share_replies",
    "slack_events",
    "source_pace",
    "usage",
    "venues",
    "workspaces",
]
