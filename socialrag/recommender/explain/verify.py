"""Check a generated explanation before anything leaves: every social fact must come from the signals. Pure.

Members, links, numbers, emoji, author and venue names in the text must be among what the chosen signals
(and the paper's own metadata) allow; required strings must be there; the length and bold limits must
hold; bold never covers a title or a member; no pictograph, exclamation mark or word of hype its sources do not
hold.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from socialrag.models import SocialSignal
from socialrag.recommender.explain.wording import MEMBER_TOKEN
from socialrag.text import BARE_DOMAIN, as_data

_URL = re.compile(r"https?://[^\s<>|)\]]+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?%?(?![\w])")
_EMOJI = re.compile(r":([a-z0-9_+\-]+(?:::skin-tone-\d)?):")
_BOLD = re.compile(r"\*([^*\n]+)\*")
_SLACK_MENTION = re.compile(r"<@([A-Z0-9]+)>|(?<![\w{])@([A-Za-z][\w.\-]*)")
_SPECIAL = re.compile(r"<[!#@][^>]*>|<(?:https?|mailto|ftp):[^>]*>", re.IGNORECASE)
_BROADCAST_WORDS = {"here", "channel", "everyone", "all"}
# a name: a word with a capital or a digit inside it (BERT, MiniVID, GPT-3, H37Rv), or a capitalised word that does
# not start a sentence (Vero, Butterworth)
_NAMED = re.compile(r"\b[A-Za-z]*[A-Z0-9][A-Za-z0-9]*[A-Z0-9][\w-]*|\b[A-Z][a-z][\w-]*")
# a sentence's start: after its end mark (and any closing quote or bracket), a line break or an opening quote
_SENTENCE_START = re.compile(r"(?:^|[.!?:;…][\"'”’)\]]*\s+|\n\s*|[“\"(\[]\s*)$")
# words that open sentences and never name anyone, wherever the sentence is taken to start
_OPENERS = (
    "a an and also as at both but by each for from he her his however in it its no not of on one our she so such that "
    "the their then there these they this those to two we what when where which while who with yet you"
)
_NEVER_NAMES = frozenset(
    {
        *_OPENERS.split(),
        # the dates PaperPing writes ("3 Mar", "on Monday") are not names either
        *(m.lower() for m in calendar.month_name[1:]),
        *(m.lower() for m in calendar.month_abbr[1:]),
        *(d.lower() for d in calendar.day_name),
        *(d.lower() for d in calendar.day_abbr),
        "sept",
    }
)
_POINT = re.compile(r"(?<!\d)\.|\.(?!\d)")  # a full stop, not a decimal point
_PLAIN = re.compile(r"[^\w%.]+|_")
# what makes a message sound louder than its sources: a pictograph (🚀, 🔥, ⭐), an exclamation mark, a word of hype
_PICTOGRAPH = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF]")
_HYPE = re.compile(
    r"\b(?:ground-?breaking|revolution(?:ary|i[sz]es?)|game[- ]chang(?:er|ing)|must[- ]read|amazing|incredible|"
    r"exciting|breakthrough|mind-blowing|stunning|awesome|fantastic|remarkable|unprecedented|cutting-edge)\b",
    re.IGNORECASE,
)


@dataclass
class Allowed:
    """What a text may state. ``known_*`` are names the channel context knows; stating one that is not in
    the allowed set is an invention."""

    members: set[str] = field(default_factory=set)
    member_names: set[str] = field(default_factory=set)
    urls: set[str] = field(default_factory=set)
    numbers: set[str] = field(default_factory=set)
    emoji: set[str] = field(default_factory=set)
    authors: set[str] = field(default_factory=set)
    venues: set[str] = field(default_factory=set)
    known_authors: set[str] = field(default_factory=set)
    known_venues: set[str] = field(default_factory=set)
    no_bold: set[str] = field(default_factory=set)
    loud: set[str] = field(default_factory=set)  # what ``loud_in`` finds in the sources: theirs to say, not hype
    # the words (``plain_words``) of every source, when a name the text states must be among them (None: unchecked)
    words: set[str] | None = None
    # the words of the paper's own texts: a venue named like a common word ("Cell", "Neuron") said as the paper says it
    own_words: set[str] = field(default_factory=set)


def loud_in(text: str | None) -> set[str]:
    """The pictographs, exclamation marks and words of hype in ``text`` (words lower-cased)."""
    text = text or ""
    found = set(_PICTOGRAPH.findall(text)) | {m.group(0).lower() for m in _HYPE.finditer(text)}
    return found | ({"!"} if "!" in text else set())


def plain_words(text: str) -> str:
    """Text compared as words: lower case, quotes and punctuation between words folded to one space."""
    return " ".join(_PLAIN.sub(" ", _POINT.sub(" ", text.lower())).split())


def names_in(text: str) -> list[str]:
    """The names a text states: words with a capital or a digit inside them, and capitalised words that do not
    begin a sentence."""
    found = []
    for m in _NAMED.finditer(text):
        word = m.group(0).strip("-")
        if word[:1].isupper() and word[1:].islower() and _SENTENCE_START.search(text[: m.start()]):
            continue
        if word.lower() in _NEVER_NAMES:
            continue
        if any(c.isalpha() for c in word):
            found.append(word)
    return found


def unsourced_names(text: str, words: set[str]) -> list[str]:
    """A problem for each name the text states (``names_in``: "Yoshua Bengio", "DeepMind", "GPT-4") that is not a
    word of its sources (``words``); a plural of one is (they wrote "LLM", the text says "LLMs")."""
    problems = []
    said = MEMBER_TOKEN.sub(" ", _EMOJI.sub(" ", _URL.sub(" ", text))).replace("*", "")  # bold: "*Possibly* ..."
    for name in dict.fromkeys(names_in(said)):
        if any(w not in words and w.removesuffix("s") not in words for w in plain_words(name).split()):
            problems.append(f"names what its sources do not: {name}")
    return problems


def numbers_in(text: str | None) -> set[str]:
    return {m.group(0).rstrip("%").replace(",", "") for m in _NUMBER.finditer(text or "")}


def allowed_from(
    signals: Sequence[SocialSignal],
    *,
    paper_texts: Iterable[str | None],
    paper_authors: Iterable[str],
    paper_venue: str | None,
    known_authors: Iterable[str],
    known_venues: Iterable[str],
    titles: Iterable[str],
    member_names: Iterable[str] = (),
    check_names: bool = False,
) -> Allowed:
    """What a post may state: the chosen signals, the paper's own texts, authors and venue; with ``check_names``
    (English only: other languages capitalise their nouns), every name it states must be a word of those too."""
    allowed = Allowed(known_authors={a for a in known_authors if a}, known_venues={v for v in known_venues if v})
    sources: list[str] = []
    for s in signals:
        allowed.members.update(s.members)
        allowed.urls.update(s.permalinks)
        allowed.emoji.update(s.emoji)
        allowed.authors.update(s.authors)
        allowed.venues.update(s.venues)
        allowed.numbers.update(str(c) for c in s.counts)
        for key in ("member", "sharer"):
            if getattr(s.fact, key, None):
                allowed.members.add(str(getattr(s.fact, key)))
        for value in vars(s.fact).values():
            if isinstance(value, str):
                allowed.numbers |= numbers_in(value)
                allowed.loud |= loud_in(value)
                sources.append(value)
    for text in paper_texts:
        allowed.numbers |= numbers_in(text)
        allowed.loud |= loud_in(text)
        allowed.own_words.update(plain_words(text or "").split())
        sources.append(text or "")
    allowed.authors.update(paper_authors)
    for name in allowed.authors | allowed.venues:  # a name may carry a number ("Wei Wang 0001", "WMT 2020")
        allowed.numbers |= numbers_in(name)
        allowed.loud |= loud_in(name)
    if paper_venue:
        allowed.venues.add(paper_venue)
        allowed.numbers |= numbers_in(paper_venue)
        allowed.loud |= loud_in(paper_venue)
    allowed.no_bold.update(t for t in titles if t)
    allowed.loud |= {mark for t in titles for mark in loud_in(t)}
    allowed.member_names.update(n for n in member_names if n)
    if check_names:
        sources += [*allowed.authors, *allowed.venues, *allowed.no_bold, *allowed.member_names, *allowed.emoji]
        # the words as given and as quoted (``as_data`` drops the invisible characters that split "English\u200bCzech")
        words = {w for text in sources for cleaned in (text, as_data(text)) for w in plain_words(cleaned).split()}
        # "MultiWOZ-2.0", "8.3K" and "2%" are named as "MultiWOZ-2", "3K" and "2" too: their pieces count
        allowed.words = words | {piece.rstrip("%") for w in words for piece in w.split(".")}
    return allowed


def check_text(
    text: str, allowed: Allowed, *, required: Sequence[str] = (), limit: int = 400, max_bold: int = 3
) -> list[str]:
    """Every reason this text may not be posted (empty when it may)."""
    problems: list[str] = []
    if not text.strip():
        return ["the text is empty"]
    if text.strip().upper() == "NONE":
        return ["the model answered NONE"]
    if len(text) > limit:
        problems.append(f"{len(text)} characters, over the limit of {limit}")
    for uid in MEMBER_TOKEN.findall(text):
        if uid not in allowed.members:
            problems.append(f"mentions a member the signals do not name: {uid}")
    for m in _SLACK_MENTION.finditer(text):
        who = m.group(1) or m.group(2)
        if m.group(1) and who not in allowed.members:
            problems.append(f"mentions a member the signals do not name: {who}")
        elif m.group(2) and (who.lower() in _BROADCAST_WORDS or who not in allowed.member_names):
            problems.append(f"names someone with @ the signals do not name: @{who}")
    for special in _SPECIAL.findall(text):
        problems.append(f"carries Slack markup (a broadcast, channel link or link): {special}")
    for url in _URL.findall(text):
        if url not in allowed.urls:
            problems.append(f"links to something the signals do not give: {url}")
    for domain in BARE_DOMAIN.findall(_URL.sub(" ", text)):
        problems.append(f"names a web address: {domain}")
    stripped = _EMOJI.sub(" ", MEMBER_TOKEN.sub(" ", _URL.sub(" ", text)))
    for number in numbers_in(stripped):
        if number not in allowed.numbers:
            problems.append(f"states a number that comes from nowhere: {number}")
    for name in _EMOJI.findall(text):
        if name not in allowed.emoji:
            problems.append(f"shows an emoji nobody used: :{name}:")
    if allowed.words is not None:
        problems += unsourced_names(text, allowed.words)
    for mark in sorted(loud_in(text) - allowed.loud):  # the prompts ask for a neutral tone; this holds them to it
        problems.append(f"sounds louder than its sources: {mark}")
    lowered = text.lower()
    for author in allowed.known_authors - allowed.authors:
        # a whole name, not letters inside words ("He He" is not in "the help")
        name = author.lower()
        if len(author) > 4 and name in lowered and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", lowered):
            problems.append(f"names an author the signals do not give: {author}")
    # a venue the text may name hides the shorter ones inside it ("Findings of ACL" names no "ACL")
    unnamed = lowered
    for venue in sorted(allowed.venues, key=len, reverse=True):
        unnamed = unnamed.replace(venue.lower(), " ")
    for venue in allowed.known_venues - allowed.venues:
        if venue.lower() in allowed.own_words:  # a one-word venue the paper's own text uses as a word ("cell")
            continue
        if len(venue) > 2 and re.search(rf"\b{re.escape(venue.lower())}\b", unnamed):
            problems.append(f"names a venue the signals do not give: {venue}")
    for phrase in required:
        if phrase not in text:
            problems.append(f"lost a required string: {phrase}")
    bold = _BOLD.findall(text)
    if len(bold) > max_bold:
        problems.append(f"{len(bold)} bold phrases, more than {max_bold}")
    for phrase in bold:
        if MEMBER_TOKEN.search(phrase) or any(t.lower() in phrase.lower() for t in allowed.no_bold if len(t) > 8):
            problems.append(f"bolds a title or a member: {phrase}")
    return problems
