"""Postgres advisory locks: work that one process of ``paperping run`` does at a time (the index sweep, the
citation fill, one channel's history read), whichever process gets there first."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg


def try_transaction_lock(conn: psycopg.Connection, key: int) -> bool:
    """Take the lock ``key`` until this transaction ends; False when another session holds it."""
    row = conn.execute("SELECT pg_try_advisory_xact_lock(%(k)s)", {"k": key}).fetchone()
    return bool(row and row[0])


def try_session_lock(conn: psycopg.Connection, key: int) -> bool:
    """Take the lock ``key`` until ``release_session_lock`` (or the connection closes); False when held."""
    row = conn.execute("SELECT pg_try_advisory_lock(%(k)s)", {"k": key}).fetchone()
    return bool(row and row[0])


def release_session_lock(conn: psycopg.Connection, key: int) -> None:
    conn.execute("SELECT pg_advisory_unlock(%(k)s)", {"k": key})


def try_named_lock(conn: psycopg.Connection, kind: int, name: str) -> bool:
    """Take the lock on ``name`` of work ``kind`` (one channel's history read, say) until ``release_named_lock``
    or the connection closes; False when another session holds it."""
    row = conn.execute("SELECT pg_try_advisory_lock(%(k)s, hashtext(%(n)s))", {"k": kind, "n": name}).fetchone()
    return bool(row and row[0])


def release_named_lock(conn: psycopg.Connection, kind: int, name: str) -> None:
    conn.execute("SELECT pg_advisory_unlock(%(k)s, hashtext(%(n)s))", {"k": kind, "n": name})


def hold_lock(conn: psycopg.Connection, name: str, *, shared: bool = False) -> None:
    """Wait for the lock on ``name`` ("emoji:T1:C1") and hold it until this transaction ends; ``shared``: beside
    other shared holders, never beside the one who holds it alone."""
    wait = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    conn.execute(f"SELECT {wait}(hashtextextended(%(n)s, 0))", {"n": name})  # one of the two names above


def hold_forget_lists(conn: psycopg.Connection, team_ids: Sequence[str], *, exclusive: bool = False) -> None:
    """Lock these workspaces' forget lists until the transaction ends, in one order (no two forget-me wait on each
    other): shared by a write that leaves the forgotten out, exclusive by a forget-me. So a forget-me waits for a
    write that checked the list before it, and deletes what that one wrote; and a write that takes the lock after a
    forget-me waits for it to end, then sees the member on the list. Taken in a statement of its own before the
    write: a statement's view of the list is fixed when it starts, so a check inside the write alone would miss a
    forget-me still under way."""
    for team_id in sorted({t for t in team_ids if t}):
        hold_lock(conn, f"forget-list:{team_id}", shared=not exclusive)
