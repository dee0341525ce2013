"""How each package of ``socialrag`` names its entry points: written once, as the imports of its ``__init__``'s
``if TYPE_CHECKING:`` block (which type checkers and readers follow), and resolved on first use at run time, so
that importing one pure module (``socialrag.knowledge.links``) does not load the database driver or the embedding
model with its siblings."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path


def typed_imports(init_file: str | Path, package: str) -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute) for each ``from package.module import attribute [as name]`` inside the
    ``if TYPE_CHECKING:`` block of ``init_file``."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    table: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for found in node.body:
            if isinstance(found, ast.ImportFrom) and found.module and found.module.startswith(f"{package}."):
                for alias in found.names:
                    table[alias.asname or alias.name] = (found.module, alias.name)
    return table


def entry_points(package: str, init_file: str) -> tuple[Callable[[str], object], list[str]]:
    """A module ``__getattr__`` for ``package`` and its ``__all__``, both read from the ``TYPE_CHECKING`` imports
    of its ``__init__`` (``init_file``)."""
    table = typed_imports(init_file, package)

    def find(name: str) -> object:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = where
        return getattr(importlib.import_module(module), attribute)

    return find, sorted(table)
