"""Maintainer's tool: the real, dated histories of paper choices that ``bench/real/replay_real.py`` replays,
read from local clones of public repositories: the University of Arizona CLU lab's reading group
(``clulab/nlp-reading-group``, MIT licence); with ``--list NAME=CLONE``, a paper list kept in one ``README.md``
(``summarization-list``: ``xcfcode/Summarization-Papers``; ``bert-related-list``:
``tomohideshibata/BERT-related-papers``); with ``--seminar CLONE``, a lab seminar's agendas (``AntNLP/seminar``).

``python -m bench.real.build_histories [CLONE] [--list NAME=CLONE ...] [--seminar CLONE] [--catalog FILE]`` writes
``tests/data/real_histories/*.jsonl``: one line per choice, ``{"acl_id", "at", "member"}``.

- ``antnlp-seminar``: each catalog paper a talk presented (``build_seminar``), dated by its meeting and credited to
  its speaker.
- ``summarization-list``, ``bert-related-list``: each catalog paper the list's ``README.md`` names, dated by the
  commit that added its line and credited to that commit's author (pseudonymised), from 2016 to 2021 as the
  catalog's years. Only identifiers and dates are kept, no text.

- ``clulab-proposals``: the papers members proposed for the reading group (``candidate_papers/*.md``), each
  dated by the commit that added its line (``git blame``) and credited to the heading it stands under
  ("## Steve's suggestions"); members are pseudonymised (``M1``, ``M2``, ... in order of first proposal).
- ``clulab-conference-notes``: the talks members wrote up while at a conference
  (``conference_summaries/*.md``), dated and credited by the commit that added each line.

A paper counts when its link is an ACL Anthology one (``aclweb.org/anthology/ID``, ``aclanthology.org/ID``) or
its link text is the title of a paper in the catalog (arXiv versions of ACL papers); the rest are outside the
catalog and left out. Only choices from 2016 to 2021 are kept (the catalog's years).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "real_histories"
ACL_LINK = re.compile(
    r"(?:aclweb\.org/anthology|aclanthology\.org)/(?:papers/[A-Z]/[A-Z]\d\d/)?"
    r"([A-Z]\d{2}-\d{4}|\d{4}\.[a-z0-9]+-[a-z0-9]+\.\d+)"
)
LINK_TEXT = re.compile(r"\[\**([^\]]{12,300}?)\**\]\(")
HEADING = re.compile(r"^#+\s*(.+?)(?:'s|’s)?\s+suggestions?", re.IGNORECASE)


def normal(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", title.lower()).strip()


def blame(clone: Path, path: str) -> list[tuple[float, str, str]]:
    """(author time, author, text) of each line of ``path`` at HEAD."""
    out = subprocess.run(
        ["git", "-C", str(clone), "blame", "--line-porcelain", "HEAD", "--", path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines, at, who = [], 0.0, ""
    for row in out.splitlines():
        if row.startswith("author-time "):
            at = float(row.split()[1])
        elif row.startswith("author "):
            who = row[7:]
        elif row.startswith("\t"):
            lines.append((at, who, row[1:]))
    return lines


def papers_of(text: str, ids: set[str], titles: dict[str, str]) -> list[str]:
    found = [m for m in ACL_LINK.findall(text) if m in ids]
    if not found:
        found = [titles[normal(t)] for t in LINK_TEXT.findall(text) if normal(t) in titles]
    return list(dict.fromkeys(found))


def catalog_index(catalog: Path) -> tuple[set[str], dict[str, str]]:
    """The catalog's ids, and its normalised titles with their ids."""
    with gzip.open(catalog, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    return {r["acl_id"] for r in rows}, {normal(r["title"]): r["acl_id"] for r in rows}


def tracked_files(clone: Path) -> list[str]:
    """The paths of the clone's files at HEAD."""
    return subprocess.run(
        ["git", "-C", str(clone), "ls-tree", "-r", "--name-only", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.splitlines()


def build(clone: Path, catalog: Path) -> dict[str, list[dict[str, str]]]:
    ids, titles = catalog_index(catalog)
    files = tracked_files(clone)
    out: dict[str, list[dict[str, str]]] = {"clulab-proposals": [], "clulab-conference-notes": []}
    pseudonyms: dict[str, str] = {}
    for kind, folder in (
        ("clulab-proposals", "candidate_papers/"),
        ("clulab-conference-notes", "conference_summaries/"),
    ):
        seen: set[str] = set()
        for path in sorted(f for f in files if f.startswith(folder) and f.endswith(".md")):
            member = ""
            for at, who, text in blame(clone, path):
                heading = HEADING.match(text)
                if heading:
                    member = heading.group(1).strip()
                when = datetime.fromtimestamp(at, UTC)
                if not 2016 <= when.year <= 2021:
                    continue
                for acl_id in papers_of(text, ids, titles):
                    if acl_id in seen:
                        continue
                    seen.add(acl_id)
                    name = (member if kind == "clulab-proposals" and member else who) or "someone"
                    alias = pseudonyms.setdefault(name, f"M{len(pseudonyms) + 1}")
                    out[kind].append({"acl_id": acl_id, "at": when.isoformat(), "member": alias})
        out[kind].sort(key=lambda r: (r["at"], r["acl_id"]))
    return out


def build_list(clone: Path, catalog: Path, path: str = "README.md") -> list[dict[str, str]]:
    """A paper list kept in one file: each catalog paper it names, dated and credited by the commit that added it."""
    ids, titles = catalog_index(catalog)
    seen: set[str] = set()
    pseudonyms: dict[str, str] = {}
    out = []
    for at, who, text in blame(clone, path):
        when = datetime.fromtimestamp(at, UTC)
        for acl_id in papers_of(text, ids, titles):
            if acl_id not in seen and 2016 <= when.year <= 2021:
                seen.add(acl_id)
                alias = pseudonyms.setdefault(who or "someone", f"M{len(pseudonyms) + 1}")
                out.append({"acl_id": acl_id, "at": when.isoformat(), "member": alias})
    return sorted(out, key=lambda r: (r["at"], r["acl_id"]))


SEMESTER = re.compile(r"^(\d{4})(Spring|Fall)[^/]*/readme(?:\.md)?$", re.IGNORECASE)
# "[ACL18]Title", "[EMNLP 2017] Title": a venue tag and the title up to the next tag, cell or line break
TAGGED = re.compile(r"\[\s*[A-Za-z][A-Za-z\- ]*?\s*'?\d{2,4}\s*\]\s*([^\[\]|<]+)")
MEETING = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})(?![\d.])")
WEEK = re.compile(r"^\d{1,2}\s*(?:\(\s*\d{1,2}\.\d{1,2}\s*\))?$|^\d{1,2}\.\d{1,2}$")


def meeting_day(cells: list[str], year: int, season: str) -> datetime | None:
    """The day the row's meeting was held, when the agenda gives it ("3 (3.14)", or a "3.14" cell): a fall
    semester's January and February fall in the next year."""
    for cell in cells[:2]:
        found = MEETING.search(cell)
        if found:
            month, day = int(found.group(1)), int(found.group(2))
            with contextlib.suppress(ValueError):
                return datetime(year + (season.lower() == "fall" and month <= 2), month, day, 12, tzinfo=UTC)
    return None


def build_seminar(clone: Path, catalog: Path) -> list[dict[str, str]]:
    """A lab seminar's agendas (one ``README.md`` a semester, a table row a talk): each catalog paper a talk
    presented, dated by its meeting when the row gives the day (else by the commit that added the row) and
    credited to the row's speaker (pseudonymised). Struck-through (cancelled) rows are left out."""
    ids, titles = catalog_index(catalog)
    files = tracked_files(clone)
    seen: set[str] = set()
    pseudonyms: dict[str, str] = {}
    out = []
    for path in sorted(f for f in files if SEMESTER.match(f)):
        year, season = SEMESTER.match(path).group(1, 2)  # type: ignore[union-attr]
        for at, who, text in blame(clone, path):
            cells = [c.strip() for c in text.strip().strip("|").split("|")]
            if len(cells) < 3 or "~~" in text or not WEEK.match(cells[0]):
                continue
            speaker = next((c for c in cells[1:3] if c and not MEETING.fullmatch(c)), "")
            speaker = re.split(r"<br\s*/?>", speaker)[0].strip() or who
            when = meeting_day(cells, int(year), season) or datetime.fromtimestamp(at, UTC)
            found = [m for m in ACL_LINK.findall(text) if m in ids]
            found += [titles[t] for t in (normal(m.replace("...", "")) for m in TAGGED.findall(text)) if t in titles]
            for acl_id in dict.fromkeys(found):
                if acl_id not in seen and 2016 <= when.year <= 2021:
                    seen.add(acl_id)
                    alias = pseudonyms.setdefault(speaker, f"M{len(pseudonyms) + 1}")
                    out.append({"acl_id": acl_id, "at": when.isoformat(), "member": alias})
    return sorted(out, key=lambda r: (r["at"], r["acl_id"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clone", type=Path, nargs="?", default=None, help="a clone of clulab/nlp-reading-group")
    parser.add_argument(
        "--list",
        action="append",
        default=[],
        metavar="NAME=CLONE",
        help="a paper list kept in one README.md: summarization-list, bert-related-list",
    )
    parser.add_argument("--seminar", type=Path, default=None, help="a clone of the AntNLP seminar's agendas")
    parser.add_argument("--catalog", type=Path, default=ROOT / "tests" / "data" / "acl-anthology-2016-2021.jsonl.gz")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    built = build(args.clone, args.catalog) if args.clone is not None else {}
    for named in args.list:
        name, _, clone = named.partition("=")
        built[name] = build_list(Path(clone), args.catalog)
    if args.seminar is not None:
        built["antnlp-seminar"] = build_seminar(args.seminar, args.catalog)
    for kind, rows in built.items():
        (OUT / f"{kind}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        weeks = len({datetime.fromisoformat(r["at"]).strftime("%G-%V") for r in rows})
        print(f"{kind}: {len(rows)} choices in {weeks} weeks by {len({r['member'] for r in rows})} members")


if __name__ == "__main__":
    main()
