"""The conference planner's files as the channel sees them, through the real ``WebClient`` against the Slack
stand-in: their names and titles come from a venue's name (the member's own words, or a source's metadata), so
they keep nothing of it that could turn the name around, hide a character or climb out of a folder."""

from __future__ import annotations

from slack_sdk import WebClient

from bot.delivery.conference_post import post_plan
from socialrag.recommender import ConferencePlan
from socialrag.recommender.serve.conference import PlannedPaper
from tests.support.harness import Harness


def test_the_planners_file_names_keep_no_control_character_override_or_folder(harness: Harness) -> None:
    # "‮dm.exe" reads "exe.md" backwards: a right-to-left override would make the file look like another kind
    venue = "ACL\u202edm.exe/../../etc\x07 Findings"
    paper = PlannedPaper(1, "A paper", "https://arxiv.org/abs/2401.00001", "A. Author", 0.5, "Close to what we share.")
    plan = ConferencePlan(venue, 2025, 1, [paper])
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    failed = post_plan(client, harness.ctx.pacer, "C1", "nlp-lab", plan, "U2", {})
    assert failed is None, failed
    files = harness.standin.files
    assert len(files) == 2, files
    for f in files:
        for shown in (f["name"], f["title"]):
            assert "\u202e" not in shown and "\x07" not in shown and "/" not in shown, shown
            assert shown.startswith("ACL") and shown.endswith(("2025.md", "2025.csv")), shown
