"""The channel's reading list: `save`, `list`, `unsave`, `export` and `zotero`. Papers saved with the button
on a post or a :bookmark: reaction are on it too."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.commands.base import Command, Invocation, UsageError, command, free_text, keeps_nothing, may_steer
from bot.delivery.ask_answers import answer_ask
from bot.delivery.like import answer_like
from bot.delivery.uploads import Upload, upload_files
from bot.views.post_blocks import link, quote, works_again
from socialrag import storage
from socialrag.errors import OutcomeUnknown, SourceError
from socialrag.knowledge import READING_LIST_EMOJI, find_paper_refs
from socialrag.reading.library import load_references
from socialrag.reading.references import EXTENSIONS, newest_within, render
from socialrag.recommender import paper_url
from socialrag.setting import zotero_allow_list, zotero_group_allowed, zotero_group_id

PAGE = 10  # papers a page of `/paperping list`
MEMBER_ID = re.compile(r"[UW][A-Z0-9]{1,20}")
EXPORT_FORMATS = ("bibtex", "ris")
EXPORT_COOLDOWN = timedelta(minutes=10)  # between two uploads of the list in a channel
# papers in one upload, the newest on the list: years of a busy channel's saves, read with one LIMIT, a file of
# about 1.5 MB (some 300 bytes a paper) that renders in a second or two and that a reference manager imports at once.
# The operator's `paperping export` writes the whole list.
EXPORT_MOST = 5000
# and of their text, before escaping: each field written is capped (``references.exact``), yet a paper whose source
# sent 100 names of 200 characters and a title of 1,000 writes some 20,000; papers such as these make the file hold
# fewer papers (about 200 of them) rather than grow to gigabytes. Real lists stay far below (300 a paper).
EXPORT_CHARS = 4_000_000


def parse_link(name: str, args: tuple[str, ...], rest: str) -> Command:
    refs = find_paper_refs(rest)
    if not refs:
        raise UsageError(f"Paste a paper's link: `/paperping {name} https://arxiv.org/abs/1706.03762`.")
    return Command(name, (refs[0].scheme, refs[0].value), text=refs[0].url)


def _named(inv: Invocation) -> str:
    """The paper the member named, as ``arxiv 1706.03762`` (no link: the answer repeats nothing it was sent)."""
    scheme, value = inv.args[:2]
    return f"`{quote(scheme, 20)} {quote(value, 120).replace('`', '')}`"


NOTHING_STORED = (
    "Nothing was saved: you asked me to forget you, so I store nothing of yours here. "
    "`/paperping remember-me` lifts that."
)


def _paper_of(inv: Invocation) -> int:
    scheme, value = inv.args[:2]
    with inv.ctx.db.connection() as conn:
        ids = storage.papers.ensure_papers(conn, [(scheme, value)])
        paper_id = ids[(scheme, value)]
        storage.queue.enqueue_for_member(conn, inv.team, inv.user, [paper_id], inv.now)
    inv.ctx.wake.index_soon()  # a paper new to PaperPing is looked up at once (within the member's hourly cap)
    return paper_id


@command(
    "save", "`save LINK` — put a paper on this channel's reading list (or click *Save* on a post)", parse=parse_link
)
def cmd_save(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        if storage.privacy.is_forgotten(conn, (inv.team, inv.home_team), inv.user):
            return NOTHING_STORED
    paper_id = _paper_of(inv)
    with inv.ctx.db.connection() as conn:
        storage.reading_list.save_paper(conn, inv.team, inv.channel, paper_id, inv.user, inv.now)
    return f"Saved {_named(inv)} to this channel's reading list (`/paperping list` shows it)."


def parse_unsave(name: str, args: tuple[str, ...], rest: str) -> Command:
    link = parse_link(name, args, rest)
    everyone = bool(args) and args[-1].lower() == "all"
    return Command(name, (*link.args, "all") if everyone else link.args, text=link.text)


@command(
    "unsave",
    "`unsave LINK [all]` — take your save of a paper back (`all`: off the list for everyone; the channel's stewards)",
    parse=parse_unsave,
)
def cmd_unsave(inv: Invocation) -> str:
    if inv.args[2:] == ("all",):
        refusal = may_steer(inv, locking=True)  # the member who invited PaperPing and the workspace's admins
        if refusal:
            return (
                "Taking a paper off the list for everyone is for the member who invited me and the workspace's "
                "admins; `/paperping unsave LINK` takes back your own save."
            )
    elif inv.forgotten():  # in the channel's workspace or their own (a Slack Connect partner's): no save to take back
        return keeps_nothing("Nothing was changed", "save")
    scheme, value = inv.args[:2]
    with inv.ctx.db.connection() as conn:  # a paper PaperPing does not know is on no list: nothing is stored
        paper_id = storage.papers.load_paper_ids(conn, [(scheme, value)]).get((scheme, value))
    if paper_id is None:
        return f"{_named(inv)} is not on this channel's reading list."
    with inv.ctx.db.connection() as conn:
        if inv.args[2:] == ("all",):
            storage.reading_list.remove_paper(conn, inv.team, inv.channel, paper_id, inv.now)
            return f"Took {_named(inv)} off this channel's reading list for everyone."
        if not storage.reading_list.unsave_paper(conn, inv.team, inv.channel, paper_id, inv.user, inv.now):
            return keeps_nothing("Nothing was changed", "save")
        others = storage.reading_list.load_savers(conn, inv.team, inv.channel, paper_id, READING_LIST_EMOJI)
    if others:
        return f"Took back your save of {_named(inv)}; others' saves keep it on this channel's reading list."
    return f"Took {_named(inv)} off this channel's reading list."


def parse_page(name: str, args: tuple[str, ...], rest: str) -> Command:
    if len(args) > 1 or (args and not re.fullmatch(r"[1-9]\d{0,4}", args[0])):
        raise UsageError("Try `/paperping list` or `/paperping list 2` for the next page.")
    return Command(name, (args[0] if args else "1",))


@command("list", "`list [PAGE]` — this channel's reading list, newest first", parse=parse_page)
def cmd_list(inv: Invocation) -> str:
    page = int(inv.args[0])
    with inv.ctx.db.connection() as conn:
        saved, total = storage.reading_list.load_reading_list(
            conn, inv.team, inv.channel, READING_LIST_EMOJI, limit=PAGE, offset=(page - 1) * PAGE
        )
        identities = storage.papers.load_identities(conn, [p.paper_id for p in saved])
    if total == 0:
        return (
            "This channel's reading list is empty: click *Save* on a post, react with :bookmark:, "
            "or `/paperping save LINK`."
        )
    pages = (total + PAGE - 1) // PAGE
    if not saved:
        return f"The reading list has {pages} page{'s' if pages > 1 else ''}; try `/paperping list {pages}`."
    lines = [f"*This channel's reading list* ({total} paper{'s' if total != 1 else ''}, page {page} of {pages})"]
    for p in saved:
        url = paper_url(identities.get(p.paper_id, {}), p.url)
        shown = link(url, " ".join((p.title or url or f"paper {p.paper_id}").split())[:200])
        # an answer only the member who asked sees: a mention shows the name and notifies nobody
        who = ", ".join(f"<@{u}>" if MEMBER_ID.fullmatch(u) else "a member" for u in p.savers[:3])
        more = f" and {len(p.savers) - 3} more" if len(p.savers) > 3 else ""
        year = f" {p.saved_at:%Y}" if p.saved_at.year != inv.now.year else ""  # a list that spans years says which
        lines.append(f"• {shown} — saved by {who}{more}, {p.saved_at:%d %b}{year}")
    if page < pages:
        lines.append(f"`/paperping list {page + 1}` shows the next page.")
    return "\n".join(lines)


def parse_export(name: str, args: tuple[str, ...], rest: str) -> Command:
    if len(args) != 1 or args[0].lower() not in EXPORT_FORMATS:
        raise UsageError("Try `/paperping export bibtex` or `/paperping export ris`.")
    return Command(name, (args[0].lower(),))


@command("export", "`export bibtex|ris` — upload the reading list here as a file", parse=parse_export, slow=True)
def cmd_export(inv: Invocation) -> str:
    fmt = inv.args[0]
    with inv.ctx.db.connection() as conn:  # taken first, in one statement: two asks at once never both upload,
        asked = storage.settings.take_ask(  # and an ask in the cooldown reads nothing of the list
            conn, inv.team, inv.channel, inv.now, EXPORT_COOLDOWN, column="export_asked_at"
        )
    if asked is not None:  # taken when that ask began: its upload may still be under way
        again = works_again(asked + EXPORT_COOLDOWN)
        return (
            f"The reading list was exported here at {asked:%H:%M} UTC (a long list may still be uploading); "
            f"`/paperping export` works again from {again}."
        )
    with inv.ctx.db.connection() as conn:
        total = storage.reading_list.count_reading_list(conn, inv.team, inv.channel, READING_LIST_EMOJI)
        refs = load_references(conn, inv.team, inv.channel, newest=EXPORT_MOST) if total else []
        loaded, refs = len(refs), newest_within(refs, EXPORT_CHARS)
        if not refs:
            storage.settings.give_back_ask(conn, inv.team, inv.channel, inv.now, "export_asked_at")
    if not refs:
        return "The reading list is empty, so there is nothing to export yet."
    capped = total > EXPORT_MOST or len(refs) < loaded
    n = len(refs)
    which = f"the newest {n:,} of {total:,} papers" if capped else f"{n:,} paper{'s' if n != 1 else ''}"
    title = f"Reading list ({which}, {'BibTeX' if fmt == 'bibtex' else 'RIS'})"
    listed = Upload(f"reading-list.{EXTENSIONS[fmt]}", render(refs, fmt).encode(), title)
    try:
        upload_files(
            inv.ctx.pacer,
            inv.client,
            inv.channel,
            [listed],
            initial_comment=f"<@{inv.user}> exported this channel's reading list.",
        )
    except OutcomeUnknown as exc:  # it may be in the channel: the cooldown stays, so a retry cannot post it twice
        return (
            f"Slack did not confirm the upload ({quote(exc.detail, 200)}); it may be in the channel all the same. "
            f"`/paperping export` works again from {works_again(inv.now + EXPORT_COOLDOWN)}."
        )
    except SourceError as exc:
        with inv.ctx.db.connection() as conn:  # nothing was uploaded: the member may try again at once
            storage.settings.give_back_ask(conn, inv.team, inv.channel, inv.now, "export_asked_at")
        if "missing_scope" in str(exc):
            return "I can't upload files yet: an admin needs to reinstall PaperPing so it gets `files:write`."
        return f"The upload failed ({quote(str(exc), 200)}); nothing was posted."
    if capped:
        return f"Uploaded the newest {len(refs):,} of the reading list's {total:,} papers here."
    return f"Uploaded the reading list ({which}) here."


def parse_zotero(name: str, args: tuple[str, ...], rest: str) -> Command:
    hint = "Try `/paperping zotero 123456` (a group library's id), `/paperping zotero 123456 ABCD2345` or `off`."
    if len(args) == 1 and args[0].lower() == "off":
        return Command(name, ("off",))
    group = zotero_group_id(args[0]) if 1 <= len(args) <= 2 else None
    if group is None:  # written as Zotero reads it: `04242` is group 4242, and binds as 4242
        raise UsageError(hint)
    if len(args) == 2 and not re.fullmatch(r"[A-Z0-9]{8}", args[1]):
        raise UsageError(f"A collection key is eight letters and digits, as in its Zotero address. {hint}")
    return Command(name, (group, *args[1:]))


@command(
    "zotero",
    "`zotero GROUP_ID [COLLECTION]` — also add saved papers to a Zotero group library (`zotero off` to stop)",
    parse=parse_zotero,
    steers=True,
    stops=lambda c: c.args == ("off",),
)
def cmd_zotero(inv: Invocation) -> str:
    if inv.args == ("off",):
        inv.set(zotero_group_id=None, zotero_collection=None)
        if inv.ctx.slack.is_member(inv.client, inv.channel):
            inv.announce("stopped sending this channel's reading list to Zotero.")
        return "Done: saved papers stay here only."
    if not inv.ctx.settings.zotero_api_key:
        return "Zotero is not set up for this PaperPing: an admin needs to set `ZOTERO_API_KEY` first."
    group, collection = inv.args[0], inv.args[1] if len(inv.args) > 1 else None
    refused = zotero_refusal(inv, group)
    if refused:
        return refused
    inv.set(zotero_group_id=group, zotero_collection=collection)
    where = f"collection {collection} of " if collection else ""
    inv.announce(f"asked PaperPing to add this channel's saved papers to {where}Zotero group {group}.")
    inv.ctx.wake.post_soon()  # the next tick sends what is on the list already
    return f"Done: saved papers go to {where}Zotero group {group}; `/paperping status` says how it went."


def zotero_refusal(inv: Invocation, group: str) -> str | None:
    """Why this workspace may not send to this group library, or None after binding it to the workspace. Said
    without asking the library anything: whether the key could write there is not this workspace's to learn."""
    allowed = zotero_allow_list(inv.ctx.settings.zotero_groups)
    if not zotero_group_allowed(allowed, inv.team, group):
        return (
            f"Zotero group {group} is not one this workspace may send to; your PaperPing admin lists the groups "
            "each workspace may use (`PAPERPING_ZOTERO_GROUPS`)."
        )
    with inv.ctx.db.connection() as conn:
        if group in allowed.get(inv.team, ()):  # the operator's list says whose it is, whoever bound it before
            storage.reading_list.move_zotero_group(conn, group, inv.team)
        owner = storage.reading_list.bind_zotero_group(conn, inv.team, group)
    if owner != inv.team:
        return (
            f"Zotero group {group} belongs to another workspace's PaperPing, so this channel can't send to it. "
            "If it should be this workspace's, your PaperPing admin can move it (`paperping zotero-group`)."
        )
    return None


@command(
    "like",
    "`like LINK-OR-WORDS` — five papers like it that this channel has not seen yet (only you see them)",
    parse=free_text(
        "Try `/paperping like https://arxiv.org/abs/1706.03762` or `/paperping like retrieval for dialogue`."
    ),
    slow=True,
)
def cmd_like(inv: Invocation) -> str:
    return answer_like(inv.ctx, inv.client, inv.team, inv.channel, inv.user, inv.text)


@command(
    "ask",
    "`ask QUESTION` — what this channel read and discussed: papers on a topic or in a week or month, where it was "
    "discussed, who knows it, what you missed (only you see the answer)",
    parse=free_text(
        "Try `/paperping ask what have we read about retrieval-augmented generation?`, `/paperping ask what did we "
        "read last week?`, `/paperping ask who here knows about speech translation?` or `/paperping ask what did I "
        "miss?`"
    ),
    slow=True,
)
def cmd_ask(inv: Invocation) -> str:
    return answer_ask(inv.ctx, inv.client, inv.team, inv.user, inv.text, inv.channel, llm_channel=inv.channel)
