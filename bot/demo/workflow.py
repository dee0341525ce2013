"""``paperping demo``: the whole workflow offline, on a fictional lab channel and real ACL Anthology papers.

It starts the embedded Postgres (a temporary home, or ``--home``), imports the demo export and catalog,
indexes them (with the shipped embeddings: the demo computes none), makes three recommendations as they would
be posted on three schedule days, lets members react to the first one, and shows how the next one changes.
It writes the Block Kit JSON and an HTML page that renders the posts as Slack would into ``--out``.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bot.demo.extras import (
    forget_share,
    record_post,
    reset_posts,
    show_context_reply,
    show_coverage,
    show_digest,
    show_follow_up,
    show_lists,
    show_profile,
    show_question,
)
from bot.demo.fulltext_scene import show_club, write_club_pieces
from bot.demo.loop import LOOP_BEFORE, LOOP_WIDTH, show_loop
from bot.demo.outputs import BOT, CHANNEL, CHANNEL_NAME, TEAM, load_clicks, private_pieces, write_outputs
from bot.slack.workspace_export import import_export
from bot.views.post_blocks import build_blocks, build_digest_blocks
from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database, open_database
from socialrag.errors import InputError
from socialrag.knowledge import (
    CLICKS,
    Embedder,
    embed_pending,
    import_catalog,
    index_messages,
)
from socialrag.models import Candidate, Draft, Message, Paper, PaperRef, Reaction
from socialrag.names import normalize_person_name
from socialrag.recommender import Recommendation, Recommender, describe_fact, describe_ranker
from socialrag.report import load_report_data, write_report

DATA = Path(__file__).resolve().parent / "data"
AUTHOR_MEMBER = ("U11MATT", "Matt Gardner")
FIRST_POST = datetime(2021, 1, 11, 9, 0, tzinfo=UTC)
SHARE_AT = FIRST_POST + timedelta(days=5)  # a member shares a paper, and PaperPing replies with context
REACTORS = (("U01AMARA", "+1"), ("U06FARID", "fire"), ("U09INES", "+1"))
SAVER = "U09INES"  # clicks *Save* on the first post: the paper goes on the lab's reading list
Say = Callable[[str], None]


class PrecomputedEmbedder(Embedder):
    """Vectors shipped with the demo, by text hash; the real model only for a text not among them."""

    def __init__(self) -> None:
        super().__init__()
        data = np.load(DATA / "embeddings.npz")
        self.table = dict(zip(data["hashes"].tolist(), data["vectors"].astype(np.float32), strict=True))

    @property
    def dimension(self) -> int:
        return 384

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        keys = [hashlib.md5(t.encode()).hexdigest() for t in texts]
        missing = [t for t, k in zip(texts, keys, strict=True) if k not in self.table]
        if missing:
            self.table.update(
                zip(
                    [hashlib.md5(t.encode()).hexdigest() for t in missing],
                    super().encode(missing, batch_size=batch_size),
                    strict=True,
                )
            )
        return np.stack([self.table[k] for k in keys])


def prepare(db: Database, *, embed: bool = True, say: Say = print) -> None:
    """Import and index the demo data (each step is skipped or changes nothing when already done)."""
    with db.connection() as conn:
        in_catalog = storage.papers.load_catalog_size(conn)
    if in_catalog < 3000:
        say("· importing the catalog (3,000+ ACL Anthology papers)")
        import_catalog(db, DATA / "catalog.jsonl.gz")
    say(f"· importing the Slack export of #{CHANNEL_NAME}")
    import_export(db, DATA / "lab-export.zip", team_id=TEAM, domain="nlp-lab-demo", progress=False)
    references = json.loads((DATA / "references.json").read_text())
    with db.connection() as conn:
        for ref in references:
            cited = ref["citedPaper"]["externalIds"]["ACL"]
            storage.papers.record_papers(
                conn,
                [
                    Paper(
                        ids={"acl": ref["citingPaper"]["externalIds"]["ACL"]},
                        source="demo",
                        references=(PaperRef("acl", cited, f"https://aclanthology.org/{cited}"),),
                        reference_contexts={f"acl:{cited}": tuple(ref["contexts"])},
                    )
                ],
            )
        storage.settings.upsert_member_setting(
            conn, TEAM, AUTHOR_MEMBER[0], confirmed_names=[normalize_person_name(AUTHOR_MEMBER[1])]
        )
        storage.workspaces.upsert_members(conn, [store_member()])
    if embed:
        say("· indexing: embeddings from the shipped cache")
        embed_pending(db, PrecomputedEmbedder())
        with db.connection() as conn:  # what is indexed leaves the queue, as `paperping index` leaves it
            storage.queue.drop_indexed(conn, "all-MiniLM-L6-v2", datetime.now(UTC))


def store_member() -> Any:
    from socialrag.models import Member

    return Member(TEAM, BOT, "PaperPing", is_bot=True)


@dataclass
class Post:
    draft: Draft
    at: datetime
    ts: str
    rec: Recommendation


def post_draft(db: Database, rec: Recommendation, at: datetime, slot: int) -> Post:
    """Record the post as the app would: a recommendation row, and PaperPing's message in the base."""
    assert rec.draft is not None
    return Post(rec.draft, at, record_post(db, CHANNEL, f"demo-{slot}", rec.draft, at), rec)


def react(db: Database, post: Post, at: datetime) -> None:
    """The group reacts to a post: thumbs-up and fire from three members, and one reply."""
    reactions = (*(Reaction(u, e, at) for u, e in REACTORS), Reaction(SAVER, CLICKS["save"], at))
    reply = Message(
        TEAM,
        CHANNEL,
        f"{at.timestamp() + 30:.6f}",
        "U01AMARA",
        "Great pick, we should read this on Thursday.",
        at + timedelta(seconds=30),
        thread_ts=post.ts,
    )
    with db.connection() as conn:
        base = storage.messages.load_message(conn, TEAM, CHANNEL, post.ts)
        assert base is not None, "the post was recorded"
        ident = storage.papers.best_identity(post.draft.paper.ids) or ("acl", "")
        message = Message(
            TEAM,
            CHANNEL,
            post.ts,
            BOT,
            base[0],
            base[1],
            reactions=reactions,
            papers=(PaperRef(ident[0], ident[1], post.draft.paper.url, post.draft.paper.title),),
        )
        index_messages(conn, [message, reply])


# ----- what people see --------------------------------------------------------------------------------


def terminal_text(mrkdwn: str, names: dict[str, str], tty: bool) -> str:
    text = re.sub(r"<@([A-Z0-9]+)>", lambda m: "@" + names.get(m.group(1), m.group(1)), mrkdwn)
    text = re.sub(r"<(https?://[^|>]+)\|([^>]+)>", r"\2 (\1)", text)
    text = html.unescape(text)
    return re.sub(r"\*([^*\n]+)\*", (lambda m: f"\033[1m{m.group(1)}\033[0m") if tty else r"*\1*", text)


def show_post(
    post: Post, n: int, names: dict[str, str], say: Say, tty: bool, counts: dict[str, int] | None = None
) -> None:
    d = post.draft
    say(
        f"\n── Recommendation {n} · {post.at:%a %d %b %Y} · style {d.style}"
        + (f" (fell back: {d.fallback_reason})" if d.fallback_reason else "")
        + " "
        + "─" * 10
    )
    for block in build_blocks(d, counts):
        if block["type"] == "actions":
            say("  " + " ".join(f"[ {e['text']['text']} ]" for e in block["elements"]))
            continue
        text = block["text"]["text"] if block["type"] == "section" else block["elements"][0]["text"]
        prefix = "  " if block["type"] == "section" else "  ↳ "
        say(prefix + terminal_text(text, names, tty))
    say("  Signals behind it:")
    for s in d.signals:
        facts = describe_fact(s)
        who = ", ".join("@" + names.get(m, m) for m in s.members)
        say(
            f"    {s.kind}: {facts}"
            + (f" | members: {who}" if who else "")
            + (f" | from {s.permalinks[0]}" if s.permalinks else "")
        )
    for line in passed_over(post.rec.candidates):
        say(line)


def passed_over(candidates: list[Candidate], shown: int = 4) -> list[str]:
    """The pick's score and the best-scored papers passed over, highest first, each one that scored above the
    pick marked: variety (distance from the last posts) put the pick ahead of it."""
    if not candidates:
        return []
    pick, rest = candidates[0], sorted(candidates[1:], key=lambda c: c.score, reverse=True)[:shown]
    above = sum(1 for c in candidates[1:] if c.score > pick.score)
    lines = [f"  Picked at score {pick.score:.3f}"]
    if above:
        lines[0] += (
            f"; variety put it ahead of {above} {'paper that' if above == 1 else 'papers that'} scored higher but "
            f"{'is' if above == 1 else 'are'} close to a recent post or to a paper ranked above"
        )
    lines.append("  Passed over (highest score first):")
    lines += [
        f"    {c.score:.3f}  {c.title}" + ("  [moved down for variety]" if c.score > pick.score else "") for c in rest
    ]
    return lines


def check_writable(out: Path) -> None:
    """Fail before any work when the demo could not write its page (say, a read-only working folder)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".paperping-write-check"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise InputError(
            f"the demo cannot write to {out} ({exc.strerror}); give --out a folder you can write"
        ) from None


def run_demo(settings: Settings, home: Path | None, out: Path, say: Say = print) -> list[Post]:
    """The demo's story (the module's docstring), in ``home``; with None, in a temporary home that is deleted at
    the end (the posts, pictures and report stay in ``out``)."""
    check_writable(out)
    if home is not None:
        return _run_demo(settings, home, out, say)
    with tempfile.TemporaryDirectory(prefix="paperping-demo-", ignore_cleanup_errors=True) as temporary:
        return _run_demo(settings, Path(temporary), out, say)


def _run_demo(settings: Settings, home: Path, out: Path, say: Say) -> list[Post]:
    started = time.perf_counter()
    tty = sys.stdout.isatty()
    say(f"PaperPing demo · home {home}")
    say("· starting the embedded Postgres")
    db = open_database(settings.with_changes(home=home, database_url=None))
    try:
        return _story(settings, db, out, say, tty, started)
    finally:
        db.stop()


def _story(settings: Settings, db: Database, out: Path, say: Say, tty: bool, started: float) -> list[Post]:
    prepare(db, say=say)
    reset_posts(db, CHANNEL)
    forget_share(db, TEAM, CHANNEL, SHARE_AT)
    with db.connection() as conn:
        counts = storage.messages.load_channel_counts(conn, TEAM, CHANNEL)
        names = storage.workspaces.load_member_names(conn, TEAM)
    say(
        f"· #{CHANNEL_NAME}: {counts['papers']} papers in {counts['messages'] - counts['replies']} shares, "
        f"{counts['replies']} thread replies, {counts['reactions']} reactions, {counts['members']} members"
    )
    # the demo's lab reads from the local catalog only: nothing leaves the machine
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, TEAM, CHANNEL, sources=["catalog"])
    recommender = Recommender(settings, db, embedder=PrecomputedEmbedder())
    posts: list[Post] = []

    def next_post(at: datetime) -> Recommendation:
        return recommender.recommend(TEAM, CHANNEL, at=at)

    ranker = recommender.refit(TEAM, CHANNEL, now=FIRST_POST)
    say(f"· learning the channel's ranking from its history: {describe_ranker(ranker)}")
    say("· recommending (three schedule days, every other day)")
    posts.append(post_draft(db, next_post(FIRST_POST), FIRST_POST, 1))
    show_post(posts[0], 1, names, say, tty)
    second_at = FIRST_POST + timedelta(days=2)
    before = recommender.recommend(TEAM, CHANNEL, at=second_at, top=LOOP_BEFORE)
    react(db, posts[0], FIRST_POST + timedelta(hours=2))
    after = recommender.recommend(TEAM, CHANNEL, at=second_at, top=LOOP_WIDTH)  # the post is its first five
    posts.append(post_draft(db, replace(after, candidates=after.candidates[:5]), second_at, 2))
    show_loop(before, after, REACTORS, names, say)
    show_post(posts[1], 2, names, say, tty)
    third_at = FIRST_POST + timedelta(days=4)
    posts.append(post_draft(db, next_post(third_at), third_at, 3))
    show_post(posts[2], 3, names, say, tty)

    def render(text: str) -> str:
        return terminal_text(text, names, tty)

    reply = show_context_reply(db, recommender, posts[2].rec, TEAM, CHANNEL, SHARE_AT, say, render)
    digest = show_digest(recommender, TEAM, CHANNEL, digest_at := FIRST_POST + timedelta(days=7), say, render)
    profile = show_profile(recommender, TEAM, CHANNEL, digest_at, say)
    week = [p.draft for p in posts] + (list(digest.drafts) if digest else [])
    show_coverage(recommender, TEAM, CHANNEL, FIRST_POST, week, say)
    asked, agent = show_question(db, recommender, TEAM, CHANNEL, CHANNEL_NAME, digest_at, say, render)
    club = show_club(db, recommender, say, render)
    more = {"context-reply": (SHARE_AT + timedelta(minutes=1), " · in the thread of @farid's share", reply or [])}
    more["answer"] = (digest_at - timedelta(hours=1), " · in the thread of @farid's question to PaperPing", asked)
    more["digest"] = (digest_at, " · the weekly digest", build_digest_blocks(digest) if digest else [])
    private = private_pieces(settings, db, profile, digest_at)
    private["agent"] = (digest_at - timedelta(minutes=30), " · @ines asked the same in PaperPing's Messages tab", agent)
    recommender.close()
    write_outputs(posts, names, out, load_clicks(db, posts), {k: v for k, v in more.items() if v[2]}, private)
    with db.connection() as conn:
        write_club_pieces(out, club, storage.workspaces.load_member_names(conn, TEAM))
    show_lists(db, TEAM, CHANNEL, digest_at, SAVER, say, render)
    show_follow_up(db, TEAM, CHANNEL, digest_at, say, render)
    say(f"\nWrote {out / 'blocks.json'} (Block Kit) and {out / 'index.html'} (the posts as Slack shows them).")
    with db.connection() as conn:
        data = load_report_data(conn, TEAM, CHANNEL, until=third_at + timedelta(days=1))
    report = write_report(data, out / "report")
    say(f"Wrote {report.path}, the lab's report: {len(report.charts)} charts, in {report.seconds:.1f}s.")
    say(
        f"Done in {time.perf_counter() - started:.1f}s. Keep the data with --home DIR; docs/slack.md says how to "
        "install PaperPing in Slack."
    )
    return posts
