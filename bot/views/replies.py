"""PaperPing's replies in threads as Slack shows them: the context on a member's share, and the answer to a
question asked in a paper's thread. Pure."""

from __future__ import annotations

from typing import Any

from bot.views.post_blocks import escape, link, mrkdwn, quote
from socialrag.recommender import LIMIT_REACHED, NO_ANSWER, NO_TIME, TEXT_SILENT, Answer, ShareContext

ABSTRACT_SHOWN = 700
QUOTE_SHOWN = 450


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
    the channel's related threads; from a paper's full text, the passage with its section (``text_answer``)."""
    paper = link(answer.paper_url, answer.paper_title)
    if answer.from_text:
        return text_answer(answer, paper)
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
    elif answer.why_not in (NO_ANSWER, NO_TIME):
        head = f"The language model did not answer just now. Here is the abstract of {paper}."
    elif answer.why_not == "the paper's abstract does not say":
        head = f"The abstract of {paper} does not answer that. Here it is, with the related threads here."
    else:
        head = f"I couldn't give an answer I could check against {paper}. Here is its abstract and related threads."
    parts = [head]
    parts.append(f">{quote(answer.abstract, ABSTRACT_SHOWN)}" if answer.abstract else "No abstract is known for it.")
    if answer.related and answer.why_not == "no LLM is configured here":  # otherwise the paper's own link only
        parts.append("Related here: " + ", ".join(link(r.link, r.title) for r in answer.related))
    return "\n".join(parts)


def passage_line(answer: Answer) -> str:
    """The passage an answer rests on, as the paper writes it: ``From *4.2 Datasets*: “…”``."""
    if answer.quoted is None:
        return ""
    section = quote(answer.quoted.section.replace("*", ""), 120)
    where = f"From *{section}*" if section else "From its text"
    return f"{where}: “{quote(answer.quoted.text, QUOTE_SHOWN)}”"


def text_answer(answer: Answer, paper: str) -> str:
    """An answer from a paper's full text: the checked answer and the passage it quotes; else the passage closest
    to the question and why there is no written answer; or that the paper's text does not say."""
    if answer.why_not == TEXT_SILENT or answer.quoted is None:
        return f"The paper's text does not say: I found no passage of {paper} that answers that."
    if answer.text is not None:
        note = f"_From the full text of {paper}; check the paper for details._"
        return f"{escape(answer.text)}\n{passage_line(answer)}\n{note}"
    if answer.why_not and answer.why_not.startswith(LIMIT_REACHED):
        head = (
            f"I can't answer more questions with the language model right now: "
            f"{answer.why_not.removeprefix(LIMIT_REACHED)}. Try again next hour; here is the passage of {paper} "
            "closest to your question."
        )
    elif answer.why_not in (NO_ANSWER, NO_TIME):
        head = f"The language model did not answer just now; here is the passage of {paper} closest to your question:"
    elif answer.why_not == "no LLM is configured here":
        head = f"The passage of {paper} closest to your question (no language model is configured to write an answer):"
    else:
        head = (
            f"I couldn't write an answer I could check against {paper}; here is the passage closest to your question:"
        )
    return f"{head}\n{passage_line(answer)}"
