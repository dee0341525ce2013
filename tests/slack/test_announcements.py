"""Settings announcements in the channel (``Invocation.announce``) when one member's changes are handled at once,
through the real bolt app against the Slack stand-in: each change made within ten minutes joins the member's last
announcement, and the group sees every one of them, whichever edit Slack applies last."""

from __future__ import annotations

import threading
import time

from tests.support.harness import Harness
from tests.support.slack_standin import Call


def test_two_changes_at_once_both_stay_in_the_announcement(harness: Harness) -> None:
    """A member changes the style and, while Slack is still applying that edit, the length (two commands at once,
    or two processes): the edit that arrives last must not take the other change out of the message."""
    assert harness.command("frequency daily", user="U2") == "Done: I'll post daily here."
    (said,) = [m for m in harness.standin.state.messages["C1"] if m.get("user") == "UBOT"]

    def slow(call: Call) -> bool:  # Slack is slow with the edit that adds the style, and only that one
        text = call.params.get("text", "")
        return call.method == "chat.update" and "tldr" in text and "short" not in text

    harness.standin.hold, harness.standin.hold_seconds = slow, 2.0
    answered = len(harness.standin.responses)
    style = threading.Thread(target=harness.command, args=("style tldr",), kwargs={"user": "U2", "timeout": 10})
    style.start()
    deadline = time.monotonic() + 5
    while not harness.standin.calls_to("chat.update"):
        assert time.monotonic() < deadline, "the style's edit reached Slack"
        time.sleep(0.02)
    harness.command("length short", user="U2")
    style.join()
    deadline = time.monotonic() + 10
    while len(harness.standin.responses) < answered + 2:  # each answer goes after its announcement
        assert time.monotonic() < deadline, "both commands were answered"
        time.sleep(0.05)
    shown = str(said["text"])
    assert "post daily" in shown and "`tldr` style" in shown and "short length" in shown, shown
    assert [m for m in harness.standin.state.messages["C1"] if m.get("user") == "UBOT"] == [said], "one message"
