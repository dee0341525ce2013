"""Text written by others (paper titles, abstracts, author and venue names, channel messages), made safe to
quote. Pure.

Such text is data. Whatever markup it carries must not notify anyone, link anywhere or look like
PaperPing's own member tokens when it is quoted in a message or put into a prompt: ``as_data`` keeps its
words and drops that markup.
"""

from __future__ import annotations

import json
import re
import unicodedata

_MEMBER_TOKEN = re.compile(r"\{@([^{}\s]{0,40})\}")
# Slack's angle markup: <@U1>, <!here>, <!subteam^S1|@team>, <#C1|general>, <https://x|label>, <mailto:..>
_ANGLE = re.compile(r"<([^<>]{0,400})>")
_URL = re.compile(r"(?:https?|ftp)://\S+|www\.\S+|mailto:\S+", re.IGNORECASE)
# a bare domain such as evil.example.com or github.com/x/y (a closed list of endings, so that "e.g." or
# "v1.2" stay text)
BARE_DOMAIN = re.compile(
    r"(?<![\w./-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
    r"(?:com|org|net|io|ai|edu|gov|co|dev|app|xyz|info|me|ly|gg|us|uk|de|fr|cn|jp|ru|site|online|link|example)"
    r"\b(?:/\S*)?",
    re.IGNORECASE,
)
_BROADCAST = re.compile(r"@+(?=(?:here|channel|everyone|all)\b)", re.IGNORECASE)
# the fence the prompts put around data (``<<<DATA`` ... ``DATA>>>``): data must not be able to close it
# combining marks, which a bracket may carry without ceasing to read as one (``>\u0301>>``)
_MARKS = r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]*"
# its lookalikes too (＞＞＞, ﹥﹥﹥), and with marks on its brackets
_FENCE = re.compile(rf"(?:[<\uff1c\ufe64]{_MARKS}){{3,}}|(?:[>\uff1e\ufe65]{_MARKS}){{3,}}")
# every angle bracket and its lookalikes, dropped from text nested too deep to clean layer by layer
_BRACKET = re.compile(r"[<>\uff1c\uff1e\ufe64\ufe65]")
MOST_PASSES = 8  # layers of nested markup taken off one at a time
# invisible characters: controls, zero-width spaces and joiners, direction marks, the soft hyphen, the byte-order
# mark (what would hide a fence, ``DATA>\u2060>>``, or split a word the checks look for); the joiners only where
# they shape nothing (``shaping_joiner``)
_CONTROL = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\xad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)
JOINERS = "\u200c\u200d"  # zero-width non-joiner and joiner
_JOINER = re.compile(f"[{JOINERS}]")


def shaping_joiner(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a joiner that shapes a word: between two letters or marks of a script other than
    Latin (a Persian name's non-joiner, a Devanagari conjunct's joiner beside its virama). A letter that folds to
    an ASCII one (``é``, a fullwidth ``ｈ``) is Latin, and so is a mark over one: a joiner there would split a word
    the checks fold (``fold_text``) and compare. No markup, fence or English word the checks look for is made of
    such characters, so a joiner kept hides none."""
    return text[i] in JOINERS and _script_letter(text, i - 1, back=True) and _script_letter(text, i + 1, back=False)


def _script_letter(text: str, j: int, *, back: bool) -> bool:
    """Whether ``text[j]`` is a letter whose plain form is not ASCII, or a mark; before a joiner (``back``), a mark
    only over such a letter (the first before its marks)."""
    if not 0 <= j < len(text):
        return False
    if unicodedata.category(text[j])[0] == "M":
        while back and j > 0 and unicodedata.category(text[j])[0] == "M":  # each run of marks walked once
            j -= 1
        if not back:
            return True
    return unicodedata.category(text[j])[0] == "L" and not unicodedata.normalize("NFKD", text[j])[0].isascii()


def _hidden_joiner(m: re.Match[str]) -> str:
    return m.group(0) if shaping_joiner(m.string, m.start()) else ""


def visible(text: str) -> str:
    """``text`` without its invisible characters (``_CONTROL``) and joiners that shape nothing, and nothing else
    taken out: a right-to-left override in a source's title would turn the rest of the line around ("saved by ..."
    read backwards)."""
    return _JOINER.sub(_hidden_joiner, _CONTROL.sub("", text))


def _angle(m: re.Match[str]) -> str:
    inner = m.group(1)
    if inner[:1] in ("@", "!", "#"):
        return ""  # a mention, a broadcast or a channel link: nothing of it is kept
    label = inner.split("|", 1)[1] if "|" in inner else ""
    return label  # a link keeps its label, never its address


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is a number written in 0 to 9 (``str.isdigit`` takes "³" and other scripts' digits too,
    which ``int`` then refuses)."""
    return text.isascii() and text.isdigit()


def as_data(text: str | None) -> str:
    """``text`` with mentions, broadcasts, channel links, link markup, addresses, member tokens and the prompts'
    data fence (``<<<``, ``>>>``) removed (a link keeps its label), invisible control characters dropped, and
    spaces folded. Markup nested deeper than ``MOST_PASSES`` layers keeps none of its angle brackets."""
    if not text:
        return ""
    out, settled = _settle(visible(text))
    if not settled:
        # deeper than any real message nests: a crafted one (``<!here|<a|<a|...x>x>>``), whose brackets all go,
        # so that no layer left over can close into markup; what remains is cleaned as usual
        out, _ = _settle(_BRACKET.sub("", out))
    return out


def without_fence(text: str) -> str:
    """``text`` with invisible control characters and the prompts' data fence (``<<<``, ``>>>`` and lookalikes)
    dropped, and nothing else: what the model wrote from others' words, fed to a later prompt, keeps its member
    tokens and lines but cannot close that prompt's fence."""
    return _FENCE.sub("", visible(text))


def _settle(text: str) -> tuple[str, bool]:
    """``text`` cleaned a layer at a time (``<<!here>>`` needs two), and whether it stopped changing within
    ``MOST_PASSES`` layers. Bounded: each layer reads the whole text again."""
    out = text
    for _ in range(MOST_PASSES):
        before = out
        out = _ANGLE.sub(_angle, out)
        out = _MEMBER_TOKEN.sub("", out)
        out = _URL.sub("", out)
        out = BARE_DOMAIN.sub("", out)
        out = _BROADCAST.sub("", out)
        out = _FENCE.sub("", out)
        out = " ".join(out.replace("{@", "{ @").split())
        if out == before:
            return out, True
    return out, False


def printable(text: str) -> str:
    """``text`` for a terminal: each character a terminal would act on rather than show (an escape sequence's
    start, a bell, a carriage return) written as its Python escape, so that a name from a file cannot rewrite
    what the command printed."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def printable_json(value: object, *, indent: int | None = None) -> str:
    """``value`` as JSON for a terminal: letters of any script as they are, but each character ``printable``
    would escape (a C1 control such as U+009B, which starts an escape sequence, a right-to-left override, a line
    separator) written as JSON's ``\\uXXXX``, so that the output is still the same JSON and cannot rewrite the
    screen. Only inside strings can such a character stand, so escaping it there keeps the JSON valid."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return "".join(ch if ch.isprintable() or ch == "\n" else _json_escape(ch) for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
