"""The authors a channel follows and the group's own papers: `follow AUTHOR`, `unfollow AUTHOR`, `following`, and
`my-papers on|off` (a member lets the channel hear of their new papers). Authors are Semantic Scholar's: a link or
an id, an ORCID (a stored paper's, or the name on its public record), or a name that resolves to one author."""

from __future__ import annotations

import logging

from bot.commands.base import Command, Invocation, UsageError, command, one_of
from bot.commands.member import NO_SETTING_KEPT, parse_author_link
from bot.views.post_blocks import quote
from socialrag import storage
from socialrag.errors import SourceError
from socialrag.names import same_person

log = logging.getLogger(__name__)

CHOICES = 5  # authors offered when a name matches several
S2_SILENT = "Semantic Scholar did not answer just now; try again in a minute."
HINT = (
    "Give a Semantic Scholar author link or id, an ORCID, or a name: "
    "`/paperping follow https://www.semanticscholar.org/author/1740765` or `/paperping follow Graham Neubig`."
)


def parse_author(name: str, args: tuple[str, ...], rest: str) -> Command:
    text = rest.strip().strip("<>").split("|")[0].strip()
    if not text or len(text) > 200:
        raise UsageError(HINT)
    return Command(name, (text,))


def _author_ids(text: str) -> dict[str, str]:
    """The Semantic Scholar author id or the ORCID in what was typed, as `link-author` reads them; none for a name."""
    try:
        return parse_author_link(text)
    except UsageError:
        return {}


def _resolve(inv: Invocation, text: str) -> tuple[str, str] | str:
    """(Semantic Scholar author id, name) for what the member typed, or a sentence saying why not or asking which."""
    recommender = inv.ctx.recommender
    s2 = recommender.semantic_scholar if recommender is not None else None
    typed = _author_ids(text)
    author_id, orcid = typed.get("s2_author_id"), typed.get("orcid")
    if orcid:
        with inv.ctx.db.connection() as conn:
            author_id = storage.followed_authors.find_author_by_orcid(conn, orcid)
    if s2 is None:
        return "Following authors needs Semantic Scholar, which this PaperPing does not reach (it runs offline)."
    try:
        if orcid and author_id is None:  # Semantic Scholar has no ORCID lookup: the name on the record, then search
            on_record = recommender.orcid.fetch_name(orcid) if recommender and recommender.orcid else None
            if on_record is None:
                return "ORCID has no public name on that record; paste the author's Semantic Scholar link instead."
            text = on_record
        if author_id is not None:
            name = s2.fetch_author(author_id)
            return (author_id, name) if name else f"Semantic Scholar knows no author {quote(author_id, 40)}."
        found = s2.search_authors(text, limit=CHOICES)
    except SourceError as exc:
        log.warning("Semantic Scholar failed for an author lookup: %s", exc)  # its words are for the admin
        return S2_SILENT
    if len(found) == 1:
        return found[0][0], found[0][1]
    if not found:
        return f"Semantic Scholar finds no author called {quote(text, 80)}. {HINT}"
    lines = [f"Several authors are called {quote(text, 80)}; which one? Follow by id:"]
    for aid, name, count, affs in found:
        where = f", {quote(affs[0], 80)}" if affs else ""
        papers = f", {count} papers" if count is not None else ""
        lines.append(f"• `/paperping follow {aid}` — {quote(name, 80)}{where}{papers}")
    return "\n".join(lines)


MAX_FOLLOWED = 30  # authors one channel follows at most: each is a weekly request and may bring posts
# distinct authors a workspace's channels follow at most: the authors' job asks a few each run for every workspace
# of the service, so one workspace of many channels (any member may make one and invite PaperPing) would slow the
# others' checks
MAX_FOLLOWED_IN_WORKSPACE = 300
FOLLOWS_PER_HOUR = 30  # a member's `follow` lookups an hour: a channel's whole list can be set up at one sitting


@command("follow", "`follow AUTHOR` — this channel gets the new papers of an author (a link, an ORCID or a name)",
         parse=parse_author, steers=True, slow=True)  # fmt: skip
def cmd_follow(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        following = len(storage.followed_authors.load_followed(conn, inv.team, inv.channel))
    if following >= MAX_FOLLOWED:
        return _full(following)
    with inv.ctx.db.connection() as conn:  # each asks Semantic Scholar (or ORCID), whose pace every workspace shares
        looked = storage.usage.take_member_hourly(conn, inv.team, inv.user, "author lookups", inv.now, FOLLOWS_PER_HOUR)
    if not looked:
        return f"I looked up {FOLLOWS_PER_HOUR} authors for you this hour; `/paperping follow` works again next hour."
    resolved = _resolve(inv, inv.args[0])
    if isinstance(resolved, str):
        return resolved
    author_id, name = resolved
    with inv.ctx.db.connection() as conn:
        outcome = storage.followed_authors.follow_author(
            conn,
            inv.team,
            inv.channel,
            author_id,
            name,
            inv.user,
            inv.now,
            most=MAX_FOLLOWED,
            most_in_workspace=MAX_FOLLOWED_IN_WORKSPACE,
        )
    if outcome == "channel full":  # others followed meanwhile, while Semantic Scholar was asked
        return _full(MAX_FOLLOWED)
    if outcome == "workspace full":
        return (
            f"This workspace's channels follow {MAX_FOLLOWED_IN_WORKSPACE} authors, as many as a workspace may; "
            f"{quote(name, 80)} can be followed here once a channel unfollows one of them."
        )
    if outcome == "already":
        return f"This channel already follows {quote(name, 80)}."
    inv.announce(f"asked PaperPing to follow {quote(name, 80)}: their new papers will come here.")
    return (
        f"Done: this channel follows {quote(name, 80)}. Each new paper of theirs comes in a post here, with why, "
        "whatever the ranking says. `/paperping unfollow` stops it."
    )


def _full(following: int) -> str:
    return (
        f"This channel follows {following} authors, as many as a channel may; `/paperping unfollow` one "
        "before following another."
    )


@command("unfollow", "`unfollow AUTHOR` — stop following an author here", parse=parse_author, steers=True)
def cmd_unfollow(inv: Invocation) -> str:
    text = inv.args[0]
    typed = _author_ids(text)
    with inv.ctx.db.connection() as conn:
        followed = storage.followed_authors.load_followed(conn, inv.team, inv.channel)
        orcid = typed.get("orcid")  # as `follow` took it: the Semantic Scholar id a stored paper gives
        by_orcid = storage.followed_authors.find_author_by_orcid(conn, orcid) if orcid else None
        wanted = (by_orcid if orcid else typed.get("s2_author_id")) or text
        match = [f for f in followed if f.s2_author_id == wanted or f.name.lower() == text.lower()]
        if not match:
            return f"This channel does not follow {quote(text, 80)}; `/paperping following` lists whom it follows."
        storage.followed_authors.unfollow_author(conn, inv.team, inv.channel, match[0].s2_author_id)
    inv.announce(f"stopped PaperPing following {quote(match[0].name, 80)} here.")
    return f"Done: this channel no longer follows {quote(match[0].name, 80)}."


@command("following", "`following` — the authors this channel follows")
def cmd_following(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        followed = storage.followed_authors.load_followed(conn, inv.team, inv.channel)
    if not followed:
        return "This channel follows no author yet: `/paperping follow AUTHOR`."
    lines = ["*The authors this channel follows:*"]
    for f in followed:
        who = f" by <@{f.user_id}>" if f.user_id else ""
        link = f"https://www.semanticscholar.org/author/{f.s2_author_id}"
        lines.append(f"• <{link}|{quote(f.name, 80)}> — followed{who} on {f.followed_at:%d %b %Y}")
    return "\n".join(lines)


CHECKS_PER_HOUR = 10  # a member's `my-papers on` checks of their profile an hour (Semantic Scholar and Slack)


@command(
    "my-papers",
    "`my-papers on|off` — let this channel hear of your new papers (needs `link-author` with a Semantic Scholar id)",
    parse=one_of(("on", "off"), "Try `/paperping my-papers on` or `/paperping my-papers off`."),
    steers=lambda c: c.args[0] == "on",  # the whole channel hears of them: the settings rule applies
    stops=lambda c: c.args[0] == "off",  # and a member may always stop it, even where PaperPing has left
    slow=True,
)
def cmd_my_papers(inv: Invocation) -> str:
    if inv.forgotten():  # nothing of theirs is kept: no linked profile, no channel to tell
        return NO_SETTING_KEPT
    with inv.ctx.db.connection() as conn:
        member = storage.settings.load_member_setting(conn, inv.team, inv.user)
        channels = [c for c in member.my_papers_channels if c != inv.channel]
        if inv.args[0] == "off":
            storage.settings.upsert_member_setting(conn, inv.team, inv.user, my_papers_channels=channels)
            return "Done: this channel won't hear of your new papers from me."
    if not member.s2_author_id:
        return (
            "First link your Semantic Scholar author profile: `/paperping link-author "
            "https://www.semanticscholar.org/author/…` (an ORCID alone does not list your papers)."
        )
    with inv.ctx.db.connection() as conn:  # each check asks Semantic Scholar (shared by every workspace) and Slack
        checked = storage.usage.take_member_hourly(conn, inv.team, inv.user, "author checks", inv.now, CHECKS_PER_HOUR)
    if not checked:
        return (
            f"I checked your author profile {CHECKS_PER_HOUR} times this hour; `/paperping my-papers on` works again "
            "next hour."
        )
    refusal = _not_yours(inv, member.s2_author_id)
    if refusal:
        return refusal
    with inv.ctx.db.connection() as conn:
        # the check took Semantic Scholar's and Slack's time: a `link-author` meanwhile linked a profile not checked
        now = storage.settings.load_member_setting(conn, inv.team, inv.user)
        if now.s2_author_id != member.s2_author_id:
            return "Your linked author profile changed while I checked it; run `/paperping my-papers on` again."
        channels = [c for c in now.my_papers_channels if c != inv.channel]
        storage.settings.upsert_member_setting(conn, inv.team, inv.user, my_papers_channels=[*channels, inv.channel])
    return (
        'Done: when a new paper of yours appears on Semantic Scholar, I\'ll say so here ("New from the group"), '
        f"{storage.followed_authors.MEMBER_NEWS_PER_WEEK} a week at most for the whole channel."
    )


def _not_yours(inv: Invocation, author_id: str) -> str | None:
    """Why the linked author cannot be announced as this member's, or None: the profile must exist, and its name
    must agree with the member's name on Slack (a member cannot make the channel hear of anyone's papers)."""
    recommender = inv.ctx.recommender
    s2 = recommender.semantic_scholar if recommender is not None else None
    if s2 is None:
        return (
            "Announcing members' papers needs Semantic Scholar, which this PaperPing does not reach (it runs offline)."
        )
    try:
        name = s2.fetch_author(author_id)
    except SourceError as exc:
        log.warning("Semantic Scholar failed for an author lookup: %s", exc)  # its words are for the admin
        return S2_SILENT
    if name is None:
        return f"Semantic Scholar knows no author {quote(author_id, 40)}; check it with `/paperping link-author`."
    names = inv.ctx.slack.standing(inv.client, inv.team, inv.user).names
    if same_person(name, names):
        return None
    return (
        f"The author you linked is {quote(name, 80)} on Semantic Scholar, which is not the name on your Slack "
        "profile, so I won't announce their papers as yours. Link your own profile with `/paperping link-author`, "
        "or put your full name in your Slack profile."
    )
