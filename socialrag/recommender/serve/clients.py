"""The process's clients of the online services, built once from ``Settings`` (none offline), and the candidate
sources a channel's settings ask for among them."""

from __future__ import annotations

from dataclasses import dataclass

from socialrag.config import Settings
from socialrag.db import Connect, Database
from socialrag.knowledge.embed import Embed
from socialrag.knowledge.papers.arxiv import ArxivApi
from socialrag.knowledge.papers.biorxiv import SERVERS, BiorxivApi
from socialrag.knowledge.papers.openalex import OpenAlex
from socialrag.knowledge.papers.orcid import OrcidApi
from socialrag.knowledge.papers.pubmed import PubMed
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.knowledge.shared_pace import DatabasePace
from socialrag.recommender.retrieve.candidates import (
    ArxivNew,
    CandidateSource,
    CatalogSource,
    FocusSearch,
    SearchCache,
    SemanticScholarRecommendations,
)
from socialrag.recommender.retrieve.field_sources import FieldTerms, OpenAlexRecent, PreprintServer, PubMedRecent
from socialrag.recommender.retrieve.followed import FollowedPapers
from socialrag.storage.settings import ChannelSettings


@dataclass
class OnlineClients:
    s2: SemanticScholar | None = None
    arxiv: ArxivApi | None = None
    orcid: OrcidApi | None = None
    openalex: OpenAlex | None = None
    biorxiv: BiorxivApi | None = None
    pubmed: PubMed | None = None

    @classmethod
    def open(cls, settings: Settings, db: Database) -> OnlineClients:
        """The clients of every service, paced together with every process on ``db``; none offline."""
        if settings.offline:
            return cls()
        timeout, shared, contact = settings.http_timeout, DatabasePace(db), settings.contact_email
        return cls(
            s2=SemanticScholar(settings.s2_api_url, api_key=settings.s2_api_key, timeout=timeout, shared=shared),
            arxiv=ArxivApi(settings.arxiv_api_url, timeout=timeout, shared=shared),
            orcid=OrcidApi(settings.orcid_api_url, timeout=timeout),
            openalex=OpenAlex(settings.openalex_api_url, mailto=contact, timeout=timeout, shared=shared),
            biorxiv=BiorxivApi(settings.biorxiv_api_url, timeout=timeout, shared=shared),
            pubmed=PubMed(
                settings.pubmed_api_url, api_key=settings.pubmed_api_key, email=contact, timeout=timeout, shared=shared
            ),
        )

    def candidate_sources(
        self,
        chosen: ChannelSettings,
        embed: Embed,
        cache: SearchCache,
        *,
        focused: bool = False,
        beside: Connect | None = None,
    ) -> list[CandidateSource]:
        """The channel's sources that this process can reach (offline: only the local catalog), and while it
        has a focus, the search of its words on the online ones among them. The catalog searches on ``beside``
        as well as on the caller's connection when given (``CatalogSource``)."""
        names = chosen.sources
        terms = FieldTerms.from_settings(chosen.source_terms, chosen.sources_chosen)
        sources: list[CandidateSource] = [FollowedPapers()]  # first: its candidates keep its name
        for name in names:
            if name == "catalog":
                sources.append(CatalogSource(beside=beside))
            elif name == "semanticscholar" and self.s2 is not None:
                sources.append(SemanticScholarRecommendations(self.s2, embed=embed))
            elif name == "arxiv" and self.arxiv is not None:
                sources.append(ArxivNew(self.arxiv, embed=embed))
            elif name == "openalex" and self.openalex is not None:
                sources.append(OpenAlexRecent(self.openalex, terms, embed=embed))
            elif name in ("biorxiv", "medrxiv") and self.biorxiv is not None:
                for server in SERVERS:
                    if server == name:
                        sources.append(PreprintServer(self.biorxiv, server, terms, embed=embed, cache=cache))
            elif name == "pubmed" and self.pubmed is not None:
                sources.append(PubMedRecent(self.pubmed, terms, embed=embed))
        s2 = self.s2 if "semanticscholar" in names else None
        arxiv = self.arxiv if "arxiv" in names else None
        if focused and (s2 is not None or arxiv is not None):
            sources.insert(0, FocusSearch(s2, arxiv, embed=embed, cache=cache))
        return sources

    def close(self) -> None:
        for client in (self.s2, self.arxiv, self.orcid, self.openalex, self.biorxiv, self.pubmed):
            if client is not None:
                client.close()
        self.s2 = self.arxiv = self.orcid = self.openalex = self.biorxiv = self.pubmed = None
