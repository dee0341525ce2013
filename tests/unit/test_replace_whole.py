"""A file replaced whole (``socialrag.files.replace_whole``) whose name has characters a glob pattern reads as its
own (``*``, ``[``): before, the look for half-written files of earlier writes beside it made the name a pattern,
and ``**`` inside one failed the export outright (ValueError), while ``[x]`` missed them; now the folder's names
are compared as they are."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from socialrag.files import replace_whole


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@pytest.mark.parametrize("name", ["lab**.bib", "lab[x].bib", "lab?.bib"])
def test_a_name_with_glob_characters_is_written_and_its_dead_partials_go(tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    target.write_text("last week")
    dead = tmp_path / f".{name}.partial-{_dead_pid()}"
    dead.write_text("half")
    other = tmp_path / f".labx.bib.partial-{_dead_pid()}"  # another file's, which the pattern would have matched
    other.write_text("not ours")
    replace_whole(target, "this week")
    assert target.read_text() == "this week"
    assert not dead.exists()
    assert other.read_text() == "not ours"
