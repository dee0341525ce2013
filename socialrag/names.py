"""Normalised keys for people's names and venue series, so that later steps can join on them. Pure."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_ORDINAL_WORDS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
]
_ORDINAL = re.compile(r"\b(\d+(st|nd|rd|th)|" + "|".join(_ORDINAL_WORDS) + r")\b")
_YEAR = re.compile(r"(?<![\d.])(19|20)\d{2}(?![\d.])")
_PARENS = re.compile(r"\(([^)]*)\)")
_VOLUME = re.compile(r"[,:]?\s*\(?\bvolume\b.*$")
_TAIL = re.compile(r"[:,]\s*(long|short|technical|demo|system|student|industry)[^:]*papers?.*$")


def fold_text(text: str) -> str:
    """Lower case, accents removed, punctuation turned into single spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", plain).split())


def normalize_person_name(name: str) -> str:
    """``Hinrich Schütze`` and ``hinrich  schutze`` share one key."""
    return fold_text(name)


def same_person(author: str, names: tuple[str, ...] | list[str]) -> bool:
    """Whether one of a member's names (their Slack full name or display name) can be the author's: the same
    family name, and the same first initial where the member's name has one (``G. Neubig`` and ``Graham
    Neubig`` agree; ``graham`` alone, or ``Geoffrey Hinton``, does not)."""
    wanted = fold_text(author).split()
    if len(wanted) < 2:
        return False
    for name in names:
        words = fold_text(name).split()
        if len(words) >= 2 and words[-1] == wanted[-1] and words[0][0] == wanted[0][0]:
            return True
    return False


def family_name(name: str) -> str:
    """The family name of an author as sources write them: the last word (``Ana Lopez``), the part before a comma
    (``Lopez, Ana``), folded (``López`` is ``lopez``); a name folding leaves nothing of (another script) whole."""
    written = name.split(",", 1)[0] if "," in name else name
    words = fold_text(written).split()
    return words[-1] if words else "".join(written.split()).lower()


def authors_agree(one: Sequence[str], other: Sequence[str]) -> bool:
    """Whether two author lists can be one paper's: one family name at least is in both (a preprint and its
    published version keep their authors). A list unknown agrees with none: nothing shows them to be one."""
    mine = {family_name(n) for n in one} - {""}
    return bool(mine & ({family_name(n) for n in other} - {""}))


def normalize_venue(name: str) -> tuple[str, str]:
    """The (series key, short display name) of a venue string.

    ``Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics`` and the
    57th meeting share one key, so that "the group keeps reading ACL papers" can be counted.
    """
    text = " ".join(name.split())
    acronym = next((a for a in _PARENS.findall(text) if _looks_like_acronym(a)), None)
    lowered = text.lower()
    lowered = _PARENS.sub(" ", lowered)
    lowered = _VOLUME.sub("", lowered)
    lowered = _TAIL.sub("", lowered)
    lowered = re.sub(r"^\s*(the\s+)?proceedings\s+of\s+(the\s+)?", "", lowered)
    lowered = _ORDINAL.sub(" ", lowered)
    lowered = _YEAR.sub(" ", lowered)
    key = fold_text(lowered) or fold_text(text)
    display = short_venue(key) or (_short_display(acronym) if acronym else _display(text))
    return key, display


# Well-known series, by a phrase of their normalised key, and the short name researchers use.
_KNOWN_SERIES = (
    ("findings of the association for computational linguistics", "Findings of ACL"),
    ("north american chapter of the association for computational linguistics", "NAACL"),
    ("european chapter of the association for computational linguistics", "EACL"),
    ("asia pacific chapter of the association for computational linguistics", "AACL"),
    ("annual meeting of the association for computational linguistics", "ACL"),
    ("empirical methods in natural language processing", "EMNLP"),
    ("international conference on computational linguistics", "COLING"),
    ("language resources and evaluation", "LREC"),
    ("human factors in computing systems", "CHI"),
    ("neural information processing systems", "NeurIPS"),
    ("international conference on machine learning", "ICML"),
    ("international conference on learning representations", "ICLR"),
    ("computer vision and pattern recognition", "CVPR"),
    ("computer supported cooperative work", "CSCW"),
    ("user interface software and technology", "UIST"),
    ("workshop on semantic evaluation", "SemEval"),
    ("conference on machine translation", "WMT"),
)


def short_venue(key: str) -> str | None:
    """The short name of a well-known venue series, from its normalised key."""
    return next((short for phrase, short in _KNOWN_SERIES if phrase in key), None)


def _looks_like_acronym(text: str) -> bool:
    core = re.sub(r"[\s\-'’\d]", "", text)
    return 2 <= len(core) <= 16 and core.isupper()


def _short_display(acronym: str) -> str:
    return re.sub(r"[\s\-]*'?\d{2,4}$", "", acronym.strip()).strip() or acronym.strip()


def _display(text: str) -> str:
    text = re.sub(r"^\s*(the\s+)?proceedings\s+of\s+(the\s+)?", "", text, flags=re.IGNORECASE)
    text = re.sub(_ORDINAL.pattern, "", text, flags=re.IGNORECASE)
    text = _YEAR.sub("", text)
    text = re.sub(r"\s*[,:]?\s*\(?\bvolume\b.*$", "", text, flags=re.IGNORECASE)
    return " ".join(text.split()).strip(" ,:") or text


# scripts written without spaces between words: each of their characters counts as a word of a title
_UNSPACED = ("CJK UNIFIED", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR")


def _words(title: str) -> list[str]:
    """A title's words in any script: lower case, accents removed; a character of a script written without
    spaces (Chinese, Japanese, Thai) is a word of its own."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", title) if not unicodedata.combining(c)).casefold()
    words: list[str] = []
    for run in re.findall(r"[^\W_]+", plain):
        word = ""
        for c in run:
            if _unspaced(c):
                words += [word, c] if word else [c]
                word = ""
            else:
                word += c
        words += [word] if word else []
    return words


def _title_words(title: str) -> set[str]:
    """The words that tell titles apart: four letters or more, holding a digit, or of a script without spaces."""
    return {w for w in _words(title) if len(w) >= 4 or any(c.isdigit() for c in w) or _unspaced(w[0])}


def _unspaced(c: str) -> bool:
    return not c.isascii() and unicodedata.name(c, "").startswith(_UNSPACED)


def titles_agree(one: str | None, other: str | None) -> bool:
    """Whether two titles can be one paper's: half the telling words of the shorter, or more, are in the other, and
    two of them at least when it has two (a preprint's title and its published one's usually share most). Titles
    with no telling word (only short ones) are compared by all their words. A title unknown agrees with any:
    nothing tells them apart; a title with no word at all (only signs) agrees with none that has one."""
    if not (one or "").strip() or not (other or "").strip():
        return True
    first, second = _title_words(one or ""), _title_words(other or "")
    if not first or not second:
        first, second = set(_words(one or "")), set(_words(other or ""))
    if not first or not second:
        return not first and not second
    shared, shorter = len(first & second), min(len(first), len(second))
    return 2 * shared >= shorter and shared >= min(2, shorter)
