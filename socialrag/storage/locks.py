"""Postgres advisory locks: work that one process of ``paperping run`` does at a time (the index sweep, the
citation fill), whichever process gets there first."""

from __future__ import annotations

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
