"""The house rules that code can check: one-way dependencies and settings read in one place."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN_IN_CORE = ("bot", "slack_bolt", "slack_sdk")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_core_never_imports_slack_or_bot() -> None:
    offenders = []
    for path in sorted((ROOT / "socialrag").rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[0] in FORBIDDEN_IN_CORE:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_only_config_reads_the_environment() -> None:
    offenders = []
    for folder in ("socialrag", "bot"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "config.py":
                continue
            text = path.read_text(encoding="utf-8")
            if "os.environ" in text or "os.getenv" in text:
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_every_setting_is_documented_in_the_readme() -> None:
    from socialrag.config import SETTINGS_HELP

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [name for name in SETTINGS_HELP if f"`{name}`" not in readme]
    assert missing == []


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (at any depth of the file: lazy imports count)."""
    modules = {_module_name(p): p for p in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for imported in _imports(path):
            # `from bot.x import y` names a module or a name in one; count the longest module it names
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and imported != package:
                found.add(imported)
        graph[name] = found
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_in_either_package() -> None:
    assert _find_cycle(_import_graph("bot")) is None
    assert _find_cycle(_import_graph("socialrag")) is None


def test_the_cycle_finder_finds_one() -> None:
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


SQL_STARTS = ("SELECT ", "INSERT INTO", "UPDATE ", "DELETE FROM", "WITH ", "CREATE ", "ALTER ")


def test_no_sql_in_the_slack_side() -> None:
    """Queries live in the store modules of ``socialrag`` (or ``sql/``), none in ``bot/``."""
    offenders = []
    for path in sorted((ROOT / "bot").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if text.lstrip().startswith(SQL_STARTS):
                offenders.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}")
    assert offenders == []
