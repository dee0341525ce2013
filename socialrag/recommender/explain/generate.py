"""Step 3b: the explanation of a chosen paper in the channel's style, verified before it leaves.

``tldr``, ``template`` and ``template+tldr`` are built without an LLM. ``llm`` runs the prompt chain (the
paper; its relation to the earlier paper and how the group received it; the member it may interest; a final
prompt that shortens and bolds), checks the result against the signals, retries once a text that fails the
check, and otherwise (or when the LLM fails) falls back to ``template+tldr`` for that post.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from socialrag.errors import SourceError
from socialrag.models import (
    AuthorDiscussedHere,
    Draft,
    EarlierPaperByMember,
    MemberIsAuthor,
    MemberMayCare,
    PaperMeta,
    RelatedToEarlierPaper,
    SocialSignal,
    Style,
)
from socialrag.recommender.explain.llm import LLMClient
from socialrag.recommender.explain.prompts import load_prompt
from socialrag.recommender.explain.summary import summarize
from socialrag.recommender.explain.verify import Allowed, allowed_from, check_text
from socialrag.recommender.explain.wording import (
    SAFE_TEXT,
    build_template_text,
    member_token,
    members_in_text,
    plan_mentions,
    render_signal,
)
from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.rows import PaperInfo
from socialrag.text import as_data, without_fence

log = logging.getLogger(__name__)


SHORT_LIMIT = 200  # characters of an explanation in a channel that asked for `short` ones

LANGUAGES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "sv": "Swedish",
    "da": "Danish",
    "no": "Norwegian",
    "fi": "Finnish",
    "pl": "Polish",
    "cs": "Czech",
    "tr": "Turkish",
    "ru": "Russian",
    "uk": "Ukrainian",
    "el": "Greek",
    "he": "Hebrew",
    "ar": "Arabic",
    "hi": "Hindi",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "vi": "Vietnamese",
    "id": "Indonesian",
}


@dataclass(frozen=True)
class GenerateConfig:
    limit: int = 400
    quiet_days: float = 7.0
    language: str | None = None  # a code of ``LANGUAGES`` the `llm` style writes in (None: English)


def explanation_limit(length: str, limit: int) -> int:
    """The most characters of an explanation: the process's limit, or ``SHORT_LIMIT`` for a `short` channel."""
    return min(limit, SHORT_LIMIT) if length == "short" else limit


def language_line(code: str | None) -> str:
    """The final prompt's sentence on the language; English says nothing more."""
    name = LANGUAGES.get(code or "en", "English")
    if name == "English":
        return "Write the final message in English."
    return (
        f"Write the final message in {name}. Keep the strings listed above exactly as written, "
        "in their own language, and keep every name and number."
    )


def paper_url(ids: dict[str, str], fallback: str | None) -> str:
    """The page to link a title to: the arXiv abstract, the ACL Anthology page, the DOI, or what the source gave."""
    if "arxiv" in ids:
        return f"https://arxiv.org/abs/{ids['arxiv']}"
    if "acl" in ids:
        return f"https://aclanthology.org/{ids['acl']}"
    if "doi" in ids:
        return f"https://doi.org/{ids['doi']}"
    if fallback:
        return fallback
    if "s2" in ids:
        return f"https://www.semanticscholar.org/paper/{ids['s2']}"
    return ""


def build_meta(info: PaperInfo, ids: dict[str, str], *, summary_limit: int = 300) -> PaperMeta:
    authors = tuple(as_data(a.name) for a in info.authors[:3]) + (("et al.",) if len(info.authors) > 3 else ())
    return PaperMeta(
        paper_id=info.paper_id,
        title=as_data(info.title) or "Untitled paper",
        url=paper_url(ids, info.url),
        authors=authors,
        venue=as_data(info.venue) or None,
        year=info.year,
        summary=summarize(info.abstract, info.tldr, limit=summary_limit, body=info.body),
        ids=ids,
    )


def thread_of(signals: Sequence[SocialSignal]) -> tuple[str | None, str | None]:
    """The earlier thread the signals hang on (h5 or h7 with a permalink): its link and its paper's title."""
    for s in signals:
        if isinstance(s.fact, RelatedToEarlierPaper | EarlierPaperByMember) and s.permalinks:
            return s.permalinks[0], as_data(s.fact.paper_title) or None
    return None, None


def template_text(style: Style, signals: Sequence[SocialSignal], info: PaperInfo, limit: int) -> str:
    with_summary, with_signals = style != "template", style != "tldr"
    return build_template_text(
        signals,
        info.abstract,
        info.tldr,
        with_summary=with_summary,
        with_signals=with_signals,
        limit=limit,
        body=info.body,
    )


def build_allowed(
    ctx: ChannelContext, info: PaperInfo, signals: Sequence[SocialSignal], language: str | None = None
) -> Allowed:
    earlier = [
        ctx.papers[s.related_paper_id].info
        for s in signals
        if s.related_paper_id is not None and s.related_paper_id in ctx.papers
    ]
    known_authors = {a.name for p in ctx.papers.values() for a in p.info.authors}
    known_venues = {p.info.venue for p in ctx.papers.values() if p.info.venue}
    return allowed_from(
        signals,
        paper_texts=[info.abstract, info.tldr, info.title, str(info.year or ""), *(text for _, text in info.body)],
        paper_authors=[a.name for a in info.authors],
        paper_venue=info.venue,
        known_authors=known_authors,
        known_venues=known_venues,
        titles=[info.title or ""] + [p.title or "" for p in earlier],
        member_names=[ctx.display(m) for s in signals for m in s.members],
        check_names=(language or "en") == "en",
    )


def finish_draft(
    ctx: ChannelContext,
    info: PaperInfo,
    ids: dict[str, str],
    signals: Sequence[SocialSignal],
    style: Style,
    text: str,
    config: GenerateConfig,
    *,
    score: float = 0.0,
    fallback_reason: str | None = None,
) -> Draft:
    # only the chosen signals' members may be mentioned or named: a member token inside a title or abstract
    # (text written by others) is data and notifies nobody
    signal_members = {m for s in signals for m in s.members}
    in_text = [m for m in members_in_text(text) if m in signal_members]
    # only members of the channel who allow it are notified; others are named
    enabled = {uid: m.mentions_enabled and m.in_channel for uid, m in ctx.members.items()}
    mentions = plan_mentions(in_text, enabled, ctx.last_mentioned, ctx.as_of, config.quiet_days)
    link, title = thread_of(signals)
    return Draft(
        team_id=ctx.team_id,
        channel_id=ctx.channel_id,
        paper=build_meta(info, ids),
        style=style,
        explanation=text,
        signals=tuple(signals),
        thread_link=link,
        thread_title=title,
        mentions=mentions,
        named={uid: ctx.display(uid) for uid in dict.fromkeys(in_text)},
        score=score,
        fallback_reason=fallback_reason,
    )


def build_draft(
    ctx: ChannelContext,
    info: PaperInfo,
    ids: dict[str, str],
    signals: Sequence[SocialSignal],
    style: Style,
    config: GenerateConfig,
    *,
    llm: LLMClient | None = None,
    score: float = 0.0,
) -> Draft:
    """The explanation in ``style``, verified whatever the style; ``llm`` falls back to ``template+tldr`` when
    it fails verification twice or the LLM fails once, and a template text that fails drops the paper's summary,
    then the signals."""
    allowed = build_allowed(ctx, info, signals, config.language)
    if style != "llm":
        chosen, text, reason = verified_template(style, signals, info, allowed, config.limit)
        return finish_draft(ctx, info, ids, signals, chosen, text, config, score=score, fallback_reason=reason)
    reason = "no LLM is configured"
    if llm is not None:
        required = _required(signals)
        for attempt in (1, 2):
            try:
                text = run_chain(llm, ctx, info, signals, config.limit, config.language)
            except SourceError as exc:
                # the client tried the call twice already: a second chain would wait on the same failing server
                reason = f"the LLM failed: {exc}"
                log.warning("attempt %d: %s", attempt, reason)
                break
            problems = check_text(text, allowed, required=required, limit=config.limit)
            if not problems:
                return finish_draft(ctx, info, ids, signals, "llm", text, config, score=score)
            reason = "the generated text failed verification: " + "; ".join(problems[:3])
            log.warning("attempt %d: %s", attempt, reason)
    chosen, text, problem = verified_template("template+tldr", signals, info, allowed, config.limit)
    reason = f"{reason}; {problem}" if problem else reason
    return finish_draft(ctx, info, ids, signals, chosen, text, config, score=score, fallback_reason=reason)


def verified_template(
    style: Style, signals: Sequence[SocialSignal], info: PaperInfo, allowed: Allowed, limit: int
) -> tuple[Style, str, str | None]:
    """The template text of ``style`` if it passes the verifier; otherwise the signals alone, otherwise a
    sentence that states nothing. Returns the style used, the text and why it fell back (None if it did not)."""
    text = template_text(style, signals, info, limit)
    problems = check_text(text, allowed, limit=limit)
    if not problems:
        return style, text, None
    reason = "the template text failed verification: " + "; ".join(problems[:3])
    log.warning("%s", reason)
    if style != "template" and signals:
        social = template_text("template", signals, info, limit)
        if not check_text(social, allowed, limit=limit):
            return "template", social, reason
    return "template", SAFE_TEXT, reason


def _required(signals: Sequence[SocialSignal]) -> list[str]:
    required: list[str] = []
    for s in signals:
        if isinstance(s.fact, RelatedToEarlierPaper) and as_data(s.fact.paper_title):
            required.append(as_data(s.fact.paper_title))
        if isinstance(s.fact, MemberIsAuthor | EarlierPaperByMember | MemberMayCare):
            required.append(member_token(s.fact.member))
    return list(dict.fromkeys(required))


def run_chain(
    llm: LLMClient,
    ctx: ChannelContext,
    info: PaperInfo,
    signals: Sequence[SocialSignal],
    limit: int,
    language: str | None = None,
) -> str:
    """The four-prompt chain of the paper's Figure 4, built from the signals that are there."""
    by_kind: dict[str, SocialSignal] = {s.kind: s for s in signals}
    parts = [_paper_part(llm, info, signals, limit)]
    h5 = next((s for s in signals if isinstance(s.fact, RelatedToEarlierPaper)), None)
    h7 = next((s for s in signals if isinstance(s.fact, EarlierPaperByMember)), None)
    if h5 is None and h7 is not None and isinstance(h7.fact, EarlierPaperByMember):
        # the member's earlier paper is the one the relation is told of
        link = RelatedToEarlierPaper(h7.fact.paper_title, h7.fact.relation, 0.0, shared_authors=h7.fact.shared_authors)
        h5 = replace(h7, fact=link)
    if h5 is not None:
        related = _relation_part(llm, ctx, info, h5, by_kind.get("h6"), limit)
        if related:
            parts.append(related)
    if h7 is not None:
        parts.append(render_signal(h7, [h7, h5] if h5 is not None else [h7]))
    h8 = next((s for s in signals if isinstance(s.fact, MemberMayCare)), None)
    if h8 is not None:
        prompt = load_prompt("member")
        reason = render_signal(h8, signals)
        member = member_token(h8.members[0])
        values = {"title": as_data(info.title), "member": member, "reason": reason, "limit": 160}
        parts.append(llm.complete(prompt, prompt.render(**values)))
    final = load_prompt("final")
    no_bold = [as_data(info.title)] + [
        as_data(s.fact.paper_title) for s in signals if isinstance(s.fact, RelatedToEarlierPaper | EarlierPaperByMember)
    ]
    no_bold += [member_token(m) for s in signals for m in s.members]
    return llm.complete(
        final,
        final.render(
            # the parts are the model's reading of others' words: they stay inside the final prompt's fence
            draft="\n".join(without_fence(p) for p in parts),
            limit=limit,
            required="\n".join(_required(signals)) or "(none)",
            no_bold="\n".join(dict.fromkeys(x for x in no_bold if x)) or "(none)",
            language_line=language_line(language),
        ),
    )


def _paper_part(llm: LLMClient, info: PaperInfo, signals: Sequence[SocialSignal], limit: int) -> str:
    lines = []
    for s in signals:
        f = s.fact
        if isinstance(f, MemberIsAuthor):
            lines.append(f"- The author {as_data(f.author)} is the group member written {member_token(f.member)}.")
        elif isinstance(f, AuthorDiscussedHere):
            lines.append(f"- {as_data(f.author)} wrote {f.count} papers the group discussed recently.")
    prompt = load_prompt("paper")
    return llm.complete(
        prompt,
        prompt.render(
            title=as_data(info.title),
            authors=prompt_authors([a.name for a in info.authors]),
            abstract=as_data(info.abstract or info.tldr),
            limit=min(limit, 300),
            author_facts="\n".join(lines) or "(nothing)",
        ),
    )


PROMPT_AUTHORS = 10  # a paper's authors the paper prompt lists; the group's own are in its facts besides


def prompt_authors(names: Sequence[str]) -> str:
    """A paper's author list for the prompt: the first ``PROMPT_AUTHORS``, then how many more (a collaboration
    of hundreds would fill the prompt with names the text has no use for)."""
    shown = ", ".join(as_data(n) for n in names[:PROMPT_AUTHORS])
    more = len(names) - PROMPT_AUTHORS
    return f"{shown} and {more} more" if more > 0 else shown


def _relation_part(
    llm: LLMClient,
    ctx: ChannelContext,
    info: PaperInfo,
    h5: SocialSignal,
    h6: SocialSignal | None,
    limit: int,
) -> str | None:
    fact = h5.fact
    assert isinstance(fact, RelatedToEarlierPaper)
    earlier = ctx.papers.get(h5.related_paper_id or -1)
    context = fact.context
    relation = {
        "cites": "this paper cites it",
        "cited_by": "it cites this paper",
        "shared_authors": "they share authors",
        "similar": "they are close in topic",
    }[fact.relation]
    reception = render_signal(h6) if h6 is not None else "not known"
    prompt = load_prompt("relation")
    answer = llm.complete(
        prompt,
        prompt.render(
            title=as_data(info.title),
            abstract=as_data(info.abstract),
            earlier_title=as_data(fact.paper_title),
            earlier_abstract=as_data(earlier.info.abstract if earlier else None),
            relation=relation,
            context_line=f'The citing sentence: "{as_data(context)}"' if context else "",
            reception=reception,
            limit=min(limit, 300),
        ),
    )
    return None if answer.strip().upper() == "NONE" else answer
