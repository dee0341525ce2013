"""Every page of ``docs/`` reads in short pieces: a heading at least every 300 words of prose (every word between
spaces, inline code included), and no paragraph, bullet or table cell longer than 120 words. Code blocks are left
out of the count; a table's cells are counted one by one, as a reader reads them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
MOST_BETWEEN_HEADINGS = 300
MOST_IN_A_BLOCK = 120
_WORD = re.compile(r"[A-Za-z0-9][\w'’.-]*")


@dataclass(frozen=True)
class Shape:
    words: int  # prose, lists and tables (code left out)
    headings: int
    longest_block: int  # words of the longest paragraph, bullet or table cell
    longest_stretch: int  # words of prose between two headings, at most


def words(text: str) -> int:
    return len(_WORD.findall(re.sub(r"\(([^)]*\.md[^)]*)\)|`[^`]*`", " x ", text)))


def blocks(lines: list[str]) -> list[str]:
    """The paragraphs, bullets and table cells of a page's lines (code blocks already out)."""
    found: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            found.append(" ".join(current))
            current.clear()

    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            close()
        elif stripped.startswith("|"):
            close()
            found += [cell for cell in stripped.strip("|").split("|") if not set(cell.strip()) <= set("-: ")]
        elif re.match(r"([-*]|\d+\.) ", stripped):
            close()
            current.append(stripped)
        else:
            current.append(stripped)
    close()
    return found


def shape(text: str) -> Shape:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    stretches, current, headings = [], 0, 0
    for line in lines:
        if line.startswith("#"):
            headings += 1
            stretches.append(current)
            current = 0
        elif not line.strip().startswith("|"):
            current += len(line.split())  # every word a reader reads, code spans and link targets included
    stretches.append(current)
    sizes = [words(b) for b in blocks(lines)]
    return Shape(sum(words(line) for line in lines), headings, max(sizes, default=0), max(stretches))


PAGES = sorted(DOCS.glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_page_reads_in_short_pieces(page: Path) -> None:
    found = shape(page.read_text(encoding="utf-8"))
    assert found.longest_stretch <= MOST_BETWEEN_HEADINGS, f"{page.name}: {found}"
    assert found.longest_block <= MOST_IN_A_BLOCK, f"{page.name}: {found}"


def test_the_rules_measure_what_they_say() -> None:
    long = " ".join(["word"] * 130)
    assert shape(f"# A\n\n{long}\n").longest_block == 130
    assert shape(f"# A\n\n- {long}\n").longest_block == 130
    assert shape(f"# A\n\n```\n{long}\n```\n").longest_block == 0, "code is not prose"
    assert shape("# A\n\n" + "\n\n".join([" ".join(["w"] * 100)] * 4) + "\n\n## B\n\nshort\n").longest_stretch == 400
    assert shape(f"| a | b |\n|---|---|\n| {long} | x |\n").longest_block == 130


def test_every_picture_is_in_the_site_with_alt_text_and_the_tour_shows_them_all() -> None:
    from bot.demo.pictures import PICTURES

    shown: set[str] = set()
    for page in PAGES:
        for alt, path in re.findall(r"!\[([^\]]*)\]\(([^)]+)\)", page.read_text(encoding="utf-8")):
            assert len(alt.split()) >= 5, f"{page.name}: {path} needs alt text that says what it shows"
            assert (DOCS / path).is_file(), f"{page.name}: {path} is missing (python -m bot.demo.pictures)"
            shown.add(Path(path).stem)
    assert set(PICTURES) <= shown, "the tour shows every picture the script makes"
