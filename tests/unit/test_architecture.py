"""The house rules that code can check: one-way dependencies and settings read in one place."""

from __future__ import annotations

import ast
import re
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


def test_every_setting_is_documented() -> None:
    from socialrag.config import SETTINGS_HELP

    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [name for name in SETTINGS_HELP if f"| `{name}` |" not in page]
    assert missing == []


def test_every_slash_command_is_in_the_members_page() -> None:
    """The table of docs/channel.md lists every ``/paperping`` usage line's command, as ``/paperping help`` does."""
    from bot.commands import COMMANDS

    page = (ROOT / "docs" / "channel.md").read_text(encoding="utf-8").replace("\\|", "|")
    missing = sorted(
        {spec.usage.partition(" — ")[0] for spec in COMMANDS.values()} - set(re.findall(r"^\| (.+?) \|", page, re.M))
    )
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


SQL_STARTS = ("SELECT ", "INSERT INTO", "UPDATE ", "DELETE FROM", "WITH ", "CREATE ", "ALTER ", "SET LOCAL")
SQL_HOMES = ("socialrag/storage/", "socialrag/db.py", "socialrag/migrate.py")
MAX_LINES = 400
ENTRY_PACKAGES = ("knowledge", "recommender", "report")


def _sql_strings(path: Path) -> list[int]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
        if text.lstrip().startswith(SQL_STARTS):
            found.append(getattr(node, "lineno", 0))
    return found


def _code_files() -> list[Path]:
    return sorted(p for folder in ("bot", "socialrag") for p in (ROOT / folder).rglob("*.py"))


def test_sql_lives_in_the_storage_package_only() -> None:
    """Queries live in ``socialrag/storage/`` (and the connection and migration modules), nowhere else."""
    offenders = []
    for path in _code_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(SQL_HOMES):
            continue
        offenders += [f"{rel}:{line}" for line in _sql_strings(path)]
    assert offenders == []


def test_the_sql_finder_finds_sql(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text('Q = "SELECT 1"\ndef f():\n    return f"""\n  UPDATE t SET {1}"""\n', encoding="utf-8")
    assert _sql_strings(sample) == [1, 3]


def test_no_module_is_over_400_lines() -> None:
    long = []
    for path in _code_files():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines}")
    assert long == []


def test_the_slack_side_uses_the_packages_entry_points() -> None:
    """``bot`` imports ``socialrag.knowledge``, ``.recommender`` and ``.report`` by their ``__init__`` only,
    so the modules behind them can change without touching the Slack side."""
    offenders = []
    for path in sorted((ROOT / "bot").rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "socialrag" and len(parts) > 2 and parts[1] in ENTRY_PACKAGES:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_each_entry_point_is_written_once_and_resolves() -> None:
    """A package's public names are its ``TYPE_CHECKING`` imports (what mypy checks), and each resolves at run time
    to the very object that import names."""
    import importlib

    from socialrag.packages import typed_imports

    for short in ENTRY_PACKAGES:
        package = importlib.import_module(f"socialrag.{short}")
        table = typed_imports(ROOT / "socialrag" / short / "__init__.py", f"socialrag.{short}")
        assert package.__all__ == sorted(table) and table, short
        for name, (module, attribute) in table.items():
            assert getattr(package, name) is getattr(importlib.import_module(module), attribute), name


def test_an_unknown_entry_point_is_an_attribute_error() -> None:
    import pytest

    import socialrag.report as report

    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        report.nothing_here  # noqa: B018


RECOMMENDER_STEPS = {"retrieve": 0, "rank": 1, "explain": 1, "serve": 2}


def test_the_recommender_is_its_four_steps_in_order() -> None:
    """``retrieve`` imports none of the other steps; ``rank`` and ``explain`` only ``retrieve``; ``serve`` all
    three. Nothing but ``__init__.py`` sits at the recommender's top level."""
    top = ROOT / "socialrag" / "recommender"
    assert sorted(p.name for p in top.glob("*.py")) == ["__init__.py"]
    assert sorted(p.name for p in top.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(RECOMMENDER_STEPS)
    offenders = []
    for step, level in RECOMMENDER_STEPS.items():
        for path in sorted((top / step).rglob("*.py")):
            for name in _imports(path):
                parts = name.split(".")
                if parts[:2] != ["socialrag", "recommender"] or len(parts) < 3 or parts[2] == step:
                    continue
                other = parts[2]
                if other not in RECOMMENDER_STEPS or RECOMMENDER_STEPS[other] >= level:
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def test_storage_names_its_modules() -> None:
    import socialrag.storage as storage

    on_disk = sorted(p.stem for p in (ROOT / "socialrag" / "storage").glob("*.py") if p.stem != "__init__")
    assert storage.__all__ == on_disk
    assert all(getattr(storage, name).__name__ == f"socialrag.storage.{name}" for name in on_disk)


def test_storage_never_imports_the_steps_above_it() -> None:
    offenders = []
    for path in sorted((ROOT / "socialrag" / "storage").rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] == "socialrag" and len(parts) > 1 and parts[1] in (*ENTRY_PACKAGES, "packages"):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


# Unit tests of the Slack side import ``bot``, which stores what it handles, so they load the driver with it.
NEEDS_THE_DRIVER = (
    "test_architecture.py",
    "test_commands.py",
    "test_conference.py",
    "test_field_sources.py",
    "test_manifest.py",
    "test_pg_upgrade_alone.py",
    "test_profile_words.py",
    "test_properties.py",
    "test_readiness.py",
    "test_top_list.py",
)


def test_unit_tests_of_the_core_need_no_database_driver() -> None:
    """The root ``conftest`` and the core's pure modules load without psycopg and pgvector: the unit tests of
    links, emoji, ranking, calibration, explanation and the rest collect with the driver missing."""
    import subprocess
    import sys

    ignore = ", ".join(f"'--ignore=tests/unit/{name}'" for name in NEEDS_THE_DRIVER)
    blocker = (
        "import sys; sys.modules.update(dict.fromkeys(['psycopg', 'psycopg_pool', 'pgvector', 'pgvector.psycopg'])); "
        "import pytest; sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', 'tests/unit', "
        f"{ignore}]))"
    )
    done = subprocess.run([sys.executable, "-c", blocker], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "tests collected" in done.stdout


# Social-RAG's layers, lowest first: a module imports its own layer or the ones below, never one above.
# The root modules (types, settings, errors, the database) are below them all.
LAYERS = ("root", "storage", "knowledge", "recommender", "reading", "report", "cli")


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 2 and parts[1] in LAYERS else 0


def test_no_step_back_up_a_layer() -> None:
    """``storage`` < ``knowledge`` < ``recommender`` < ``report`` < ``cli``: the one direction of the core."""
    offenders = []
    for path in sorted((ROOT / "socialrag").rglob("*.py")):
        here = _module_name(path)
        mine = _layer(here + (".x" if path.name == "__init__.py" else ""))
        for name in _imports(path) | _packages_imported_from_root(path):
            if name.startswith("socialrag.") and _layer(name + ".x") > mine:
                offenders.append(f"{here} imports {name}")
    assert offenders == []


def _packages_imported_from_root(path: Path) -> set[str]:
    """``from socialrag import storage, knowledge`` names packages too."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "socialrag":
            found.update(f"socialrag.{alias.name}" for alias in node.names)
    return found


def test_benchmarks_do_not_edit_the_import_path() -> None:
    """``python -m bench.NAME`` from the repository root finds every package; no script edits ``sys.path``."""
    offenders = [p.name for p in sorted((ROOT / "bench").glob("*.py")) if "sys.path" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_no_two_modules_share_a_file_name() -> None:
    """Each name says its job once: no ``index.py`` beside ``indexer.py``'s twin, no three ``threads.py``."""
    seen: dict[str, list[str]] = {}
    for path in _code_files():
        if path.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


BOLT_REGISTRATION = re.compile(r"\bapp\.(event|command|action|shortcut|view|message|options|use|error|middleware)\(")


def test_bolt_registrations_live_under_listeners_only() -> None:
    offenders = []
    for path in sorted((ROOT / "bot").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("bot/listeners/"):
            continue
        text = path.read_text(encoding="utf-8")
        if BOLT_REGISTRATION.search(text) or re.search(r"^def register\(", text, re.M):
            offenders.append(rel)
    assert offenders == []


def test_the_slack_side_of_a_slot_only_sends() -> None:
    """A slot's life (claim, wait, record, step down) is the core's; its Slack side makes no storage call."""
    path = ROOT / "bot" / "delivery" / "slot_posts.py"
    text = path.read_text(encoding="utf-8")
    assert not any(name.startswith("socialrag.storage") for name in _imports(path))
    assert "storage." not in text and "import storage" not in text
