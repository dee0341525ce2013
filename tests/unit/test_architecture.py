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
