"""One setting as ``socialrag.config`` declares it: its variable, the ``Settings`` field it fills, how its value is
read from the environment's text, its default and what it means (the row docs/configuration.md shows); and the
parsers of settings whose text has a shape of its own (``zotero_allow_list``)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from socialrag.errors import ConfigError

Kind = Literal["path", "flag", "text", "url", "int", "count", "float", "device"]  # count: an int, 0 allowed
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Setting:
    variable: str
    field: str
    kind: Kind
    default: str | None  # as it would be written in the environment; None: unset
    meaning: str
    shown: str | None = None  # the default as the documentation shows it, where the raw one says too little
    bounds: tuple[float, float] | None = None  # a number's least and most (beyond them: a typo, or an overflow)

    def read(self, env: Mapping[str, str]) -> Any:
        """This setting's value in ``env`` (its default when unset or empty); a bad value is a ``ConfigError``."""
        raw = env.get(self.variable, "").strip() or self.default
        if self.kind == "text":
            return raw
        if raw is None:
            raise AssertionError(f"{self.variable} has no default")
        if self.kind == "path":
            return Path(raw).expanduser()
        if self.kind == "flag":
            return _flag(self.variable, raw)
        if self.kind == "url":
            return raw if raw.endswith("/") else raw + "/"
        if self.kind == "device":
            return _device(raw)
        value = _number(self.variable, raw, float if self.kind == "float" else int, zero=self.kind == "count")
        if self.bounds and not self.bounds[0] <= value <= self.bounds[1]:
            least, most = (f"{b:,g}" for b in self.bounds)
            raise ConfigError(f"{self.variable} must be from {least} to {most}, got {raw!r}")
        return value

    @property
    def documented_default(self) -> str:
        return self.shown or self.default or "(unset)"


def _device(value: str) -> str:
    device = value.lower()
    if device in ("auto", "cpu", "cuda", "mps") or re.fullmatch(r"cuda:\d+", device):
        return device
    raise ConfigError(f"PAPERPING_EMBED_DEVICE must be auto, cpu, cuda, cuda:N or mps, got {value!r}")


def _flag(name: str, raw: str) -> bool:
    """On or off; any other word is refused rather than read as off (``PAPERPING_OFFLINE=ture`` would go online)."""
    word = raw.lower()
    if word not in _TRUE | _FALSE:
        raise ConfigError(f"{name} is 1 or 0 (true/false, yes/no, on/off), got {raw!r}")
    return word in _TRUE


def _number(name: str, raw: str, kind: type[int] | type[float], *, zero: bool = False) -> int | float:
    try:
        value = kind(raw)
    except ValueError:
        whole = "a whole number" if kind is int else "a number"
        raise ConfigError(f"{name} must be {whole}, got {raw!r}") from None
    if not math.isfinite(value):  # nan passes every comparison below, and inf is no timeout at all
        raise ConfigError(f"{name} must be a finite number, got {raw!r}")
    if value < 0 or (value == 0 and not zero):
        raise ConfigError(f"{name} must be {'0 or more' if zero else 'positive'}, got {raw!r}")
    return value


def zotero_group_id(raw: str) -> str | None:
    """A Zotero group id as Zotero reads it (a number: ``04242`` is group 4242, so it is written ``4242``), or None
    when ``raw`` is none: ASCII digits only, at most twelve, not zero."""
    if not re.fullmatch(r"[0-9]{1,12}", raw) or int(raw) == 0:
        return None
    return str(int(raw))


def zotero_group_allowed(allowed: Mapping[str, frozenset[str]], team: str, group: str) -> bool:
    """Whether ``PAPERPING_ZOTERO_GROUPS`` (as ``zotero_allow_list`` reads it) lets ``team`` send to ``group``: not
    when it lists the group for another workspace only, nor when it lists ``team`` without that group."""
    listed_for = {t for t, groups in allowed.items() if group in groups}
    mine = allowed.get(team)
    return not ((listed_for and team not in listed_for) or (mine is not None and group not in mine))


def zotero_allow_list(raw: str | None) -> dict[str, frozenset[str]]:
    """``PAPERPING_ZOTERO_GROUPS`` as {workspace: its group ids}; empty when unset. A malformed value is a
    ``ConfigError`` that says what to write."""
    out: dict[str, frozenset[str]] = {}
    for part in (raw or "").split(";"):
        if not part.strip():
            continue
        team, _, groups = part.partition("=")
        given = [g.strip() for g in groups.split(",") if g.strip()]
        ids = frozenset(zotero_group_id(g) or "" for g in given)
        if not team.strip() or not ids or "" in ids:
            raise ConfigError(
                f"PAPERPING_ZOTERO_GROUPS: {part.strip()[:60]!r} is not WORKSPACE=GROUP[,GROUP]; write it as "
                "`T0123=123456,234567;T0456=345678`"
            )
        out[team.strip()] = out.get(team.strip(), frozenset()) | ids
    return out
