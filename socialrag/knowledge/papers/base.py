"""The one small interface every metadata source implements, and shared parsing helpers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Protocol

from socialrag.models import Paper


class MetadataSource(Protocol):
    """Looks papers up by their identities; returns one ``Paper`` or None per request, in order."""

    name: str

    def can_fetch(self, ids: dict[str, str]) -> bool: ...

    def fetch_papers(self, requests: Sequence[dict[str, str]]) -> list[Paper | None]: ...

    def close(self) -> None: ...


def parse_date(value: object) -> date | None:
    """An ISO date (or its first 10 characters), or None."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def next_month(day: date) -> date:
    """The first day of the month after ``day``'s."""
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def clean_text(value: object) -> str | None:
    """A string field from outside, with NUL bytes (which Postgres refuses) dropped and spaces folded."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.replace("\x00", "").split())
    return text or None
