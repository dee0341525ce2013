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
    outcome = post_plan(client, harness.ctx.pacer, "C1", "nlp-lab", plan, "U2", {})
    assert outcome.files is None and outcome.first_ten is None, outcome
    files = harness.standin.files
    assert len(files) == 2, files
    for f in files:
        for shown in (f["name"], f["title"]):
            assert "\u202e" not in shown and "\x07" not in shown and "/" not in shown, shown
            assert shown.startswith("ACL") and shown.endswith(("2025.md", "2025.csv")), shown


def test_a_refused_reply_with_the_first_ten_does_not_say_the_posted_planner_failed(harness: Harness) -> None:
    """The message and its files are in the channel when Slack refuses the reply with the first ten: the member is
    told what is there and what is missing, not that posting failed (and asks for it again, a second planner)."""
    paper = PlannedPaper(1, "A paper", "https://arxiv.org/abs/2401.00001", "A. Author", 0.5, "Close to what we share.")
    plan = ConferencePlan("ACL", 2025, 1, [paper])

    def refuse_replies(call: object) -> bool:
        if getattr(call, "method", "") == "chat.postMessage" and getattr(call, "params", {}).get("thread_ts"):
            harness.standin.fail_next["chat.postMessage"] = 10  # every try of the thread's reply
        return False

    harness.standin.hold = refuse_replies
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    outcome = post_plan(client, harness.ctx.pacer, "C1", "nlp-lab", plan, "U2", {})
    assert len(harness.standin.files) == 2
    assert [p for p in harness.standin.posts if "ACL 2025" in p["text"]], harness.standin.posts
    assert outcome.files is None and outcome.first_ten is not None, outcome
