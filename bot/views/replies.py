"""PaperPing's replies in threads as Slack shows them: the context on a member's share, and the answer to a
question asked in a paper's thread. Pure."""

from __future__ import annotations

from typing import Any

from bot.views.post_blocks import escape, link, mrkdwn, quote
from socialrag.recommender import LIMIT_REACHED, Answer, ShareContext

ABSTRACT_SHOWN = 700


def context_blocks(found: ShareContext) -> tuple[str, list[dict[str, Any]]]:
    """The reply: the gist and the links to the channel, in short lines; the earlier thread as a link."""
    lines = [escape(x) for x in found.lines]
    if found.thread_link:
        label = f"Earlier thread: {found.thread_title}" if found.thread_title else "Earlier thread"
        lines.append(link(found.thread_link, label))
    text = "\n".join(lines)
    return text, [{"type": "context", "elements": [mrkdwn(text)]}]


def answer_blocks(answer: Answer) -> str:
    """The answer in the thread: the LLM's checked answer, or plainly why there is none, then the abstract and
    the channel's related threads."""
    paper = link(answer.paper_url, answer.paper_title)
    if answer.text is not None:
        return f"{escape(answer.text)}\n_From the abstract of {paper}; check the paper for details._"
    if answer.why_not == "no LLM is configured here":
        head = (
            f"I can't answer questions here: no language model is configured for PaperPing. I can show the "
            f"abstract of {paper} and the related threads here."
        )
    elif answer.why_not and answer.why_not.startswith(LIMIT_REACHED):
        head = (
            f"I can't answer more questions with the language model right now: "
            f"{answer.why_not.removeprefix(LIMIT_REACHED)}. Try again next hour; here is the abstract of {paper}."
        )
    elif answer.why_not == "the paper's abstract does not say":
        head = f"The abstract of {paper} does not answer that. Here it is, with the related threads here."
    else:
        head = f"I couldn't give an answer I could check against {paper}. Here is its abstract and related threads."
    parts = [head]
    parts.append(f">{quote(answer.abstract, ABSTRACT_SHOWN)}" if answer.abstract else "No abstract is known for it.")
    if answer.related and answer.why_not == "no LLM is configured here":  # otherwise the paper's own link only
        parts.append("Related here: " + ", ".join(link(r.link, r.title) for r in answer.related))
    return "\n".join(parts)
