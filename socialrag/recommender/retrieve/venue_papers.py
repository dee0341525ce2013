"""Where a conference's papers come from (`/paperping conference VENUE YEAR`): the venue a member named matched
against the venues the knowledge base knows (by name or series, so "ACL" finds the 58th Annual Meeting), and
Semantic Scholar's bulk search by venue and year. ``VenuePapers`` hands the papers found to the channel's
ranking as its only candidate source."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from socialrag.errors import SourceError
from socialrag.knowledge.papers.semanticscholar import SemanticScholar, s2_papers
from socialrag.models import Paper
from socialrag.names import fold_text, normalize_venue, short_venue
from socialrag.recommender.retrieve.candidates import PAPER_FIELDS_RECS, CandidateQuery

log = logging.getLogger(__name__)

NEAREST = 5  # venue names offered when the one typed is not known
S2_PAGES = 3  # pages of Semantic Scholar's bulk search...
S2_PAGE = 1000  # ...of at most this many papers each, whatever an answer holds


@dataclass(frozen=True)
class VenueMatch:
    ids: tuple[int, ...]  # the known venues that match
    names: tuple[str, ...]  # their display names
    nearest: tuple[str, ...]  # when none matches: the closest names known


def match_venue(typed: str, venues: Sequence[tuple[int, str, str]]) -> VenueMatch:
    """The venues a member meant by ``typed`` (``ACL``, ``EMNLP``, ``NeurIPS``, or a full name): the same name or
    short name, or the same series. Pure."""
    want, key = fold_text(typed), normalize_venue(typed)[0]
    ids, names = [], []
    for vid, name, series in venues:
        if want in (fold_text(name), fold_text(short_venue(series) or "")) or series == key:
            ids.append(vid)
            names.append(name)
    if ids:
        return VenueMatch(tuple(ids), tuple(dict.fromkeys(names)), ())
    known = list(dict.fromkeys(name for _, name, _ in venues))
    close = difflib.get_close_matches(typed, known, n=NEAREST, cutoff=0.5)
    close += [n for n in known if want and want in fold_text(n) and n not in close]
    return VenueMatch((), (), tuple(close[:NEAREST]))


def search_venue(s2: SemanticScholar, venue: str, year: int) -> list[Paper]:
    """The papers Semantic Scholar lists for ``venue`` in ``year`` (its bulk search, a few pages); a failure
    costs these papers only."""
    papers: list[Paper] = []
    token: str | None = None
    for _ in range(S2_PAGES):
        params = {"venue": venue, "year": str(year), "fields": PAPER_FIELDS_RECS, **({"token": token} if token else {})}
        try:
            body = s2.http.request_json("GET", "graph/v1/paper/search/bulk", params=params)
        except SourceError as exc:
            log.warning("Semantic Scholar venue search: %s", exc)
            break
        found = body.get("data") if isinstance(body, dict) else None
        papers += s2_papers(found, S2_PAGE)  # no more than a page holds
        token = body.get("token") if isinstance(body, dict) else None
        token = token if isinstance(token, str) and len(token) < 1000 else None
        if not token:
            break
    return papers


class VenuePapers:
    """A candidate source that offers exactly the papers of one venue and year, whatever the channel's window."""

    name = "conference"

    def __init__(self, paper_ids: Sequence[int]) -> None:
        self.paper_ids = list(paper_ids)

    def fetch_candidates(self, conn: psycopg.Connection, query: CandidateQuery) -> list[int]:
        return list(self.paper_ids)
