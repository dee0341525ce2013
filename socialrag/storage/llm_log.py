"""Every LLM call: prompt name, version and hash, model, tokens and outcome."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg


def record_llm_call(conn: psycopg.Connection, team_id: str | None, channel_id: str | None, call: Any) -> None:
    """One LLM call: prompt name, version and hash, model, tokens, latency, outcome (and the answer)."""
    conn.execute(
        """
        INSERT INTO llm_calls (team_id, channel_id, prompt_name, prompt_version, prompt_hash, model, prompt_tokens,
                               completion_tokens, latency_ms, outcome, error, output)
        VALUES (%(t)s, %(c)s, %(name)s, %(version)s, %(hash)s, %(model)s, %(pt)s, %(ct)s, %(ms)s, %(outcome)s,
                %(error)s, %(output)s)
        """,
        {
            "t": team_id,
            "c": channel_id,
            "name": call.prompt_name,
            "version": call.prompt_version,
            "hash": call.prompt_hash,
            "model": call.model,
            "pt": call.prompt_tokens,
            "ct": call.completion_tokens,
            "ms": call.latency_ms,
            "outcome": call.outcome,
            "error": call.error,
            "output": call.output,
        },
    )


def forget_llm_outputs(conn: psycopg.Connection, team_id: str, channel_id: str | None = None) -> int:
    """Clear what the model wrote (``output``) in the LLM logs of a channel, or of a whole workspace: an answer or
    an explanation may have quoted a message since deleted, or a member since forgotten. The rest of each row
    (prompt, model, tokens, outcome) stays. Returns how many rows were cleared."""
    return conn.execute(
        """
        UPDATE llm_calls SET output = NULL
         WHERE team_id = %(t)s AND (%(c)s::text IS NULL OR channel_id = %(c)s) AND output IS NOT NULL
        """,
        {"t": team_id, "c": channel_id},
    ).rowcount


def prune_llm_outputs(conn: psycopg.Connection, before: datetime) -> int:
    """Clear the output of LLM calls made before ``before``: it is kept only for a while, to see what the model
    wrote. Returns how many rows were cleared."""
    return conn.execute(
        "UPDATE llm_calls SET output = NULL WHERE created_at < %(before)s AND output IS NOT NULL", {"before": before}
    ).rowcount
