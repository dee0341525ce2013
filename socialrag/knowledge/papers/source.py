"""The one small interface every metadata source implements, and shared parsing helpers."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Protocol, TypeVar

from socialrag.knowledge.link_ids import fits_index
from socialrag.models import Paper

log = logging.getLogger(__name__)

R = TypeVar("R")

# a publication year PaperPing keeps (the catalog import and every source): outside it a year is unknown
MIN_YEAR, MAX_YEAR = 1000, 2200


class MetadataSource(Protocol):
    """Looks papers up by their identities; returns one ``Paper`` or None per request, in order."""

    name: str

    def can_fetch(self, ids: dict[str, str]) -> bool: ...

    def fetch_papers(self, requests: Sequence[dict[str, str]]) -> list[Paper | None]: ...

    def close(self) -> None: ...


def parse_date(value: object) -> date | None:
    """An ISO date (or its first 10 characters) in a publication year, or None."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        day = date.fromisoformat(value[:10])
    except ValueError:
        return None
    return day if MIN_YEAR <= day.year <= MAX_YEAR else None


def parse_year(value: object) -> int | None:
    """A publication year given as a number or as ASCII digits; None for anything else, a year outside
    ``MIN_YEAR``..``MAX_YEAR`` included (an unknown year stays unknown: it never becomes 0)."""
    if isinstance(value, str):
        text = value.strip()
        value = int(text) if text.isascii() and text.isdecimal() and len(text) <= 6 else None
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value if MIN_YEAR <= value <= MAX_YEAR else None


MAX_COUNT = 2**31 - 1  # the largest count a paper's row holds (a citation count); a larger one is no real count


def parse_count(value: object) -> int | None:
    """A whole number from 0 to ``MAX_COUNT`` given as a number or as ASCII digits (a version, a day, a citation
    count), or None: ``"²".isdigit()`` is true, but it is no number ``int`` reads, and a count of -5, ``true`` or
    10^12 is unknown, not a count."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 <= value <= MAX_COUNT else None
    text = value.strip() if isinstance(value, str) else ""
    return int(text) if text.isascii() and text.isdecimal() and len(text) <= 9 else None


def clean_texts(values: object) -> tuple[str, ...]:
    """``clean_text`` of each string of a list (affiliations, institutions); anything else in it is left out."""
    if not isinstance(values, list | tuple):
        return ()
    return tuple(t for v in values if (t := clean_text(v)))


def next_month(day: date) -> date:
    """The first day of the month after ``day``'s."""
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


# half of a surrogate pair (a JSON ``\ud83d`` without its other half: an emoji cut in two), which UTF-8 cannot hold
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(value: object) -> str | None:
    """A string field from outside, with NUL bytes and lone surrogates (which Postgres refuses) dropped and spaces
    folded."""
    if not isinstance(value, str):
        return None
    text = " ".join(_LONE_SURROGATE.sub("", value.replace("\x00", "")).split())
    return text or None


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def parse_month(value: object) -> tuple[int, int | None] | None:
    """(month, day or None) of a free-text month: "November", "Sept", "7", "05 August", "27--30 January" (the
    first day of a range), "October-November" (the first month). None when no month can be read."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, None) if 1 <= value <= 12 else None
    if not isinstance(value, str):
        return None
    words = re.findall(r"[a-z]+|\d+", value.lower()[:60])
    if len(words) == 1 and words[0].isdecimal():
        number = int(words[0])
        return (number, None) if 1 <= number <= 12 else None
    for i, word in enumerate(words):
        if not word.isdecimal() and len(word) >= 3 and word[:3] in _MONTHS:
            day = int(words[0]) if i > 0 and words[0].isdecimal() and 1 <= int(words[0]) <= 31 else None
            return _MONTHS.index(word[:3]) + 1, day
    return None


def parse_records(source: str, records: Iterable[object], parse: Callable[[object], R | None], most: int) -> list[R]:
    """``parse`` applied to at most ``most`` records of an answer. A record with a field of an unexpected shape
    (a number where a list belongs, a list where a name does) costs that record only: it is counted, logged and
    skipped, and the records around it are kept."""
    out: list[R] = []
    malformed = 0
    for i, record in enumerate(records):
        if i >= most:
            break
        try:
            parsed = parse(record)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            malformed += 1
            continue
        if parsed is not None:
            out.append(parsed)
    if malformed:
        log.warning("%s: skipped %d malformed record(s) of an answer", source, malformed)
    return out


def bounded_ids(ids: Mapping[str, str]) -> dict[str, str]:
    """``ids`` without the identities too long to keep (``link_ids.MAX_ID_BYTES``)."""
    return {scheme: value for scheme, value in ids.items() if fits_index(value)}


def bound_paper(paper: Paper) -> Paper:
    """A paper a source found, without the identifiers too long to keep: its own identities, its references', and
    its authors' Semantic Scholar ids and ORCIDs. Checked here, before anything is stored, because one such key
    fails the write of every paper stored with it."""
    authors = tuple(
        replace(
            a,
            s2_author_id=a.s2_author_id if a.s2_author_id is None or fits_index(a.s2_author_id) else None,
            orcid=a.orcid if a.orcid is None or fits_index(a.orcid) else None,
        )
        for a in paper.authors
    )
    references = tuple(r for r in paper.references if fits_index(r.value))
    return replace(paper, ids=bounded_ids(paper.ids), references=references, authors=authors)
