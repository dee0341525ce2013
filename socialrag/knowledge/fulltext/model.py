"""What a paper's full text is read into, and the bounds every parser keeps."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

MAX_BYTES = 20_000_000  # a file larger than this is not read
MAX_PAGES = 60  # pages of a PDF read at most (a 30-page paper and its appendix)
MAX_CHARS = 400_000  # characters of text kept from one paper, the references apart
MAX_SECTIONS = 200
MAX_REFERENCES = 500
MAX_ELEMENTS = 500_000  # elements of an XML or HTML file parsed at most (a long paper has tens of thousands)
MAX_NESTING = 200  # elements nested at most this deep (a paper's, formulas included, are a few dozen deep)


class FullTextError(ValueError):
    """A file that cannot be read as a paper's full text: the sentence says why (too large, no text layer, not
    well-formed, an entity declaration)."""


class TimeUp(FullTextError):
    """The file could not be read now, and not by its fault: the time the caller gave ran out while it was read,
    or no process could be started to read it. It may be read another time."""


class Elements:
    """The elements a parser has met, counted as it meets them: past ``MAX_ELEMENTS`` in all or ``MAX_NESTING``
    deep, the file is refused there (``FullTextError``), before the rest of it is parsed or kept."""

    def __init__(self, most: int = MAX_ELEMENTS, deepest: int = MAX_NESTING) -> None:
        self.most, self.deepest = most, deepest
        self.count = self.depth = 0

    def start(self, attributes: int = 0) -> None:
        """One element more, with ``attributes`` attributes (each counted as an element)."""
        self.count += 1 + attributes
        self.depth += 1
        if self.count > self.most:
            raise FullTextError(f"the file has more than {self.most:,} elements and attributes, far more than a paper")
        if self.depth > self.deepest:
            raise FullTextError(f"the file nests elements more than {self.deepest} deep, far deeper than a paper")

    def end(self) -> None:
        self.depth -= 1


@dataclass(frozen=True)
class Section:
    """One section of a paper: its heading as the paper writes it ("4.2 Datasets"), with its parents' before it
    for a subsection ("Materials and Methods › Chemicals"), and its paragraphs."""

    heading: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class FullText:
    title: str | None
    sections: tuple[Section, ...]
    references: tuple[str, ...] = ()
    licence: str | None = None  # the licence the file states (a URL or its words), None when it states none
    kind: str = ""  # "jats", "html" or "pdf"
    notes: tuple[str, ...] = field(default_factory=tuple)  # what was left out, in words ("pages after 60")

    @property
    def chars(self) -> int:
        return sum(len(p) for s in self.sections for p in s.paragraphs)


_UNSTORABLE = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]"
)  # Postgres takes neither NUL nor a lone surrogate
HEADING_CHARS = 300  # a heading, and a subsection's whole path, at most
MAX_PASSAGES = 3000  # passages kept of one paper at most; the rest is left out and said


def clean(text: str, most: int | None = None) -> str:
    """Whitespace folded to single spaces; a word hyphenated across a line joined again; a typeset ligature ("ﬁ")
    as its letters; control characters and lone surrogates dropped. With ``most``, the raw text is cut first
    (twice over, for what folding removes), so that a huge paragraph costs no more than what is kept."""
    if most is not None:
        text = text[: most * 2 + 1000]
    text = _UNSTORABLE.sub("", text)
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", unicodedata.normalize("NFKC", text))
    return " ".join(text.split())[:most] if most is not None else " ".join(text.split())


def heading_of(text: str) -> str:
    return clean(text, HEADING_CHARS)


class Budget:
    """The characters a parser may still keep (``MAX_CHARS``); paragraphs past it are left out and said."""

    def __init__(self, most: int = MAX_CHARS) -> None:
        self.left = most
        self.cut = False

    def take(self, raw: str) -> str | None:
        """``raw`` cleaned and kept while characters are left (None once they are spent)."""
        text = clean(raw, max(self.left, 0) + 1)
        if not text:
            return None
        if self.left <= 0:
            self.cut = True
            return None
        kept = text[: self.left]
        self.left -= len(kept)
        self.cut = self.cut or len(kept) < len(text)
        return kept


PASSAGE_CHARS = 1200  # a passage at most this long: a paragraph, or a long one cut at its sentences
SHORT_CHARS = 200  # a paragraph (or a long one's last piece) shorter than this runs on into the next one


@dataclass(frozen=True)
class Passage:
    section: str
    text: str


def passages(paper: FullText, most: int = MAX_PASSAGES) -> list[Passage]:
    """The paper's text as passages, in order, at most ``most``: each section's paragraphs, a long one cut at a
    sentence's end so that no passage is over ``PASSAGE_CHARS``, and one shorter than ``SHORT_CHARS`` run on into
    the next paragraph of its section, so that the number of passages follows the length of the text (a file of
    thousands of one-word lines gives a few passages, not thousands)."""
    out: list[Passage] = []
    for section in paper.sections:
        piece = ""
        for paragraph in section.paragraphs:
            if len(piece) >= SHORT_CHARS:
                out.append(Passage(section.heading, piece))
                piece = ""
            piece = _run_on(piece, paragraph, section.heading, out)
            if len(out) >= most:  # checked within a section too: one section may hold the whole file
                return out[:most]
        if piece:
            out.append(Passage(section.heading, piece))
        if len(out) >= most:
            return out[:most]
    return out


def _run_on(piece: str, paragraph: str, heading: str, out: list[Passage]) -> str:
    """``paragraph``'s sentences added after ``piece``: each passage filled up to ``PASSAGE_CHARS`` goes into
    ``out``; what is left (the start of the next passage) is returned."""
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])", paragraph):
        if piece and len(piece) + 1 + len(sentence) > PASSAGE_CHARS:
            out.append(Passage(heading, piece))
            piece = ""
        piece = f"{piece} {sentence}".strip()
        while len(piece) > PASSAGE_CHARS:  # one sentence longer than a passage: cut at a space
            cut = piece.rfind(" ", 0, PASSAGE_CHARS)
            cut = cut if cut > 0 else PASSAGE_CHARS
            out.append(Passage(heading, piece[:cut]))
            piece = piece[cut:].strip()
    return piece
