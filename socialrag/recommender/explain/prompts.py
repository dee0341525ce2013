"""Prompt files: ``prompts/<task>.v<N>.md`` with ``$placeholders``, loaded, filled, and identified by hash."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from socialrag.resources import resource_dir

_NAME = re.compile(r"^([a-z0-9_]+)\.v(\d+)\.md$")


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    text: str

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]

    def render(self, **values: object) -> str:
        """The prompt with every ``$placeholder`` filled; a missing value is an error, not a blank."""
        return Template(self.text).substitute({k: str(v) for k, v in values.items()})


def load_prompt(name: str, version: int | None = None, folder: Path | None = None) -> Prompt:
    """Prompt ``name`` at ``version`` (default: the newest file of that name)."""
    folder = folder or resource_dir("prompts")
    found = {}
    for path in folder.iterdir():
        m = _NAME.match(path.name)
        if m and m.group(1) == name:
            found[int(m.group(2))] = path
    if not found:
        raise FileNotFoundError(f"no prompt named {name} in {folder}")
    chosen = version if version is not None else max(found)
    return Prompt(name, chosen, found[chosen].read_text(encoding="utf-8"))
