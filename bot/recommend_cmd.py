"""``paperping recommend`` and ``paperping eval``: what would be posted, and how well the ranking replays."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from socialrag import store
from socialrag.candidates import ArxivNew, CandidateSource, CatalogSource, SemanticScholarRecommendations
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.embed import Embedder, embed_papers
from socialrag.errors import InputError
from socialrag.explain import render_plain
from socialrag.generate import GenerateConfig
from socialrag.llm import LLMCall, LLMClient
from socialrag.models import STYLES, Draft, Style
from socialrag.papers.arxiv import ArxivApi
from socialrag.papers.semanticscholar import SemanticScholar
from socialrag.pipeline import Recommendation, RecommendConfig, recommend
from socialrag.rank import ScoringConfig

ID_KEYS = {"arxiv": "arxiv_id", "doi": "doi", "acl": "acl_id", "s2": "s2_id"}


def parse_time(text: str) -> datetime:
    """An ISO date or date-time; naive times are UTC."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"--as-of takes an ISO date such as 2021-03-01 or 2021-03-01T09:00, not {text!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def resolve_channel(db: Database, name_or_id: str) -> tuple[str, str, str]:
    with db.connection() as conn:
        found = store.find_channels(conn, name_or_id)
    if not found:
        raise InputError(f"no stored channel named {name_or_id}; `paperping status` lists them")
    if len(found) > 1:
        raise InputError(f"{name_or_id} names {len(found)} channels; give the channel id instead")
    return found[0]


def build_candidate_sources(settings: Settings, names: list[str], embedder: Embedder) -> list[CandidateSource]:
    """The channel's chosen sources; offline, only the local catalog."""

    def embed(conn: Any, ids: list[int]) -> int:
        return embed_papers(conn, embedder, ids)

    sources: list[CandidateSource] = []
    for name in names:
        if name == "catalog":
            sources.append(CatalogSource())
        elif settings.offline:
            continue
        elif name == "semanticscholar":
            sources.append(
                SemanticScholarRecommendations(
                    SemanticScholar(settings.s2_api_url, api_key=settings.s2_api_key, timeout=settings.http_timeout),
                    embed=embed,
                )
            )
        elif name == "arxiv":
            sources.append(ArxivNew(ArxivApi(settings.arxiv_api_url, timeout=settings.http_timeout), embed=embed))
    return sources


def build_llm(settings: Settings, db: Database, team_id: str, channel_id: str) -> LLMClient | None:
    if settings.offline or not (settings.openai_api_key or settings.openai_base_url):
        return None

    def record(call: LLMCall) -> None:
        with db.connection() as conn:
            store.record_llm_call(conn, team_id, channel_id, call)

    return LLMClient(
        model=settings.llm_model,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key,
        timeout=settings.llm_timeout,
        recorder=record,
    )


def run_recommend(
    settings: Settings,
    db: Database,
    channel: str,
    *,
    as_of: datetime | None = None,
    window_days: int | None = None,
    style: Style | None = None,
    top: int = 5,
) -> Recommendation:
    team_id, channel_id, _ = resolve_channel(db, channel)
    with db.connection() as conn:
        chosen = store.load_channel_settings(conn, team_id, channel_id)
    now = as_of or datetime.now(UTC)
    embedder = Embedder(settings.embed_model)
    focus = None
    if chosen["focus_text"] and chosen["focus_expires_at"] and chosen["focus_expires_at"] > now:
        focus = embedder.encode([chosen["focus_text"]])[0]
    llm = build_llm(settings, db, team_id, channel_id)
    default_style: Style = "llm" if llm else "template+tldr"
    config = RecommendConfig(
        model=settings.embed_model,
        style=style or chosen["style"] or default_style,
        window_days=window_days,
        signal_window_days=settings.signal_window_days,
        top=top,
        focus=focus,
        scoring=ScoringConfig(half_life_days=settings.half_life_days, popularity_weight=settings.popularity_weight),
        generate=GenerateConfig(limit=settings.explanation_limit, quiet_days=settings.mention_quiet_days),
    )
    sources = build_candidate_sources(settings, chosen["sources"], embedder)
    if config.style != "llm":
        llm = None
    with db.connection() as conn:
        return recommend(conn, team_id, channel_id, now, sources, config, llm=llm)


def candidate_json(rec: Recommendation) -> dict[str, Any]:
    out = []
    for c in rec.candidates:
        item: dict[str, Any] = {ID_KEYS[k]: v for k, v in c.ids.items() if k in ID_KEYS}
        item.update(title=c.title, score=round(c.score, 4), source=c.source, parts=c.parts)
        out.append(item)
    return {"candidates": out, "draft": draft_json(rec.draft) if rec.draft else None}


def draft_json(draft: Draft) -> dict[str, Any]:
    data = asdict(draft)
    data["signals"] = [{**asdict(s), "category": s.category} for s in draft.signals]
    return data


def render_draft_text(draft: Draft) -> str:
    """The message as a member would read it, in a terminal: names for mentions, metadata below."""
    names = {uid: draft.named.get(uid, uid) for uid in draft.named}
    lines = [render_plain(draft.explanation, names)]
    if draft.thread_link:
        lines.append(f"Earlier thread: {draft.thread_title} <{draft.thread_link}>")
    p = draft.paper
    meta = ", ".join(x for x in (", ".join(p.authors), p.venue or "", str(p.year or "")) if x)
    lines.append(f"{p.title} <{p.url}>" + (f" ({meta})" if meta else ""))
    return "\n".join(lines)


def cmd_recommend(args: argparse.Namespace, settings: Settings, db: Database) -> int:
    if args.style and args.style not in STYLES:
        raise InputError(f"--style takes one of {', '.join(STYLES)}")
    rec = run_recommend(
        settings,
        db,
        args.channel,
        as_of=parse_time(args.as_of) if args.as_of else None,
        window_days=args.window_days,
        style=args.style,
        top=args.top,
    )
    if args.json:
        print(json.dumps(candidate_json(rec), indent=2, default=str))
        return 0
    if not rec.candidates:
        print("no candidates: import a catalog (paperping catalog import) or allow the online sources")
        return 0
    print("Candidates:")
    for i, c in enumerate(rec.candidates, 1):
        ident = ", ".join(f"{k}:{v}" for k, v in c.ids.items() if k in ID_KEYS)
        print(f"{i:>3}. {c.score:.3f}  [{c.source}] {c.title}  ({ident})")
    assert rec.draft is not None
    print("\nSignals used:")
    for s in rec.draft.signals:
        print(f"  {s.kind}: {json.dumps(s.facts, default=str)}")
        if s.permalinks:
            print(f"      from {', '.join(s.permalinks)}")
    note = f" (fell back: {rec.draft.fallback_reason})" if rec.draft.fallback_reason else ""
    print(f"\nMessage ({rec.draft.style}{note}):\n")
    print(render_draft_text(rec.draft))
    return 0


def cmd_eval(args: argparse.Namespace, settings: Settings, db: Database) -> int:
    from socialrag.evaluate import evaluate_channel

    team_id, channel_id, name = resolve_channel(db, args.channel)
    with db.connection() as conn:
        report = evaluate_channel(
            conn,
            team_id,
            channel_id,
            settings.embed_model,
            warmup=args.warmup,
            config=ScoringConfig(half_life_days=settings.half_life_days, popularity_weight=settings.popularity_weight),
        )
    if report.steps == 0:
        print(f"#{name}: nothing to replay yet (it needs more than {args.warmup} shared papers with embeddings)")
        return 0
    print(f"Replay of #{name}: at each share, rank the catalog plus the paper really shared next\n")
    print(report.table())
    return 0
