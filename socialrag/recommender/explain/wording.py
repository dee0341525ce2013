"""Step 3b without an LLM: signals as fixed, neutral sentences, the summary, and who gets @-mentioned. Pure.

Members appear in text as ``{@U123}`` tokens; the Slack side renders each as an @-mention or, for a member
who turned mentions off or was mentioned in the last days, as their plain name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from socialrag.models import (
    AuthorDiscussedHere,
    EarlierPaperByMember,
    EarlierReception,
    MemberIsAuthor,
    MemberMayCare,
    RelatedToEarlierPaper,
    Relation,
    SharedAffiliation,
    SocialSignal,
    VenueEngagedWith,
    WhyMemberMayCare,
)
from socialrag.recommender.explain.summary import summarize
from socialrag.text import as_data

MEMBER_TOKEN = re.compile(r"\{@([A-Z0-9]+)\}")
MAX_BOLD = 3  # bold key phrases in one message, at most (the LLM style is held to the same)
SAFE_TEXT = "Recommended for its closeness to what this channel has been reading."


def member_token(user_id: str) -> str:
    return "{@" + user_id + "}"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def render_signal(signal: SocialSignal, companions: Sequence[SocialSignal] = (), *, bold: bool = False) -> str:
    """One signal as one sentence (h9 is folded into its h8 sentence by ``render_signals``). With ``bold``,
    the phrase that says how the paper connects to the group is bold (never a title or a member)."""
    f = signal.fact
    b = _bold if bold else _plain
    if isinstance(f, MemberIsAuthor):
        return f"{member_token(f.member)} is {b('one of its authors')}."
    if isinstance(f, AuthorDiscussedHere):
        author = as_data(f.author)
        if f.followed:
            also = f"; {author} also wrote {_plural(f.count, 'paper')} discussed here" if f.count else ""
            return f"It is by {author}, {b('whom this channel follows')}{also}."
        return f"{author} also wrote {_plural(f.count, 'paper')} discussed here in the last three months."
    if isinstance(f, SharedAffiliation):
        return f"{as_data(f.author)} is at {as_data(f.affiliation)}, like {member_token(f.member)}."
    if isinstance(f, VenueEngagedWith):
        return f"The group engaged with {_plural(f.count, 'other ' + as_data(f.venue) + ' paper')} recently."
    if isinstance(f, RelatedToEarlierPaper):
        return _render_h5(f, b)
    if isinstance(f, EarlierReception):
        return _render_h6(f)
    if isinstance(f, EarlierPaperByMember):
        said = any(
            isinstance(c.fact, RelatedToEarlierPaper) and c.related_paper_id == signal.related_paper_id
            for c in companions
        )
        return _render_h7(f, b, relation_said=said)
    if isinstance(f, MemberMayCare):
        why = next(
            (c.fact for c in companions if isinstance(c.fact, WhyMemberMayCare) and c.members == signal.members), None
        )
        return f"{b('Possibly of interest')} to {member_token(f.member)}{_render_h9(why) if why else ''}."
    return ""


def _bold(phrase: str) -> str:
    return f"*{phrase}*"


def _plain(phrase: str) -> str:
    return phrase


def _render_h5(f: RelatedToEarlierPaper, b: Callable[[str], str] = _plain) -> str:
    who = f", shared by {member_token(f.sharer)}" if f.sharer else ""
    if f.posted_by_paperping:
        who = ", recommended here earlier"
    return _relation_sentence(f.relation, as_data(f.paper_title), who, b, f.shared_authors, f.context)


def _relation_sentence(
    relation: Relation,
    title: str,
    who: str,
    b: Callable[[str], str],
    authors: Sequence[str],
    context: str | None = None,
) -> str:
    """How the candidate relates to an earlier paper of the channel (its ``title``, and ``who`` brought it: ", shared
    by ..." or ""), one wording for h5 and h7; ``context``: the sentence with which the candidate cites it."""
    subject = f"{title}{who}"
    # every relation is said of the new paper, "It ...": a sentence that opened on an earlier paper's title read
    # as run on from the summary before it
    if relation == "cites":
        if context:
            quote = _clip(as_data(context), 140)
            end = "" if quote[-1] in ".!?…" else "."
            return f'It {b("cites")} {subject}: "{quote}"{end}'
        return f"It {b('cites')} {subject}."
    if relation == "cited_by":
        return f"It is {b('cited by')} {subject}."
    if relation == "shared_authors" and authors:
        return f"It {b('shares authors')} ({_some_names(authors)}) with {subject}."
    return f"It is {b('close in topic')} to {subject}."


def _some_names(authors: Sequence[str]) -> str:
    """The first two of some authors' names, and "and others" when there are more."""
    names = [as_data(a) for a in authors]
    return ", ".join(names[:2]) + (" and others" if len(names) > 2 else "")


def _render_h7(f: EarlierPaperByMember, b: Callable[[str], str], *, relation_said: bool) -> str:
    """The member's earlier paper and how the new one relates to it (unless the h5 beside it says so)."""
    title, member = as_data(f.paper_title), member_token(f.member)
    if relation_said:
        return f"{title} was {b('written by')} {member}."
    return _relation_sentence(f.relation, title, f", written by {member}", b, f.shared_authors)


def _render_h6(f: EarlierReception) -> str:
    parts = []
    if f.reactions:
        emoji = f" (:{f.top_emoji[0]}:)" if f.top_emoji else ""
        parts.append(_plural(f.reactions, "reaction") + emoji)
    if f.replies:
        parts.append(_plural(f.replies, "reply", "replies"))
    return "That post drew " + " and ".join(parts) + "." if parts else ""


def _render_h9(f: WhyMemberMayCare) -> str:
    n = f.count
    if f.reason == "similar":
        return f", who liked {_plural(n, 'similar paper')} here"
    if f.reason == "author":
        return f", who liked {_plural(n, 'paper')} by {as_data(f.author)} here"
    if f.reason == "venue":
        return f", who liked {_plural(n, as_data(f.venue) + ' paper')} here"
    return f", whose own publications are close to it ({n})"


def render_signals(signals: Sequence[SocialSignal]) -> str:
    """The chosen signals as sentences, each h6 right after the h5 or h7 it describes, an h7 right after the h5
    on the same paper (h9 is inside h8's); the key phrase of each of the first ``MAX_BOLD`` is bold, so the
    message can be skimmed."""
    h5_papers = {s.related_paper_id for s in signals if s.kind == "h5"}

    def after(s: SocialSignal) -> bool:  # said right after another signal's sentence, not in its own place
        return s.kind in ("h6", "h9") or (s.kind == "h7" and s.related_paper_id in h5_papers)

    sentences = []
    for i, s in enumerate(s for s in signals if not after(s)):
        sentences.append(render_signal(s, signals, bold=i < MAX_BOLD))
        if s.kind in ("h5", "h7"):
            sentences += [
                render_signal(c, signals)
                for kind in ("h7", "h6")
                for c in signals
                if c.kind == kind and c is not s and c.related_paper_id == s.related_paper_id
            ]
    return " ".join(x for x in dict.fromkeys(sentences) if x)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def build_template_text(
    signals: Sequence[SocialSignal],
    abstract: str | None,
    tldr: str | None,
    *,
    with_summary: bool,
    with_signals: bool,
    limit: int = 400,
    body: Sequence[tuple[str, str]] = (),
) -> str:
    """The ``tldr``, ``template`` and ``template+tldr`` explanations, within ``limit`` characters (the summary from
    the paper's full text, ``body``, when its abstract is poor)."""
    social = render_signals(signals) if with_signals else ""
    if not with_summary:
        return _clip(social or SAFE_TEXT, limit)
    room = max(120, limit - len(social) - 1) if social else limit
    summary = summarize(abstract, tldr, limit=room, body=body) or ""
    text = " ".join(x for x in (summary, social) if x)
    return _clip(text, limit)


def plan_mentions(
    member_ids: Sequence[str],
    mentions_enabled: Mapping[str, bool],
    last_mentioned: Mapping[str, datetime],
    now: datetime,
    quiet_days: float = 7.0,
) -> tuple[str, ...]:
    """Members to @-mention: those who allow it and were not mentioned in the last ``quiet_days``."""
    out = []
    for uid in dict.fromkeys(member_ids):
        if not mentions_enabled.get(uid, True):
            continue
        last = last_mentioned.get(uid)
        if last is not None and now - last < timedelta(days=quiet_days):
            continue
        out.append(uid)
    return tuple(out)


def members_in_text(text: str) -> list[str]:
    return MEMBER_TOKEN.findall(text)


def describe_fact(signal: SocialSignal) -> str:
    """A signal's fact as ``name=value`` pairs, for terminals and ``/paperping why`` (empty values left out, and the
    row id of a quoted reply: ``why`` quotes the reply itself while it is kept)."""
    values = vars(signal.fact)
    return ", ".join(f"{k}={v}" for k, v in values.items() if v not in (None, (), "", False) and k != "first_reply_id")


def render_plain(text: str, names: Mapping[str, str]) -> str:
    """Text with member tokens replaced by names (for terminals and logs)."""
    return MEMBER_TOKEN.sub(lambda m: "@" + names.get(m.group(1), m.group(1)), text)
