"""How each package of ``socialrag`` names its entry points: a table of public name -> module (and attribute),
resolved on first use, so that importing one pure module (``socialrag.knowledge.links``) does not load the
database driver or the embedding model with its siblings."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def entry_points(package: str, table: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package`` that finds each public name in the module ``table`` gives
    (``"module"`` or ``"module:attribute"`` when the public name differs)."""

    def find(name: str) -> object:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        return getattr(importlib.import_module(f"{package}.{module}"), attribute or name)

    return find
