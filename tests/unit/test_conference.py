"""The conference planner's pure parts: which known venues a member meant, and the files it writes."""

from __future__ import annotations

import csv
import io

from socialrag.recommender.retrieve.venue_papers import match_venue
from socialrag.recommender.serve.conference import ConferencePlan, PlannedPaper, render_csv, render_markdown

VENUES = [
    (1, "ACL", "annual meeting of the association for computational linguistics"),
    (2, "EMNLP", "conference on empirical methods in natural language processing emnlp"),
    (3, "Findings of ACL", "findings of the association for computational linguistics emnlp"),
    (4, "LREC", "language resources and evaluation conference"),
]


def test_a_venue_by_its_short_name_its_series_or_the_nearest_names() -> None:
    assert match_venue("acl", VENUES).ids == (1,)
    assert match_venue("Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics",
                       VENUES).ids == (1,)  # fmt: skip
    unknown = match_venue("EMNPL", VENUES)
    assert unknown.ids == () and unknown.nearest[0] == "EMNLP"
    assert match_venue("Findings", VENUES).nearest == ("Findings of ACL",), "a part of a name finds it too"


def test_the_files_keep_outside_text_in_its_cell() -> None:
    plan = ConferencePlan("ACL", 2026, 2, [
        PlannedPaper(1, "A | B\nC", "https://aclanthology.org/2026.acl-long.1", "=HYPERLINK(\"x\")", 0.5,
                     "Closest to the thread on X, shared by {@U1}."),
    ])  # fmt: skip
    markdown = render_markdown(plan, {"U1": "ana"}, "nlp | lab")
    row = markdown.strip().split("\n")[-1]
    assert row.count(" | ") == 3 and "A ¦ B C" in row and "shared by @ana" in row
    (line,) = list(csv.DictReader(io.StringIO(render_csv(plan, {"U1": "ana"}))))
    assert line["authors"].startswith("'="), "a cell that starts like a formula stays text"
    assert line["why"] == "Closest to the thread on X, shared by @ana."
