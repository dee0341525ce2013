"""One setting as ``socialrag.config`` declares it: its variable, the ``Settings`` field it fills, how its value is
read from the environment's text, its default and what it means (the row docs/configuration.md shows); and the
parsers of settings whose text has a shape of its own (``zotero_allow_list``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from socialrag.errors import ConfigError

Kind = Literal["path", "flag", "text", "url", "int", "count", "float", "device"]  # count: an int, 0 allowed
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Setting:
    variable: str
    field: str
    kind: Kind
    default: str | None  # as it would be written in the environment; None: unset
    meaning: str
    shown: str | None = None  # the default as the documentation shows it, where the raw one says too little

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
            return raw.lower() in _TRUE
        if self.kind == "url":
            return raw if raw.endswith("/") else raw + "/"
        if self.kind == "device":
            return _device(raw)
        return _number(self.variable, raw, float if self.kind == "float" else int, zero=self.kind == "count")

    @property
    def documented_default(self) -> str:
        return self.shown or self.default or "(unset)"


def _device(value: str) -> str:
    device = value.lower()
    if device in ("auto", "cpu", "cuda", "mps") or re.fullmatch(r"cuda:\d+", device):
        return device
    raise ConfigError(f"PAPERPING_EMBED_DEVICE must be auto, cpu, cuda, cuda:N or mps, got {value!r}")


def _number(name: str, raw: str, kind: type[int] | type[float], *, zero: bool = False) -> int | float:
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if value < 0 or (value == 0 and not zero):
        raise ConfigError(f"{name} must be {'0 or more' if zero else 'positive'}, got {raw!r}")
    return value


def zotero_allow_list(raw: str | None) -> dict[str, frozenset[str]]:
    """``PAPERPING_ZOTERO_GROUPS`` as {workspace: its group ids}; empty when unset. A malformed value is a
    ``ConfigError`` that says what to write."""
    out: dict[str, frozenset[str]] = {}
    for part in (raw or "").split(";"):
        if not part.strip():
            continue
        team, _, groups = part.partition("=")
        ids = frozenset(g.strip() for g in groups.split(",") if g.strip())
        if not team.strip() or not ids or not all(g.isdigit() for g in ids):
            raise ConfigError(
                f"PAPERPING_ZOTERO_GROUPS: {part.strip()[:60]!r} is not WORKSPACE=GROUP[,GROUP]; write it as "
                "`T0123=123456,234567;T0456=345678`"
            )
        out[team.strip()] = out.get(team.strip(), frozenset()) | ids
    return out
