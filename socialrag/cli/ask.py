"""``paperping ask CHANNEL "QUESTION" [--json]``: what the channel read and discussed, retrieved as a member's
question in Slack is (`/paperping ask`, a mention, the AI app panel), for operators and replays. The operator
asks as nobody in particular: "what did I miss" needs ``--as MEMBER_ID``."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from socialrag.cli.subcommand import CHANNEL_HELP, OpenDatabase, Subcommand, parse_time, resolve_channel, shown
from socialrag.config import Settings
from socialrag.errors import InputError
from socialrag.recommender import MemoryAnswer, Recommender, ask_memory
from socialrag.text import printable_json

ID_KEYS = {"doi": "doi", "arxiv": "arxiv_id", "acl": "acl_id"}


def answer_json(answer: MemoryAnswer) -> dict[str, Any]:
    """The answer as ``--json`` prints it: the written answer (or null) and the papers in rank order."""
    papers = []
    for item in answer.items:
        paper: dict[str, Any] = {"title": item.title}
        paper |= {key: item.ids.get(scheme) for scheme, key in ID_KEYS.items()}
        paper |= {
            "url": item.url,
            "channel_id": item.channel_id,
            # a member who left or turned mentions off is "a member", with no id
            "shared_by": item.shared_by_name or ("a member" if item.shared_by else None),
            "shared_by_id": item.shared_by if item.shared_by_name else None,
            "posted_by_paperping": item.posted_by_paperping,
            "shared_at": item.shared_at.isoformat(),
            "permalink": item.permalink,
            "replies": item.replies,
            "reactions": item.reactions,
            "saves": item.saves,
        }
        papers.append(paper)
    people = [{"name": p.name, "user_id": p.user_id, "papers": p.papers} for p in answer.people]
    return {
        "question": answer.question,
        "kind": answer.kind,
        "period": answer.period,
        "answer": answer.text,
        "papers": papers,
        "people": people,
    }


def ask(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    question = " ".join(args.question.split())
    if not question or len(question) > 1000:
        raise InputError('ask takes a question of 1 to 1,000 characters: paperping ask CHANNEL "what did we read on X"')
    db = open_db()
    team_id, channel_id, name = resolve_channel(db, args.channel)
    now = parse_time(args.as_of) if args.as_of else datetime.now(UTC)
    with Recommender(settings, db) as recommender:
        llm = recommender.llm_for(team_id, channel_id)
        model = recommender.embedder.model_name

        def encode(text: str) -> Any:
            return recommender.embedder.encode([text])[0]

        with db.connection() as conn:
            answer = ask_memory(conn, model, encode, team_id, [channel_id], args.as_member or "", question, llm, now)
    if args.json:
        print(printable_json(answer_json(answer), indent=2))
        return 0
    print(shown(f"#{name}: {question} ({answer.kind}{', ' + answer.period if answer.period else ''})"))
    if answer.text:
        print(f"\n{shown(answer.text)}\n")
    elif answer.note:
        print(f"(no written answer: {shown(answer.note)})")
    for person in answer.people:
        if answer.words:
            print(f"  {shown(person.name)}: {person.papers} paper{'' if person.papers == 1 else 's'} on it")
        else:
            said = f"shared {person.shared}, replied to {person.replied}, reacted to {person.reacted}"
            print(f"  {shown(person.name)}: {said}")
    for n, item in enumerate(answer.items, start=1):
        who = shown(item.shared_by_name or ("a member" if item.shared_by else "PaperPing"))
        print(f"{n:>3}. {shown(item.title or '')}  ({who}, {item.shared_at:%Y-%m-%d}; {item.replies} replies, "
              f"{item.reactions} reactions, {item.saves} saves)  {shown(item.permalink or '')}")  # fmt: skip
    if not answer.items and not answer.people:
        print("  nothing found")
    return 0


def ask_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", help=CHANNEL_HELP)
    parser.add_argument("question", help="the question, in a member's words")
    parser.add_argument("--json", action="store_true", help="print JSON: the answer and the papers in rank order")
    parser.add_argument("--as", dest="as_member", help='ask as this member id (for "what did I miss")')
    parser.add_argument("--as-of", help="replay: the channel as it was at this ISO time")


COMMAND = Subcommand("ask", "ask what a channel read and discussed, as members do in Slack", ask_arguments, ask)
