"""The recommender service: one per process, built from ``Settings``, used by every caller.

The Slack app's scheduler, ``paperping recommend``, ``paperping eval`` and the demo all ask this object for a
channel's recommendation. It owns the things worth building once: the embedding model, the HTTP clients of
the online candidate sources, and the LLM client. A channel is always addressed by ``(team_id,
channel_id)``: names are resolved by the callers, at their edge.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from types import TracebackType

import numpy as np
import psycopg

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge.embed import Embedder, embed_papers
from socialrag.knowledge.papers.orcid import OrcidApi
from socialrag.knowledge.papers.semanticscholar import SemanticScholar
from socialrag.knowledge.readiness import focus_active
from socialrag.models import Digest, Draft, NoPost, Style
from socialrag.recommender.explain.generate import GenerateConfig, explanation_limit, paper_url
from socialrag.recommender.explain.llm import LLMCall, LLMClient
from socialrag.recommender.explain.styles import build_llm, resolve_style
from socialrag.recommender.rank.calibrate import RankerModel
from socialrag.recommender.rank.coverage import Coverage
from socialrag.recommender.rank.engagement import ScoringConfig
from socialrag.recommender.rank.evaluate import EvalReport, evaluate_channel
from socialrag.recommender.rank.refit import load_fit, refit_channel
from socialrag.recommender.retrieve.candidates import CandidateSource, SearchCache, search_words
from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.recommender.retrieve.topics import Steer
from socialrag.recommender.serve.channel_profile import (
    ChannelProfile,
    build_profile,
    keep_steer,
    load_coverage,
    load_steers,
    steer_row,
)
from socialrag.recommender.serve.clients import OnlineClients
from socialrag.recommender.serve.conference import LISTED, ConferencePlan, VenueNotFound, plan_conference
from socialrag.recommender.serve.digest import recommend_digest
from socialrag.recommender.serve.on_demand import SHORTLIST, Like, closest
from socialrag.recommender.serve.onboarding import POOL, onboarding_digest, onboarding_due, ratings_note
from socialrag.recommender.serve.picks import Picks, member_profile, merge_picks
from socialrag.recommender.serve.pipeline import (
    ChannelRequest,
    Recommendation,
    RecommendConfig,
    is_serving,
    rank_channel,
    recommend,
)
from socialrag.recommender.serve.read_ahead import ReadNow, pick_with_text
from socialrag.recommender.serve.refits import RefitSchedule
from socialrag.storage.embeddings import as_array, load_vectors
from socialrag.storage.settings import ChannelSettings
from socialrag.storage.topic_steering import SteerRow

log = logging.getLogger(__name__)

SEARCH_BESIDE_WAIT_S = 1.0  # how long the catalog's second search waits for a free connection before giving up on it


class Recommender:
    """Recommendations for any channel of any workspace, from one set of models and clients. ``embedder`` may be
    passed in (the demo brings vectors it ships); everything else comes from settings."""

    def __init__(self, settings: Settings, db: Database, *, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.db = db
        self.embedder = embedder or Embedder(
            settings.embed_model, device=settings.embed_device, cache=settings.embed_cache_dir
        )
        self.llm = build_llm(settings)
        self.searches = SearchCache()  # online searches for papers on demand, shared by the process's members
        self.clients = OnlineClients.open(settings, db)
        self.read_now: ReadNow | None = None  # reads a pick's full text before its post (``paperping run`` sets it)
        self.refits = RefitSchedule(db)  # the channels this process relearns, and those whose refit failed

    @property
    def semantic_scholar(self) -> SemanticScholar | None:
        """The process's Semantic Scholar client (None offline): authors are looked up through it."""
        return self.clients.s2

    @property
    def orcid(self) -> OrcidApi | None:
        """ORCID's public API (None offline): the name on a record."""
        return self.clients.orcid

    @property
    def llm_configured(self) -> bool:
        return self.llm is not None

    def scoring(self) -> ScoringConfig:
        s = self.settings
        return ScoringConfig(half_life_days=s.half_life_days, popularity_weight=s.popularity_weight)

    def candidate_sources(self, chosen: ChannelSettings, *, focused: bool = False) -> list[CandidateSource]:
        """The channel's sources that this process can reach (``OnlineClients.candidate_sources``)."""

        def embed(conn: psycopg.Connection, ids: list[int]) -> int:
            return embed_papers(conn, self.embedder, ids)

        # the catalog's searches run on two connections; one not free within a second is not waited for
        beside = partial(self.db.connection, wait=SEARCH_BESIDE_WAIT_S)
        return self.clients.candidate_sources(chosen, embed, self.searches, focused=focused, beside=beside)

    def recommend(
        self,
        team_id: str,
        channel_id: str,
        *,
        at: datetime | None = None,
        style: Style | None = None,
        window_days: int | None = None,
        top: int = 5,
    ) -> Recommendation:
        """What PaperPing would post in this channel at ``at`` (default now): ranked candidates and a draft.
        ``style`` overrides the channel's own choice for this one recommendation."""
        now = at or datetime.now(UTC)
        with self.db.connection() as conn:
            chosen = storage.settings.load_channel_settings(conn, team_id, channel_id)
        config = self._config(team_id, channel_id, chosen, now, style=style, window_days=window_days, top=top)
        llm = self.llm_for(team_id, channel_id) if config.style == "llm" else None
        sources = self.candidate_sources(chosen, focused=config.focus_words is not None)
        # autocommit: candidate sources and the LLM wait on the network, and no transaction may stay open
        # (holding locks) meanwhile; each source writes what it found in a short transaction of its own
        with self.db.connection(autocommit=True) as conn:
            return recommend(conn, ChannelRequest(team_id, channel_id, now, sources, config), llm=llm)

    def recommend_digest(self, team_id: str, channel_id: str, size: int, *, at: datetime | None = None) -> Digest | str:
        """The channel's weekly digest of ``size`` papers at ``at`` (default now), or why there is none."""
        now = at or datetime.now(UTC)
        with self.db.connection() as conn:
            chosen = storage.settings.load_channel_settings(conn, team_id, channel_id)
        config = self._config(team_id, channel_id, chosen, now, style="template", top=size)
        sources = self.candidate_sources(chosen, focused=config.focus_words is not None)
        with self.db.connection(autocommit=True) as conn:
            return recommend_digest(conn, ChannelRequest(team_id, channel_id, now, sources, config), size)

    def conference(
        self, team_id: str, channel_id: str, venue: str, year: int, *, at: datetime | None = None
    ) -> ConferencePlan | VenueNotFound:
        """The papers of ``venue`` in ``year`` this channel would most want, ranked with its own ranking."""
        now = at or datetime.now(UTC)
        with self.db.connection() as conn:
            chosen = storage.settings.load_channel_settings(conn, team_id, channel_id)
        config = self._config(team_id, channel_id, chosen, now, style="template", top=LISTED)
        request = ChannelRequest(team_id, channel_id, now, [], config)

        def embed(conn: psycopg.Connection, ids: list[int]) -> int:
            return embed_papers(conn, self.embedder, ids)

        with self.db.connection(autocommit=True) as conn:
            return plan_conference(conn, request, venue, year, s2=self.clients.s2, embed=embed)

    def draft_for_slot(
        self, team_id: str, channel_id: str, at: datetime, style: Style | None
    ) -> Draft | Digest | NoPost:
        """A scheduled slot's draft (``serve.slots.SlotChooser``): the first day's papers to rate when they are
        due, else the channel's pick at ``at`` (saying once that it used those ratings), or why none."""
        first_day = self.first_day(team_id, channel_id, at)
        if first_day is not None:
            return first_day
        pick = partial(self.recommend, team_id, channel_id, at=at, style=style)
        found = pick_with_text(pick, self.db, team_id, channel_id, self.read_now)
        if found.draft is None:
            return NoPost(found.empty_reason or "no candidate was found")
        with self.db.connection() as conn:
            used = ratings_note(conn, team_id, channel_id, at)
        note = " ".join(n for n in (found.draft.note, used) if n) or None
        return replace(found.draft, note=note)

    def digest_for_slot(self, team_id: str, channel_id: str, at: datetime, size: int) -> Digest | NoPost:
        """A digest channel's slot: the first day's papers to rate when due, else the week's ``size`` papers, or
        why there are none."""
        made = self.first_day(team_id, channel_id, at) or self.recommend_digest(team_id, channel_id, size, at=at)
        return made if isinstance(made, Digest) else NoPost(made)

    def first_day(self, team_id: str, channel_id: str, at: datetime) -> Digest | None:
        """The five papers to rate, when the channel's first day (or a start-over) is due and can be had."""
        with self.db.connection() as conn:
            reason = onboarding_due(conn, team_id, channel_id)
            if reason is None:
                return None
            chosen = storage.settings.load_channel_settings(conn, team_id, channel_id)
        config = self._config(team_id, channel_id, chosen, at, style="template", top=POOL)
        sources = self.candidate_sources(chosen, focused=config.focus_words is not None)
        with self.db.connection(autocommit=True) as conn:
            return onboarding_digest(conn, ChannelRequest(team_id, channel_id, at, sources, config), reason)

    def _config(
        self,
        team_id: str,
        channel_id: str,
        chosen: ChannelSettings,
        now: datetime,
        *,
        style: Style | None = None,
        window_days: int | None = None,
        top: int = 5,
    ) -> RecommendConfig:
        """How one of this channel's recommendations is made: its style, focus, sources' filters and tone."""
        focused = focus_active(chosen, now)
        return RecommendConfig(
            model=self.embedder.model_name,
            style=resolve_style(style or chosen.style, self.llm_configured),
            window_days=window_days,
            signal_window_days=self.settings.signal_window_days,
            top=top,
            focus=self._focus(chosen, (team_id, channel_id)) if focused else None,
            focus_words=" ".join(search_words(chosen.focus_text or "")) if focused else None,
            focus_papers=frozenset(chosen.focus_paper_ids) if focused else frozenset(),
            categories=tuple(chosen.arxiv_categories),
            steering=self.steering(team_id, channel_id),
            scoring=self.scoring(),
            generate=GenerateConfig(
                limit=explanation_limit(chosen.explanation_length, self.settings.explanation_limit),
                quiet_days=self.settings.mention_quiet_days,
                language=chosen.language,
            ),
            serving=is_serving(now, datetime.now(UTC)),
        )

    def steering(self, team_id: str, channel_id: str) -> tuple[Steer, ...]:
        """The topics members muted or boosted in the channel, for this process's embedding model."""
        with self.db.connection() as conn:
            return load_steers(conn, team_id, channel_id, self.embedder.model_name)

    def profile(self, team_id: str, channel_id: str, at: datetime | None = None) -> ChannelProfile:
        """What PaperPing believes this channel reads (`/paperping profile`), as of ``at`` (default now)."""
        with self.db.connection() as conn:
            return build_profile(conn, team_id, channel_id, self.embedder.model_name, self.scoring(), at)

    def coverage(self, team_id: str, channel_id: str, at: datetime, drafts: list[Draft]) -> Coverage:
        """How much of the group these posts served, against the channel as it was at ``at``."""
        with self.db.connection() as conn:
            return load_coverage(conn, team_id, channel_id, self.embedder.model_name, at, drafts)

    def steer_topic(self, team_id: str, channel_id: str, what: str, action: str, user_id: str) -> SteerRow | None:
        """Mute or boost the topic ``what`` names (its number, or words); what was kept (its label, and the
        member's words when they gave words), or None if nothing usable was named."""
        row = steer_row(
            self.profile(team_id, channel_id), what, action, self.embedder.model_name, user_id, self.embedder.encode
        )
        if row is None:
            return None
        with self.db.connection() as conn:
            keep_steer(conn, team_id, channel_id, row)
        return row

    def papers_like(
        self, team_id: str, channel_id: str, *, words: str = "", paper_ids: Sequence[int] = (), top: int = 5
    ) -> tuple[list[Like], ChannelContext | None]:
        """Papers on demand: the ``top`` papers closest to these words and papers (embedded ones), from the
        channel's candidate sources and ranking, with the channel's context (for names). Nothing is stored."""
        asked = ChannelSettings(focus_text=words, focus_paper_ids=list(paper_ids))
        target = self._focus(asked, (team_id, channel_id))
        if target is None:
            return [], None
        return self.papers_near(team_id, channel_id, target, words=words, exclude=paper_ids, top=top)

    def papers_near(
        self,
        team_id: str,
        channel_id: str,
        target: np.ndarray,
        *,
        words: str = "",
        exclude: Collection[int] = (),
        top: int = 5,
    ) -> tuple[list[Like], ChannelContext | None]:
        """The ``top`` papers of the channel's candidate shortlist closest to ``target``, each with the earlier
        thread of the channel it is closest to; ``exclude`` never comes back."""
        now = datetime.now(UTC)
        with self.db.connection() as conn:
            chosen = storage.settings.load_channel_settings(conn, team_id, channel_id)
        config = RecommendConfig(
            model=self.embedder.model_name,
            style="template",
            top=SHORTLIST,
            focus=target,
            focus_words=" ".join(search_words(words)) or None,
            focus_papers=frozenset(exclude),
            categories=tuple(chosen.arxiv_categories),
            scoring=self.scoring(),
            serving=True,
        )
        sources = self.candidate_sources(chosen, focused=True)
        with self.db.connection(autocommit=True) as conn:
            ranked = rank_channel(conn, ChannelRequest(team_id, channel_id, now, sources, config))
            ids = [c.paper_id for c in ranked.ranked[:SHORTLIST]]
            vectors = load_vectors(conn, self.embedder.model_name, ids, channel=(team_id, channel_id))
            infos = storage.context_rows.load_paper_infos(conn, ids)
            identities = storage.papers.load_identities(conn, ids)
        urls = {pid: paper_url(identities.get(pid, {}), infos[pid].url if pid in infos else None) for pid in ids}
        found = {k: as_array(v) for k, v in vectors.items()}
        return closest(ranked.ranked, found, target, ranked.ctx, urls, top), ranked.ctx

    def personal_picks(self, team_id: str, user_id: str, *, top: int = 5) -> Picks:
        """A member's personal picks: the papers closest to what they shared, liked, clicked and saved in the
        channels they are in with PaperPing (the few where they liked most: ``Profile.channels_to_rank``), each
        from one of those channels with its hook there. Only those channels are read; nothing of another member is
        kept in the answer."""
        with self.db.connection() as conn:
            profile = member_profile(conn, self.embedder.model_name, team_id, user_id)
        if profile.vector is None:
            return Picks([], profile.channels)
        found: list[tuple[str, Like]] = []
        for channel_id in profile.channels_to_rank():  # a few of them: each ranking may ask the paper sources
            likes, _ctx = self.papers_near(team_id, channel_id, profile.vector, exclude=profile.excluded, top=top)
            found += [(channel_id, like) for like in likes]
        return Picks(merge_picks(found, top), profile.channels)

    def evaluate(self, team_id: str, channel_id: str, *, warmup: int = 5) -> EvalReport:
        """``paperping eval``: replay the channel's history with this process's scoring settings."""
        with self.db.connection() as conn:
            return evaluate_channel(
                conn, team_id, channel_id, self.embedder.model_name, warmup=warmup, config=self.scoring()
            )

    def refit(self, team_id: str, channel_id: str, *, now: datetime | None = None) -> RankerModel:
        """Learn the channel's ranking from all of its history now, and keep it with today's date."""
        with self.db.connection() as conn:
            return self._refit_on(conn, team_id, channel_id, now)

    def _refit_on(self, conn: psycopg.Connection, team_id: str, channel_id: str, now: datetime | None) -> RankerModel:
        scoring = self.scoring()
        return refit_channel(
            conn,
            team_id,
            channel_id,
            self.embedder.model_name,
            half_life_days=scoring.half_life_days,
            popularity_weight=scoring.popularity_weight,
            now=now,
            connect=self.db.connection,  # the catalog's papers are read alongside the channel's history
        )

    def refit_due(self, now: datetime, limit: int = 20) -> int:
        """Refit the channels whose fit is a week old or older than their latest feedback (``serve/refits.py``:
        one process at a time, a failed one again an hour later); how many were."""
        return self.refits.run(lambda conn, team, channel: self._refit_on(conn, team, channel, now), now, limit)

    def ranker(self, team_id: str, channel_id: str) -> RankerModel:
        """The channel's ranking in force: its latest fit, or the default blend."""
        with self.db.connection() as conn:
            return load_fit(conn, team_id, channel_id, self.scoring().popularity_weight)

    def _focus(self, chosen: ChannelSettings, channel: tuple[str, str]) -> np.ndarray | None:
        """The focus as one vector: the mean of its words' and of its linked papers' (those embedded yet)."""
        vectors = []
        words = search_words(chosen.focus_text or "")
        if words:
            vectors.append(self.embedder.encode([" ".join(words)])[0])
        if chosen.focus_paper_ids:
            with self.db.connection() as conn:
                stored = load_vectors(conn, self.embedder.model_name, list(chosen.focus_paper_ids), channel=channel)
            vectors += [as_array(v) for v in stored.values()]
        if not vectors:
            return None
        mean = np.mean(np.stack(vectors), axis=0)
        return np.asarray(mean / (np.linalg.norm(mean) or 1.0), dtype=np.float32)

    def llm_for(self, team_id: str, channel_id: str) -> LLMClient | None:
        """The shared LLM client, recording each call under this channel."""
        if self.llm is None:
            return None

        def record(call: LLMCall) -> None:
            with self.db.connection() as conn:
                storage.llm_log.record_llm_call(conn, team_id, channel_id, call)

        return self.llm.with_recorder(record)

    def close(self) -> None:
        self.clients.close()
        if self.llm is not None:
            self.llm.close()

    def __enter__(self) -> Recommender:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
