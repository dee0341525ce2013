"""``paperping recommend``, ``eval`` and ``refit``: what would be posted, how well the ranking replays, and
learning a channel's ranking from its history now."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from typing import Any

from socialrag.cli.subcommand import CHANNEL_HELP, OpenDatabase, Subcommand, parse_time, resolve_channel, shown
from socialrag.config import Settings
from socialrag.errors import InputError
from socialrag.models import STYLES, Draft, Style, draft_json
from socialrag.recommender import Recommendation, Recommender, describe_fact, describe_ranker, render_plain

ID_KEYS = {"arxiv": "arxiv_id", "doi": "doi", "acl": "acl_id", "s2": "s2_id"}
MAX_WINDOW_DAYS = 36500  # a hundred years: more reaches no paper and would overflow a date
MAX_TOP = 1000  # a list to read, not an export of the whole ranking
MAX_WARMUP = 100_000  # shared papers learnt from before the replay's first step


def run_recommend(
    recommender: Recommender,
    channel: str,
    *,
    as_of: datetime | None = None,
    window_days: int | None = None,
    style: Style | None = None,
    top: int = 5,
) -> Recommendation:
    """``paperping recommend``: the channel named on the command line, through the process's recommender."""
    team_id, channel_id, _ = resolve_channel(recommender.db, channel)
    return recommender.recommend(team_id, channel_id, at=as_of, style=style, window_days=window_days, top=top)


def candidate_json(rec: Recommendation) -> dict[str, Any]:
    out = []
    for c in rec.candidates:
        item: dict[str, Any] = {ID_KEYS[k]: v for k, v in c.ids.items() if k in ID_KEYS}
        item.update(title=c.title, score=round(c.score, 4), source=c.source, parts=c.parts)
        out.append(item)
    return {"candidates": out, "draft": draft_json(rec.draft) if rec.draft else None}


def render_draft_text(draft: Draft) -> str:
    """The message as a member would read it, in a terminal: names for mentions, metadata below."""
    names = {uid: draft.named.get(uid, uid) for uid in draft.named}
    lines = [render_plain(draft.explanation, names)]
    if draft.thread_link:
        lines.append(f"Earlier thread: {draft.thread_title} <{draft.thread_link}>")
    p = draft.paper
    meta = ", ".join(x for x in (", ".join(p.authors), p.venue or "", str(p.year or "")) if x)
    lines.append(f"{p.title} <{p.url}>" + (f" ({meta})" if meta else ""))
    return shown("\n".join(lines))


def recommend(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    if args.style and args.style not in STYLES:
        raise InputError(f"--style takes one of {', '.join(STYLES)}")
    if args.window_days is not None and not 1 <= args.window_days <= MAX_WINDOW_DAYS:
        raise InputError(f"--window-days takes a number of days from 1 to {MAX_WINDOW_DAYS}")
    if not 1 <= args.top <= MAX_TOP:
        raise InputError(f"--top takes a number of candidates from 1 to {MAX_TOP}")
    db = open_db()
    with Recommender(settings, db) as recommender:
        rec = run_recommend(
            recommender,
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
        print(f"{i:>3}. {c.score:.3f}  [{c.source}] {shown(c.title or '')}  ({shown(ident)})")
    assert rec.draft is not None
    print("\nSignals used:")
    for s in rec.draft.signals:
        print(f"  {s.kind}: {shown(describe_fact(s))}")
        if s.permalinks:
            print(f"      from {shown(', '.join(s.permalinks))}")
    note = f" (fell back: {shown(rec.draft.fallback_reason)})" if rec.draft.fallback_reason else ""
    print(f"\nMessage ({rec.draft.style}{note}):\n")
    print(render_draft_text(rec.draft))
    return 0


def evaluate(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    if not 1 <= args.warmup <= MAX_WARMUP:
        raise InputError(f"--warmup takes a number of shared papers from 1 to {MAX_WARMUP:,}")
    db = open_db()
    team_id, channel_id, stored_name = resolve_channel(db, args.channel)
    name = shown(stored_name)
    with Recommender(settings, db) as recommender:
        report = recommender.evaluate(team_id, channel_id, warmup=args.warmup)
    if report.steps == 0:
        print(f"#{name}: nothing to replay yet (it needs more than {args.warmup} shared papers with embeddings)")
        return 0
    print(
        f"Replay of #{name}, week by week: rank the papers published in the year before each week and score the\n"
        "ranking against what the channel really shared that week (P@5, R@10, MRR of the first one, and how\n"
        "many topics the top 10 spans)\n"
    )
    print(report.table())
    if report.fit is not None:
        print("\n" + describe_ranker(report.fit))
    return 0


def refit(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    db = open_db()
    team_id, channel_id, stored_name = resolve_channel(db, args.channel)
    name = shown(stored_name)
    as_of = parse_time(args.as_of) if args.as_of else None
    with Recommender(settings, db) as recommender:
        model = recommender.refit(team_id, channel_id, now=as_of)
    when = f" before {as_of:%Y-%m-%d %H:%M} UTC (stored with that date)" if as_of else ""
    print(f"#{name}: learnt from {model.shares} shares ({model.pairs} pairs){when}.\n{describe_ranker(model)}")
    return 0


def recommend_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", help=CHANNEL_HELP)
    parser.add_argument(
        "--top", type=int, default=5, help=f"how many ranked candidates to show (1 to {MAX_TOP:,}; default 5)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--as-of", help="replay: use only history before this ISO time")
    parser.add_argument(
        "--window-days",
        type=int,
        help="only candidates published in the N days before --as-of or now (within the channel's own window)",
    )
    parser.add_argument("--style", help="tldr, template, template+tldr or llm (default: the channel's)")


def eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", help=CHANNEL_HELP)
    parser.add_argument(
        "--warmup", type=int, default=5, help="shared papers to learn from before the first step (default 5)"
    )


def refit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", help=CHANNEL_HELP)
    parser.add_argument(
        "--as-of", help="backtest: learn only from what was known before this ISO time; `recommend --as-of` uses it"
    )


RECOMMEND = Subcommand(
    "recommend", "show what would be posted in a channel, without posting", recommend_arguments, recommend
)
EVAL = Subcommand(
    "eval", "replay a channel's history and measure the ranking against baselines", eval_arguments, evaluate
)
REFIT = Subcommand(
    "refit", "learn a channel's ranking from its history now (the scheduler does it weekly)", refit_arguments, refit
)
