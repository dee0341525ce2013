"""Every LLM call: prompt name, version and hash, model, tokens and outcome."""

from __future__ import annotations

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
