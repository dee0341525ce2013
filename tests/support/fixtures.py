"""Paths to the test data shipped in ``tests/data`` (real ACL Anthology papers and Semantic Scholar
response shapes; their sources and licences are in ``tests/data/README.md``), and helpers to read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parents[1] / "data"
S2_FIXTURES = DATA / "semanticscholar"
ACL_DATA = DATA / "acl-anthology-sample.jsonl.gz"
ACL_PAPERS = 415  # lines in ACL_DATA


def s2_json(name: str) -> Any:
    return json.loads((S2_FIXTURES / name).read_text())


def s2_cassette(name: str) -> list[dict[str, Any]]:
    """The recorded interactions of a cassette: request (method, uri, body) and response (status, body)."""
    data = yaml.safe_load((S2_FIXTURES / name).read_text())
    return data["interactions"]
