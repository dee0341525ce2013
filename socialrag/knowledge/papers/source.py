"""The one small interface every metadata source implements, and shared parsing helpers."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from itertools import islice
from typing import Protocol, TypeVar

from socialrag.knowledge.link_ids import fits_index
from socialrag.models import Author, Paper
from socialrag.text import BARE_DOMAIN, as_data, shaping_joiner

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


MAX_NAME = 200  # characters of an author's or an affiliation's name PaperPing keeps
MAX_AUTHORS = 200  # authors kept of one paper, in its order (a collaboration's paper can list thousands)
MAX_AFFILIATIONS = 5  # affiliations kept of one author
# what no name shows: controls (a terminal's escape, C1's CSI included), format characters (direction overrides,
# zero-width spaces and joiners, tag characters) and surrogates
_HIDDEN = frozenset(("Cc", "Cf", "Cs"))


def _shown(text: str) -> str:
    """``text`` without its hidden characters, except a joiner that shapes a word (``text.shaping_joiner``)."""
    return "".join(
        ch for i, ch in enumerate(text) if unicodedata.category(ch) not in _HIDDEN or shaping_joiner(text, i)
    )


def clean_name(value: object) -> str | None:
    """A person's or an institution's name from outside, as PaperPing keeps it: ``clean_text``, every control
    or format character dropped (before the markup, so that none can hide it), then its markup (``as_data``:
    mentions, broadcasts, link markup, addresses, the prompts' fence; initials run into a surname are spaced, not
    dropped as an address), cut at ``MAX_NAME`` characters. None
    when no letter or digit is left (a name of only markup or punctuation)."""
    text = clean_text(value[: 8 * MAX_NAME] if isinstance(value, str) else value)
    if text is None:
        return None
    text = _shown(text)
    text = as_data(BARE_DOMAIN.sub(_spaced_initials, text))
    text = text[:MAX_NAME].rstrip()
    return text if any(ch.isalnum() for ch in text) else None


def _spaced_initials(found: re.Match[str]) -> str:
    """Initials run into a capitalised surname ("A.De Vries", "W.Ai"), which ``as_data`` would drop as a web
    address (turning the author into another, or into none), with the space after each dot that the name is
    written with elsewhere: then no link can form from it. Anything else that reads as an address is left to
    ``as_data``."""
    *initials, last = found.group(0).split(".")
    if all(len(i) == 1 and i.isupper() for i in initials) and last.isalpha() and last[0].isupper():
        return ". ".join([*initials, last])
    return found.group(0)


def clean_names(values: object) -> tuple[str, ...]:
    """``clean_name`` of each string of a list (an author's affiliations), at most ``MAX_AFFILIATIONS`` of them,
    each once; anything else in it is left out."""
    if not isinstance(values, list | tuple):
        return ()
    return tuple(dict.fromkeys(n for n in map(clean_name, values[: 4 * MAX_AFFILIATIONS]) if n))[:MAX_AFFILIATIONS]


def bound_authors(authors: Iterable[Author]) -> tuple[Author, ...]:
    """``authors`` as PaperPing keeps them: each name and affiliation ``clean_name``d, an author left with no
    name left out, the first ``MAX_AUTHORS`` of them (of at most four times as many read) with at most
    ``MAX_AFFILIATIONS`` affiliations each, and the Semantic Scholar ids and ORCIDs too long for the index dropped."""
    out: list[Author] = []
    for a in islice(authors, 4 * MAX_AUTHORS):
        if len(out) >= MAX_AUTHORS:
            break
        name = clean_name(a.name)
        if name is None:
            continue
        places = clean_names(a.affiliations)
        s2, orcid = a.s2_author_id, a.orcid
        s2 = s2 if s2 is None or fits_index(s2) else None
        orcid = orcid if orcid is None or fits_index(orcid) else None
        out.append(replace(a, name=name, affiliations=places, s2_author_id=s2, orcid=orcid))
    return tuple(out)


def bound_paper(paper: Paper) -> Paper:
    """A paper a source found, as PaperPing keeps it: without the identifiers too long to keep (its own
    identities, its references'), and with its authors bounded and their names cleaned (``bound_authors``).
    Checked here, before anything is stored, because one overlong key fails the write of every paper stored with
    it, and because authors' names reach posts, prompts and terminals from here."""
    references = tuple(r for r in paper.references if fits_index(r.value))
    return replace(paper, ids=bounded_ids(paper.ids), references=references, authors=bound_authors(paper.authors))
