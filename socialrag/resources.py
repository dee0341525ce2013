"""Where the shipped ``sql/`` and ``prompts/`` folders are, in a checkout and in an installed wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    """The folder ``name`` (``sql`` or ``prompts``): inside the wheel, or at the top of a checkout."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"PaperPing's {name}/ folder is missing from this installation")
