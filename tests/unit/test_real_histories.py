"""The real, dated histories the project's evaluation replays (``bench/real/replay_real.py``): the shipped files
are the ones the evaluation was built on, and every choice in them is a catalog paper at a real moment."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from bench.real.build_histories import build_seminar
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
    for name in (n.removesuffix(".jsonl") for n in SHA256 if n.endswith(".jsonl")):
        rows = [json.loads(line) for line in (HISTORIES / f"{name}.jsonl").read_text().splitlines()]
        assert len(rows) >= 50
        assert all(r["acl_id"] in ids for r in rows)
        assert len({r["acl_id"] for r in rows}) == len(rows)
        times = [datetime.fromisoformat(r["at"]) for r in rows]
        assert times == sorted(times) and times[0].year >= 2016 and times[-1].year <= 2021
        assert all(r["member"].startswith("M") for r in rows), "members are pseudonyms"


def test_the_broad_group_and_the_single_topic_list_each_give_more_than_15_weeks_of_choices() -> None:
    for name, members in (("antnlp-seminar", 40), ("bert-related-list", 2)):
        rows = [json.loads(line) for line in (HISTORIES / f"{name}.jsonl").read_text().splitlines()]
        weeks = {datetime.fromisoformat(r["at"]).strftime("%G-%V") for r in rows}
        assert len(weeks) > 15
        assert len({r["member"] for r in rows}) >= members


def _git(repo: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_DATE": "2019-03-01T10:00:00", "GIT_COMMITTER_DATE": "2019-03-01T10:00:00"}
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=Someone", "-c", "user.email=s@example.org", *args],
        check=True,
        capture_output=True,
        env={**os.environ, **env},
    )


def test_a_seminar_row_counts_on_its_meeting_day_for_its_speaker_and_a_cancelled_one_not_at_all(tmp_path) -> None:
    catalog = tmp_path / "catalog.jsonl.gz"
    with gzip.open(catalog, "wt") as fh:
        for acl_id, title in (
            ("N19-1001", "Parsing as Tagging"),
            ("P18-1002", "A Good Paper on Relations"),
            ("D18-1003", "Struck Through"),
            ("D17-1004", "Linked Only"),
        ):
            fh.write(json.dumps({"acl_id": acl_id, "title": title}) + "\n")
    repo = tmp_path / "seminar"
    (repo / "2019Spring").mkdir(parents=True)
    (repo / "2019Spring" / "readme.md").write_text(
        "# Seminar\n\n| Week | Speaker | Paper | Slides |\n| :--: | :--: | --- | --- |\n"
        "| 1 (2.21) | Ana | [NAACL19]Parsing as Tagging<br/>[ICLR19]Not In The Catalog | |\n"
        "| 2 | Bo | [ACL 2018] A Good Paper on Relations | |\n"
        "| ~~3~~ | ~~Ana~~ | ~~[EMNLP18]Struck Through~~ | |\n"
        "| 4 (3.14) | Ana<br>Bo | [a link](https://aclanthology.org/D17-1004) | |\n"
    )
    (repo / "2019Spring" / "notes.md").write_text("| 1 | Cy | [ACL18]A Good Paper on Relations |\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "agenda")
    rows = build_seminar(repo, catalog)
    assert [(r["acl_id"], r["at"][:10], r["member"]) for r in rows] == [
        ("N19-1001", "2019-02-21", "M1"),  # the meeting's day
        ("P18-1002", "2019-03-01", "M2"),  # no day in the row: the commit that added it
        ("D17-1004", "2019-03-14", "M1"),  # the first of two speakers
    ]


def test_a_publication_month_is_read_when_given_and_the_year_otherwise() -> None:
    assert published({"year": "2019", "month": "June"}) == (datetime(2019, 6, 1).date(), "month")
    assert published({"year": "2020", "month": "November-December"})[0].month == 11
    assert published({"year": "2018", "month": None}) == (datetime(2018, 1, 1).date(), "year")


def test_the_replay_gives_each_paper_its_venue_series_as_storage_does() -> None:
    """The replay once passed each venue's number where its name goes and left its id empty, so the venue feature
    was unknown for every paper of every real history, as it never is in serving."""
    from bench.real.replay_real import paper_infos

    def row(venue: str, year: int) -> dict[str, object]:
        return {"title": "T", "authors": ["A B"], "venue": venue, "year": year, "publication_date": f"{year}-07-01"}

    acl = "Proceedings of the {}th Annual Meeting of the Association for Computational Linguistics"
    infos = paper_infos(
        [row(acl.format(57), 2019), row(acl.format(58), 2020), row("Proceedings of the Workshop", 2020)]
    )
    assert infos[1].venue_id is not None and infos[1].venue_id == infos[2].venue_id != infos[3].venue_id
    assert (infos[1].venue, infos[2].venue) == ("ACL", "ACL")
