"""Step 3b without an LLM: signals as fixed, neutral sentences, the summary, and who gets @-mentioned. Pure.

Members appear in text as ``{@U123}`` tokens; the Slack side renders each as an @-mention or, for a member
who turned mentions off or was mentioned in the last days, as their plain name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from socialrag.models import SocialSignal
from socialrag.summary import summarize

MEMBER_TOKEN = re.compile(r"\{@([A-Z0-9]+)\}")


def member_token(user_id: str) -> str:
    return "{@" + user_id + "}"


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def render_signal(signal: SocialSignal, companions: Sequence[SocialSignal] = ()) -> str:
    """One signal as one sentence (h9 is folded into its h8 sentence by ``render_signals``)."""
    f = signal.facts
    kind = signal.kind
    if kind == "h1":
        return f"{member_token(str(f['member']))} is one of its authors."
    if kind == "h2":
        return f"{f['author']} also wrote {_plural(int(f['count']), 'paper')} discussed here in the last three months."  # type: ignore[call-overload]
    if kind == "h3":
        return f"{f['author']} is at {f['affiliation']}, like {member_token(str(f['member']))}."
    if kind == "h4":
        return f"The group engaged with {_plural(int(f['count']), 'other ' + str(f['venue']) + ' paper')} recently."  # type: ignore[call-overload]
    if kind == "h5":
        return _render_h5(signal)
    if kind == "h6":
        return _render_h6(signal)
    if kind == "h7":
        return f"{f['paper_title']} was written by {member_token(str(f['member']))}."
    if kind == "h8":
        why = next((c for c in companions if c.kind == "h9" and c.members == signal.members), None)
        return f"Possibly of interest to {member_token(str(f['member']))}{_render_h9(why) if why else ''}."
    return ""


def _render_h5(signal: SocialSignal) -> str:
    f = signal.facts
    title, sharer = f["paper_title"], f.get("sharer")
    who = f", shared by {member_token(str(sharer))}" if sharer else ""
    if f.get("posted_by_paperping"):
        who = ", recommended here earlier"
    relation = f.get("relation")
    if relation == "cites":
        context = f.get("context")
        if context:
            quote = _clip(str(context), 140)
            end = "" if quote[-1] in ".!?…" else "."
            return f'It cites {title}{who}: "{quote}"{end}'
        return f"It cites {title}{who}."
    if relation == "cited_by":
        return f"{title}{who}, cites this paper."
    if relation == "shared_authors":
        names = list(f.get("shared_authors") or [])  # type: ignore[call-overload]
        shown = ", ".join(names[:2]) + (" and others" if len(names) > 2 else "")
        return f"{shown} also wrote {title}{who}."
    return f"It is close in topic to {title}{who}."


def _render_h6(signal: SocialSignal) -> str:
    f = signal.facts
    parts = []
    if f["reactions"]:
        top = f.get("top_emoji") or []
        emoji = f" (:{top[0]}:)" if top else ""  # type: ignore[index]
        parts.append(_plural(int(f["reactions"]), "reaction") + emoji)  # type: ignore[call-overload]
    if f["replies"]:
        parts.append(_plural(int(f["replies"]), "reply", "replies"))  # type: ignore[call-overload]
    return "That post drew " + " and ".join(parts) + "."


def _render_h9(signal: SocialSignal) -> str:
    f = signal.facts
    n = int(f["count"])  # type: ignore[call-overload]
    reason = f["reason"]
    if reason == "similar":
        return f", who liked {_plural(n, 'similar paper')} here"
    if reason == "author":
        return f", who liked {_plural(n, 'paper')} by {f['author']} here"
    if reason == "venue":
        return f", who liked {_plural(n, str(f['venue']) + ' paper')} here"
    return f", whose own publications are close to it ({n})"


def render_signals(signals: Sequence[SocialSignal]) -> str:
    """The chosen signals as sentences, each h6 right after the h5 or h7 it describes (h9 is inside h8's)."""
    sentences = []
    for s in signals:
        if s.kind in ("h6", "h9"):
            continue
        sentences.append(render_signal(s, signals))
        if s.kind in ("h5", "h7"):
            sentences += [
                render_signal(c) for c in signals if c.kind == "h6" and c.related_paper_id == s.related_paper_id
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
) -> str:
    """The ``tldr``, ``template`` and ``template+tldr`` explanations, within ``limit`` characters."""
    social = render_signals(signals) if with_signals else ""
    if not with_summary:
        return _clip(social or "Recommended for its closeness to what this channel has been reading.", limit)
    room = max(120, limit - len(social) - 1) if social else limit
    summary = summarize(abstract, tldr, limit=room) or ""
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


def render_plain(text: str, names: Mapping[str, str]) -> str:
    """Text with member tokens replaced by names (for terminals and logs)."""
    return MEMBER_TOKEN.sub(lambda m: "@" + names.get(m.group(1), m.group(1)), text)
