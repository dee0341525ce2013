"""Step 3 for a post's section line: the sentence saying which section of the recommended paper meets what a member
discussed recently ("Its section *4.2 Training details* speaks of “label smoothing”, which {@U1} raised on 12 Mar
in the thread on “Earlier title”."), and its check before it joins the explanation: the section is one the paper's
stored passages stand under, each word shown is in the passage and in the member's replies, the member is the one
who replied (named, never notified, by the caller), and nothing else is stated. Pure."""

from __future__ import annotations

from collections.abc import Collection

from socialrag.recommender.explain.verify import Allowed, check_text, loud_in, numbers_in
from socialrag.recommender.explain.wording import member_token
from socialrag.recommender.retrieve.keywords import topic_words
from socialrag.recommender.retrieve.passages import word_root
from socialrag.recommender.retrieve.section_links import SectionLink
from socialrag.text import as_data

LINE_LIMIT = 260
HEADING_SHOWN = 80
TITLE_SHOWN = 100


def _heading(link: SectionLink) -> str:
    return as_data(link.section).replace("*", "")[:HEADING_SHOWN]


TITLE_LEAST = 24  # a thread's title shortened below this is left out ("a thread here")


def _title(link: SectionLink, most: int = TITLE_SHOWN) -> str:
    title = as_data(link.reply.title).replace("“", "").replace("”", "")
    return title if len(title) <= most else title[: most - 1].rsplit(" ", 1)[0] + "…"


def render_section_line(link: SectionLink) -> str:
    """The sentence, the member as their token (the caller names them in plain text); the thread's title is
    shortened, or left out, so that the line keeps within ``LINE_LIMIT`` with a long heading."""
    phrases = " and ".join(f"“{as_data(p)}”" for p in link.phrases)
    when = f"{link.reply.at.day} {link.reply.at:%b}"
    heading = _heading(link)
    section = f"Its section *{heading}*" if heading else "Its text"
    head = f"{section} speaks of {phrases}, which {member_token(link.reply.user_id)} raised on {when} in "
    room = LINE_LIMIT - len(head) - len("the thread on “”.")
    title = _title(link, min(TITLE_SHOWN, room)) if room >= TITLE_LEAST else ""
    return head + (f"the thread on “{title}”." if title else "a thread here.")


def check_section_line(line: str, link: SectionLink, headings: Collection[str]) -> list[str]:
    """Every reason the line may not be posted (empty when it may): ``headings`` are the sections the paper's
    stored passages stand under."""
    problems = []
    if link.section not in headings:
        problems.append(f"names a section the paper's text does not have: {link.section[:60]!r}")
    replied = {word_root(w) for w in topic_words(link.reply.text, most=10_000)}
    for phrase in link.phrases:
        if phrase.lower() not in link.passage.lower():
            problems.append(f"shows words the passage does not hold: {phrase!r}")
        if not {word_root(w) for w in topic_words(phrase)} <= replied:
            problems.append(f"shows words the member did not write: {phrase!r}")
    if not link.phrases:
        problems.append("shows no words the passage and the thread share")
    said = " ".join([_heading(link), _title(link), *link.phrases, f"{link.reply.at.day}"])
    allowed = Allowed(
        members={link.reply.user_id}, numbers=numbers_in(said), no_bold={_title(link)}, loud=loud_in(said)
    )
    return problems + check_text(line, allowed, limit=LINE_LIMIT, max_bold=1)
