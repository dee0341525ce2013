"""Reference files of the reading list, built from the stored metadata: BibTeX (clean keys such as
``vaswani2017attention``, written by pybtex), RIS (written by rispy) and CSL-JSON. Pure. A title or a name is data
written by others: whatever it holds (braces, backslashes, newlines, markup), it is kept exactly, escaped for
the format, and stays inside its field."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import rispy
from pybtex.database import BibliographyData, Entry, Person
from pybtex.database.output.bibtex import Writer

from socialrag.text import as_data

FORMATS = ("bibtex", "ris", "csl-json")
EXTENSIONS = {"bibtex": "bib", "ris": "ris", "csl-json": "json"}
_DOI = re.compile(r"10\.\d{4,9}/[^\s{}\\\"<>]{1,200}")
_ARXIV = re.compile(r"(\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7})(v\d+)?")
_LINK = re.compile(r"https?://[^\s{}\\\"<>|]{1,500}")
_STOP = frozenset({"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "towards", "toward", "via"})


@dataclass(frozen=True)
class Reference:
    """One paper as a reference manager takes it (unknown fields are None, never guessed)."""

    paper_id: int
    title: str
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    url: str | None = None
    ids: dict[str, str] = field(default_factory=dict)  # doi, arxiv, acl, s2 ...

    @property
    def doi(self) -> str | None:
        doi = self.ids.get("doi") or ""
        return doi if _DOI.fullmatch(doi) else None

    @property
    def arxiv(self) -> str | None:
        arxiv = self.ids.get("arxiv") or ""
        return arxiv if _ARXIV.fullmatch(arxiv) else None

    @property
    def link(self) -> str | None:
        """The paper's address, when it is a plain http(s) URL with nothing that could end a field."""
        return self.url if self.url and _LINK.fullmatch(self.url) else None


def clean(text: str | None, limit: int = 1000) -> str:
    """A field's text for Slack or a citation key: markup and control characters out, on one line. Only the
    start of a long text is read (a name of 1 MB from a source costs no more than one of 200 characters)."""
    return as_data((text or "")[: limit * 2])[:limit]


def exact(text: str | None, limit: int = 1000) -> str:
    """A field's text for a reference file: exactly as written, on one line (control characters, line breaks
    included, become spaces). Nothing else is taken out: each format escapes what it must."""
    chars = (" " if unicodedata.category(ch).startswith("C") else ch for ch in (text or "")[: limit * 2])
    return " ".join("".join(chars).split())[:limit]


def split_name(name: str) -> tuple[str, str]:
    """(family, given) of an author's name as the sources give it ("Ashish Vaswani", "Vaswani, Ashish")."""
    name = clean(name, 200)
    if "," in name:
        family, _, given = name.partition(",")
        return family.strip(), given.strip()
    parts = name.split()
    return (parts[-1], " ".join(parts[:-1])) if parts else ("", "")


def _ascii_word(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", folded.lower())


def citation_keys(refs: Sequence[Reference]) -> list[str]:
    """A key per reference: first author's family name, year, first word of the title that says something
    (``vaswani2017attention``); ``a``, ``b``... after a key already used; ``paper`` + id when nothing is known."""
    keys: list[str] = []
    used: set[str] = set()
    tried: dict[str, int] = {}  # suffixes already taken after a key: thousands of one key stay linear
    for ref in refs:
        family = _ascii_word(split_name(ref.authors[0])[0]) if ref.authors else ""
        words = [_ascii_word(w) for w in clean(ref.title).split()]
        word = next((w for w in words if w and w not in _STOP), "")
        key = f"{family}{ref.year or ''}{word}" or f"paper{ref.paper_id}"
        if not key[0].isalpha():
            key = "p" + key
        base, n = key, tried.get(key, 0)
        while key in used:
            key = base + _suffix(n)
            n += 1
        tried[base] = n
        used.add(key)
        keys.append(key)
    return keys


def _suffix(n: int) -> str:
    """``a`` ... ``z``, ``aa`` ... ``zz``, ``aaa`` ...: one for any n (a long list may hold a key 703 times)."""
    letters, out = "abcdefghijklmnopqrstuvwxyz", ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = letters[r] + out
    return out


# what pybtex's LaTeX encoding (latexcodec) leaves as it is and BibTeX would read as markup; it escapes % & # _ ~
_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "$": r"\$",
    "^": r"\textasciicircum{}",
}


def tex(text: str) -> str:
    """A value safe between BibTeX's braces once pybtex has encoded it: a brace written as a command (BibTeX
    counts every brace, escaped or not, so a stray one would close the field), and the backslash, dollar and caret
    escaped; pybtex escapes the rest of LaTeX's special characters."""
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in exact(text))


_ORGANISATION = re.compile(
    r"\band\b|\b(consortium|collaboration|team|group|lab|laboratory|institute|university|project|committee|"
    r"association|society|foundation|corporation|inc|ltd|initiative|network|working)\b",
    re.IGNORECASE,
)


MOST_AUTHORS = 100  # names written of one paper (a large model's report has over a thousand); BibTeX adds "others"


def named(authors: Sequence[str]) -> list[str]:
    """The first ``MOST_AUTHORS`` authors that have a name left to write (one of only markup, punctuation or
    control characters has none)."""
    return [a for a in authors if any(ch.isalnum() for ch in clean(a, 200))][:MOST_AUTHORS]


def _person(name: str) -> Person:
    """An author as BibTeX reads names: "Family, Given" for a person, the given names braced when they hold a
    comma (BibTeX reads at most three comma-separated parts, and pybtex refuses more); an organisation (a name
    with "and" in it, or a word such as Consortium) braced whole, so that BibTeX splits nothing of it into names."""
    if _ORGANISATION.search(exact(name, 200)):
        return Person("{" + tex(exact(name, 200)) + "}")
    family, given = split_name(name)
    given = "{" + tex(given) + "}" if "," in given else tex(given)
    return Person(f"{tex(family)}, {given}" if given else tex(family))


_VERBATIM = frozenset({"url", "doi", "eprint"})  # read as written by biblatex and reference managers


class _BibWriter(Writer):
    """pybtex's writer, but an address or an identifier is written as it is: ``\\%`` or ``\\_`` in one would be part of
    it to a reader. Their patterns (``Reference.link``, ``doi``, ``arxiv``) let no brace, quote or backslash in."""

    def _write_field(self, stream: Any, type: str, value: str) -> None:
        if type in _VERBATIM:
            stream.write(f",\n    {type} = {self.quote(value)}")
        else:
            super()._write_field(stream, type, value)


def to_bibtex(refs: Sequence[Reference]) -> str:
    """The list as BibTeX, written by pybtex; each title exactly as given, escaped for LaTeX, in braces that keep
    its capitals."""
    data = BibliographyData()
    for key, ref in zip(citation_keys(refs), refs, strict=True):
        fields: list[tuple[str, str]] = [("title", "{" + tex(ref.title) + "}")]
        if ref.year:
            fields.append(("year", str(ref.year)))
        kind = "misc"
        if ref.venue and not (ref.arxiv and "arxiv" in ref.venue.lower()):
            kind = "inproceedings"
            fields.append(("booktitle", tex(exact(ref.venue, 300))))
        if ref.doi:
            fields.append(("doi", ref.doi))
        if ref.arxiv:
            fields += [("eprint", ref.arxiv), ("archiveprefix", "arXiv")]
        if ref.link:
            fields.append(("url", ref.link))
        authors = [_person(a) for a in named(ref.authors)]
        if len(authors) == MOST_AUTHORS and len(ref.authors) > MOST_AUTHORS:
            authors.append(Person("others"))  # BibTeX's own "and others": styles print "et al."
        persons = {"author": authors} if authors else {}
        data.add_entry(key, Entry(kind, fields=fields, persons=persons))
    return str(_BibWriter(encoding="UTF-8").to_string(data))


def _bib_name(name: str) -> str:
    family, given = split_name(name)
    return f"{family}, {given}" if given else family


class _RisWriter(rispy.RisWriter):
    def set_header(self, count: int) -> str:
        return ""  # no numbered line before a record: reference managers read a record from TY to ER


def to_ris(refs: Sequence[Reference]) -> str:
    """The list as RIS, written by rispy; each title exactly as given, on one line."""
    records: list[dict[str, object]] = []
    for ref in refs:
        record: dict[str, object] = {
            "type_of_reference": "CONF" if ref.venue and not (ref.arxiv and "arxiv" in ref.venue.lower()) else "GEN",
            "title": exact(ref.title),
        }
        if named(ref.authors):
            record["authors"] = [
                exact(a if _ORGANISATION.search(exact(a, 200)) else _bib_name(a), 200) for a in named(ref.authors)
            ]
        if ref.year:
            record["year"] = str(ref.year)
        if ref.venue:
            record["secondary_title"] = exact(ref.venue, 300)
        if ref.doi:
            record["doi"] = ref.doi
        if ref.link:
            record["urls"] = [ref.link]
        records.append(record)
    return str(rispy.dumps(records, implementation=_RisWriter))


def to_csl_json(refs: Sequence[Reference]) -> str:
    items = []
    for key, ref in zip(citation_keys(refs), refs, strict=True):
        item: dict[str, object] = {
            "id": key,
            "type": "paper-conference" if ref.venue else "article",
            "title": exact(ref.title),
            "author": [dict(zip(("family", "given"), split_name(a), strict=True)) for a in named(ref.authors)],
        }
        if ref.year:
            item["issued"] = {"date-parts": [[ref.year]]}
        if ref.venue:
            item["container-title"] = exact(ref.venue, 300)
        if ref.doi:
            item["DOI"] = ref.doi
        if ref.link:
            item["URL"] = ref.link
        items.append(item)
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def written_size(ref: Reference) -> int:
    """About how many characters of a paper a file writes, before escaping: its capped title, venue, names and
    link, and a line or two of keys and identifiers."""
    names = sum(len(clean(a, 200)) for a in named(ref.authors))
    return len(clean(ref.title)) + len(clean(ref.venue, 300)) + names + len(ref.link or "") + 200


def newest_within(refs: Sequence[Reference], most_chars: int) -> list[Reference]:
    """The newest of ``refs`` (given oldest first) whose ``written_size`` adds up to at most ``most_chars``, oldest
    first: a list of papers whose sources sent names and titles as long as the caps allow makes a file of bounded
    size, holding fewer papers."""
    kept, used = 0, 0
    for ref in reversed(refs):
        used += written_size(ref)
        if used > most_chars:
            break
        kept += 1
    return list(refs[len(refs) - kept :])


def render(refs: Sequence[Reference], fmt: str) -> str:
    """The list in one of ``FORMATS``."""
    if fmt == "bibtex":
        return to_bibtex(refs)
    if fmt == "ris":
        return to_ris(refs)
    if fmt == "csl-json":
        return to_csl_json(refs)
    raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
