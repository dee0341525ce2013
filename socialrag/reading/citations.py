"""Reference files of the reading list, built from the stored metadata: BibTeX (clean keys such as
``vaswani2017attention``), RIS and CSL-JSON. Pure. A title or a name is data written by others: whatever it
holds (braces, backslashes, newlines, markup), it stays inside its field."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

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
    """A field's text: markup and control characters out, on one line."""
    return as_data(text or "")[:limit]


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
    for ref in refs:
        family = _ascii_word(split_name(ref.authors[0])[0]) if ref.authors else ""
        words = [_ascii_word(w) for w in clean(ref.title).split()]
        word = next((w for w in words if w and w not in _STOP), "")
        key = f"{family}{ref.year or ''}{word}" or f"paper{ref.paper_id}"
        if not key[0].isalpha():
            key = "p" + key
        base, n = key, 0
        while key in used:
            key = base + _suffix(n)
            n += 1
        used.add(key)
        keys.append(key)
    return keys


def _suffix(n: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return letters[n] if n < 26 else f"{letters[n // 26 - 1]}{letters[n % 26]}"


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def tex(text: str) -> str:
    """A value safe between BibTeX's braces: LaTeX's special characters escaped, and a brace written as a
    command (BibTeX counts every brace, escaped or not, so a stray one would close the field)."""
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in clean(text))


def to_bibtex(refs: Sequence[Reference]) -> str:
    entries = []
    for key, ref in zip(citation_keys(refs), refs, strict=True):
        fields: list[tuple[str, str]] = [("title", "{" + tex(ref.title) + "}")]
        if ref.authors:
            fields.append(("author", " and ".join(tex(_bib_name(a)) for a in ref.authors)))
        if ref.year:
            fields.append(("year", str(ref.year)))
        kind = "misc"
        if ref.venue and not (ref.arxiv and "arxiv" in ref.venue.lower()):
            kind = "inproceedings"
            fields.append(("booktitle", tex(ref.venue)))
        if ref.doi:
            fields.append(("doi", ref.doi))
        if ref.arxiv:
            fields += [("eprint", ref.arxiv), ("archiveprefix", "arXiv")]
        if ref.link:
            fields.append(("url", ref.link))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@{kind}{{{key},\n{body}\n}}\n")
    return "\n".join(entries)


def _bib_name(name: str) -> str:
    family, given = split_name(name)
    return f"{family}, {given}" if given else family


def to_ris(refs: Sequence[Reference]) -> str:
    lines: list[str] = []
    for ref in refs:
        kind = "CONF" if ref.venue and not (ref.arxiv and "arxiv" in ref.venue.lower()) else "GEN"
        lines.append(f"TY  - {kind}")
        lines.append(f"TI  - {clean(ref.title)}")
        lines += [f"AU  - {_bib_name(a)}" for a in ref.authors]
        if ref.year:
            lines.append(f"PY  - {ref.year}")
        if ref.venue:
            lines.append(f"T2  - {clean(ref.venue, 300)}")
        if ref.doi:
            lines.append(f"DO  - {ref.doi}")
        if ref.link:
            lines.append(f"UR  - {ref.link}")
        lines.append("ER  - ")
        lines.append("")
    return "\n".join(lines)


def to_csl_json(refs: Sequence[Reference]) -> str:
    items = []
    for key, ref in zip(citation_keys(refs), refs, strict=True):
        item: dict[str, object] = {
            "id": key,
            "type": "paper-conference" if ref.venue else "article",
            "title": clean(ref.title),
            "author": [dict(zip(("family", "given"), split_name(a), strict=True)) for a in ref.authors],
        }
        if ref.year:
            item["issued"] = {"date-parts": [[ref.year]]}
        if ref.venue:
            item["container-title"] = clean(ref.venue, 300)
        if ref.doi:
            item["DOI"] = ref.doi
        if ref.link:
            item["URL"] = ref.link
        items.append(item)
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def render(refs: Sequence[Reference], fmt: str) -> str:
    """The list in one of ``FORMATS``."""
    if fmt == "bibtex":
        return to_bibtex(refs)
    if fmt == "ris":
        return to_ris(refs)
    if fmt == "csl-json":
        return to_csl_json(refs)
    raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
