"""Paths to the shared real data and Semantic Scholar response shapes, and helpers to read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

SHARED = Path(__file__).resolve().parents[2] / "shared"
if not SHARED.is_dir():  # a checkout elsewhere: look beside the repository root
    SHARED = Path(__file__).resolve().parents[1].parent / "shared"
S2_FIXTURES = SHARED / "fixtures" / "semanticscholar"
ACL_DATA = SHARED / "data" / "acl-anthology-2016-2021.jsonl.gz"


def s2_json(name: str) -> Any:
    return json.loads((S2_FIXTURES / name).read_text())


def s2_cassette(name: str) -> list[dict[str, Any]]:
    """The recorded interactions of a cassette: request (method, uri, body) and response (status, body)."""
    data = yaml.safe_load((S2_FIXTURES / name).read_text())
    return data["interactions"]
