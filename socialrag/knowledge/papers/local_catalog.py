"""The local catalog: candidate papers from a JSON-lines file (``paperping catalog import``).

One object per line with at least one of ``arxiv_id``, ``doi``, ``acl_id``, ``s2_id`` and any of ``title``,
``abstract``, ``authors`` (names), ``venue``, ``year``, ``month`` (a number or a name, as the ACL Anthology
writes it: "November", "Sept", "7", "27--30 January", "October-November"), ``publication_date`` (ISO),
``url``, ``popularity``,
``popularity_history`` (``[[date, value], ...]``, earlier readings of the popularity), ``references``
(identifiers of cited papers). Unknown fields are ignored. Read as a stream, in batches.
"""

from __future__ import annotations

import gzip
import json
import typing
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import IO, Any

import psycopg
from tqdm import tqdm

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import InputError
from socialrag.knowledge.links import doi_identity, normalize_arxiv_id, parse_paper_url
from socialrag.knowledge.papers.source import (
    MAX_YEAR,
    MIN_YEAR,
    bound_authors,
    clean_text,
    parse_date,
    parse_month,
)
from socialrag.models import Author, DatePrecision, Paper, PaperRef

BATCH = 1000
MAX_LINE = 1 << 20  # one catalog line, in bytes
_ID_FIELDS = {"arxiv_id": "arxiv", "doi": "doi", "acl_id": "acl", "s2_id": "s2"}
_SCHEMES = {
    "arxiv",
    "doi",
    "acl",
    "s2",
    "corpus",
    "openreview",
    "pmid",
    "pmcid",
    "openalex",
    "pii",
    "oup",
    "ieee",
    "neurips",
    "pmlr",
    "cvf",
    "acm",
}


@dataclass
class CatalogReport:
    papers: int = 0
    problems: list[str] = field(default_factory=list)


def parse_reference(value: str) -> PaperRef | None:
    """A cited paper given as ``scheme:value``, a bare DOI or arXiv id, or a URL."""
    text = value.strip()
    if text.startswith(("http://", "https://")):
        return parse_paper_url(text)
    scheme, sep, rest = text.partition(":")
    if sep and scheme.lower() in _SCHEMES and rest:
        scheme = scheme.lower()
        rest = rest.strip()
        if scheme == "doi":
            rest = rest.lower()
        elif scheme == "arxiv":
            rest = normalize_arxiv_id(rest) or ""
        return PaperRef(scheme, rest, url=text) if rest else None
    if text.startswith("10."):
        return PaperRef("doi", text.lower(), url=f"https://doi.org/{text}")
    arxiv = normalize_arxiv_id(text)
    return PaperRef("arxiv", arxiv, url=f"https://arxiv.org/abs/{arxiv}") if arxiv else None


def paper_from_catalog(raw: Mapping[str, Any]) -> Paper:
    """One catalog line as a ``Paper``; raises ValueError saying what is wrong."""
    ids: dict[str, str] = {}
    for key, scheme in _ID_FIELDS.items():
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            ids[scheme] = value.strip()
    if "doi" in ids:
        mapped = doi_identity(ids.pop("doi"))
        if mapped:
            ids.setdefault(*mapped)
    if "arxiv" in ids:
        ids["arxiv"] = normalize_arxiv_id(ids["arxiv"]) or ids["arxiv"]
    if not ids:
        raise ValueError("has none of arxiv_id, doi, acl_id, s2_id")
    authors = raw.get("authors") or []
    if not isinstance(authors, list):
        raise ValueError("authors must be a list of names")
    year = raw.get("year")
    if isinstance(year, int) and not isinstance(year, bool) and not MIN_YEAR <= year <= MAX_YEAR:
        raise ValueError(f"year {year} is not a publication year")
    published, precision = _publication(raw.get("publication_date"), year, raw.get("month"))
    popularity = raw.get("popularity")
    if isinstance(popularity, int | float) and not 0 <= popularity < 1e15:
        raise ValueError(f"popularity {popularity} is out of range")
    history = _popularity_history(raw.get("popularity_history"))
    listed = raw.get("references")
    refs = [parse_reference(r) for r in listed if isinstance(r, str)] if isinstance(listed, list) else []
    return Paper(
        ids=ids,
        source="catalog",
        title=clean_text(raw.get("title")),
        abstract=clean_text(raw.get("abstract")),
        authors=bound_authors(Author(name=a) for a in authors if isinstance(a, str)),
        venue=clean_text(raw.get("venue")),
        year=year if isinstance(year, int) and not isinstance(year, bool) else None,
        publication_date=published,
        date_precision=precision,
        url=clean_text(raw.get("url")),
        popularity=float(popularity) if isinstance(popularity, int | float) else None,
        references=tuple(r for r in refs if r is not None),
        popularity_history=history,
    )


MAX_READINGS = 400


def _publication(listed: object, year: object, month: object) -> tuple[date | None, DatePrecision | None]:
    """The publication date and how far it is known: the ISO date when given, else the year's month (and day)
    when the month can be read, else nothing (the year alone is kept as the year)."""
    exact = parse_date(listed)
    if exact is not None:
        return exact, "day"
    if not isinstance(year, int) or isinstance(year, bool):  # an out-of-range year was refused before
        return None, None
    parsed = parse_month(month)
    if parsed is None:
        return None, None
    number, day = parsed
    if day is not None:
        try:
            return date(year, number, day), "day"
        except ValueError:
            pass
    return date(year, number, 1), "month"


def _popularity_history(raw: object) -> tuple[tuple[date, float], ...]:
    """``[["2020-01-01", 12], ...]``: earlier readings of the popularity; at most ``MAX_READINGS`` are kept."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValueError("popularity_history must be a list of [date, value] pairs")
    readings: dict[date, float] = {}
    for item in raw[:MAX_READINGS]:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], int | float)):
            raise ValueError("popularity_history must be a list of [date, value] pairs")
        day = parse_date(item[0])
        if day is None or not 0 <= item[1] < 1e15 or isinstance(item[1], bool):
            raise ValueError(f"popularity_history has a bad reading: {str(item)[:60]}")
        readings[day] = float(item[1])
    return tuple(sorted(readings.items()))


def _open(path: Path) -> IO[bytes]:
    try:
        if path.suffix == ".gz":
            return typing.cast(IO[bytes], gzip.open(path, "rb"))
        return path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read the catalog {path}: {exc}") from exc


def _lines(fh: IO[bytes]) -> Iterator[bytes | None]:
    """The file's lines, each read with at most ``MAX_LINE`` bytes held; a longer one is skipped a piece at a time,
    never held whole (a line of gigabytes, or a ``.gz`` that inflates into one endless line), and given as None."""
    while True:
        line = fh.readline(MAX_LINE)
        if not line:
            return
        if len(line) < MAX_LINE or line.endswith(b"\n"):
            yield line
            continue
        rest = fh.readline(MAX_LINE)
        if not rest:
            yield line  # the last line, exactly MAX_LINE bytes and no newline: whole
            return
        while not rest.endswith(b"\n") and (rest := fh.readline(MAX_LINE)):
            pass
        yield None


def iter_catalog(path: Path, problems: list[str]) -> Iterator[Paper]:
    """Papers of a catalog file; bad lines (longer than ``MAX_LINE``, not UTF-8, not JSON, nested too deeply,
    wrong fields) are reported by line number and skipped. A file damaged partway (a corrupt or cut ``.gz``) gives
    the lines before the damage, and a problem saying where reading stopped comes first among the file's problems,
    where it is seen."""
    first = len(problems)
    number = 0
    with _open(path) as fh:
        try:
            for number, data in enumerate(_lines(fh), 1):
                if data is None:
                    problems.append(
                        f"{path.name} line {number}: longer than {MAX_LINE // 2**20} MB, which no paper needs; skipped"
                    )
                elif data.strip():
                    yield from _read_line(data, f"{path.name} line {number}", problems)
        except (OSError, EOFError, zlib.error) as exc:
            problems.insert(
                first,
                f"{path.name}: reading stopped at line {number + 1}, where the file is damaged ({exc}); "
                "the lines before it were read, the rest could not be",
            )


def _read_line(data: bytes, where: str, problems: list[str]) -> Iterator[Paper]:
    try:
        raw = json.loads(data.decode("utf-8"))
        if not isinstance(raw, dict):
            raise ValueError("is not a JSON object")
        yield paper_from_catalog(raw)
    except ValueError as exc:
        problems.append(f"{where}: {exc}; skipped")
    except RecursionError:
        problems.append(f"{where}: its JSON is nested too deeply to read; skipped")


def import_catalog(db: Database, path: Path, *, progress: bool = False) -> CatalogReport:
    """Import a catalog file; importing it again changes nothing."""
    report = CatalogReport()
    batch: list[Paper] = []
    with tqdm(unit="paper", desc="catalog", disable=not progress, leave=False) as bar:
        for paper in iter_catalog(path, report.problems):
            batch.append(paper)
            if len(batch) >= BATCH:
                report.papers += _write(db, batch, report.problems)
                bar.update(len(batch))
                batch = []
        report.papers += _write(db, batch, report.problems)
        bar.update(len(batch))
    return report


def _write(db: Database, batch: list[Paper], problems: list[str]) -> int:
    """Write a batch; a paper the database refuses is reported and skipped, the others are kept."""

    def write(conn: psycopg.Connection, papers: Sequence[Paper]) -> int:
        storage.papers.record_papers(conn, papers, in_catalog=True)
        return len(papers)

    def refused(paper: Paper, exc: Exception) -> None:
        problems.append(f"paper {paper.ids}: the database refused it ({exc}); skipped")

    return sum(db.write_batch(batch, write, refused))
