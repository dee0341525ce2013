"""A paper's full text where members read about it (issue 56), beside the thread answers (``fulltext_answers``):
whether a channel uses full text at all, the passages a gist may come from when the abstract is poor, and the
post's section line (which section meets what the group discussed recently). Without a full text, or in a channel
or workspace that turned it off, everything stays as it was.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import psycopg

from socialrag import storage
from socialrag.models import Draft
from socialrag.recommender.explain.section_line import check_section_line, render_section_line
from socialrag.recommender.explain.summary import poor_abstract
from socialrag.recommender.retrieve.context import ChannelContext
from socialrag.recommender.retrieve.section_links import link_section, recent_replies
from socialrag.rows import PaperInfo

log = logging.getLogger(__name__)

LINE_FROM_LIMIT = 300  # a channel whose explanations are shorter than this (`short`) gets no section line


def text_in_use(conn: psycopg.Connection, team_id: str, channel_id: str) -> bool:
    """Whether this channel's answers and posts may use papers' full text: neither the channel nor its workspace
    turned it off (`/paperping fulltext off`)."""
    if not storage.settings.load_channel_settings(conn, team_id, channel_id).fulltext:
        return False
    return storage.fulltext.load_workspace_fulltext(conn, team_id)


def with_body(conn: psycopg.Connection, team_id: str, channel_id: str, info: PaperInfo) -> PaperInfo:
    """The paper with the passages its gist may come from (``PaperInfo.body``: its introduction's and conclusion's
    first passages), when it has no tldr, its abstract is missing or poor, and the channel uses full text."""
    if info.tldr or not poor_abstract(info.abstract) or not text_in_use(conn, team_id, channel_id):
        return info
    body = storage.passage_search.load_gist_passages(conn, info.paper_id)
    return replace(info, body=tuple((p.section, p.text) for p in body)) if body else info


def with_section_line(conn: psycopg.Connection, ctx: ChannelContext, draft: Draft, limit: int) -> Draft:
    """The draft with a line saying which section of its paper meets a member's recent replies in a thread here
    (``retrieve.section_links``), checked (``explain.section_line``), the member named in plain text, never
    notified; the draft as it was when the paper has no full text, nothing clears the threshold, or the check
    fails."""
    if limit < LINE_FROM_LIMIT or draft.style == "tldr" or not text_in_use(conn, ctx.team_id, ctx.channel_id):
        return draft
    pid = draft.paper.paper_id
    passages = storage.fulltext.load_passages(conn, pid)
    replies = recent_replies(ctx)
    if not passages or not replies:
        return draft
    vectors = storage.fulltext.load_passage_vectors(conn, ctx.model, [pid])
    link = link_section(passages, replies, vectors=vectors, thread_vectors=ctx.vectors)
    if link is None:
        return draft
    line = render_section_line(link)
    problems = check_section_line(line, link, {p.section for p in passages})
    if problems:
        log.warning("the section line of paper %s failed the check: %s", pid, "; ".join(problems[:3]))
        return draft
    uid = link.reply.user_id
    return replace(draft, explanation=f"{draft.explanation}\n{line}", named={**draft.named, uid: ctx.display(uid)})
