"""The real, dated histories the project's evaluation replays (``bench/real/replay_real.py``): the shipped files
are the ones the evaluation was built on, and every choice in them is a catalog paper at a real moment."""

from __future__ import annotations

import gzip
import json
from datetime import datetime

import pytest

from bench.real.replay_real import CATALOG, HISTORIES, SHA256, check, published


def test_the_shipped_files_are_the_ones_the_evaluation_was_built_on(tmp_path) -> None:
    for name in SHA256:
        check(CATALOG if name == CATALOG.name else HISTORIES / name)
    changed = tmp_path / "clulab-proposals.jsonl"
    changed.write_text((HISTORIES / "clulab-proposals.jsonl").read_text() + "\n")
    with pytest.raises(SystemExit, match="not the file this evaluation was built on"):
        check(changed)


def test_every_choice_is_a_catalog_paper_chosen_once_in_time_order() -> None:
    with gzip.open(CATALOG, "rt") as fh:
        ids = {json.loads(line)["acl_id"] for line in fh}
    for name in ("clulab-proposals", "clulab-conference-notes"):
        rows = [json.loads(line) for line in (HISTORIES / f"{name}.jsonl").read_text().splitlines()]
        assert len(rows) >= 50
        assert all(r["acl_id"] in ids for r in rows)
        assert len({r["acl_id"] for r in rows}) == len(rows)
        times = [datetime.fromisoformat(r["at"]) for r in rows]
        assert times == sorted(times) and times[0].year >= 2016 and times[-1].year <= 2021
        assert all(r["member"].startswith("M") for r in rows), "members are pseudonyms"


def test_a_publication_month_is_read_when_given_and_the_year_otherwise() -> None:
    assert published({"year": "2019", "month": "June"}) == (datetime(2019, 6, 1).date(), "month")
    assert published({"year": "2020", "month": "November-December"})[0].month == 11
    assert published({"year": "2018", "month": None}) == (datetime(2018, 1, 1).date(), "year")
