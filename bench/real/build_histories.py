"""Maintainer's tool: the real, dated histories of paper choices that ``bench/real/replay_real.py`` replays,
read from local clones of public repositories: the University of Arizona CLU lab's reading group
(``clulab/nlp-reading-group``, MIT licence) and, with ``--summarization CLONE``, a public list of summarization
papers kept by a small group (``xcfcode/Summarization-Papers``).

``python -m bench.real.build_histories [CLONE] [--summarization CLONE] [--catalog FILE]`` writes
``tests/data/real_histories/*.jsonl``: one line per choice, ``{"acl_id", "at", "member"}``.

- ``summarization-list``: each catalog paper the list's ``README.md`` names, dated by the commit that added its
  line and credited to that commit's author (pseudonymised), from 2016 to 2021 as the catalog's years. Only
  identifiers and dates are kept, no text.

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


def build(clone: Path, catalog: Path) -> dict[str, list[dict[str, str]]]:
    with gzip.open(catalog, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    ids = {r["acl_id"] for r in rows}
    titles = {normal(r["title"]): r["acl_id"] for r in rows}
    files = subprocess.run(
        ["git", "-C", str(clone), "ls-tree", "-r", "--name-only", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.split()
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
    with gzip.open(catalog, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    ids = {r["acl_id"] for r in rows}
    titles = {normal(r["title"]): r["acl_id"] for r in rows}
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clone", type=Path, nargs="?", default=None, help="a clone of clulab/nlp-reading-group")
    parser.add_argument("--summarization", type=Path, default=None, help="a clone of the summarization paper list")
    parser.add_argument("--catalog", type=Path, default=ROOT / "tests" / "data" / "acl-anthology-2016-2021.jsonl.gz")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    built = build(args.clone, args.catalog) if args.clone is not None else {}
    if args.summarization is not None:
        built["summarization-list"] = build_list(args.summarization, args.catalog)
    for kind, rows in built.items():
        (OUT / f"{kind}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        weeks = len({datetime.fromisoformat(r["at"]).strftime("%G-%V") for r in rows})
        print(f"{kind}: {len(rows)} choices in {weeks} weeks by {len({r['member'] for r in rows})} members")


if __name__ == "__main__":
    main()
