from __future__ import annotations

from bot.slack.pacer import SlackPacer


def test_one_message_a_second_per_channel() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = SlackPacer(sleep=sleep, clock=lambda: now[0])
    pacer.wait_channel("C1")
    pacer.wait_channel("C2")
    assert slept == [], "different channels do not wait for each other"
    now[0] += 0.25
    pacer.wait_channel("C1")
    assert slept == [0.75]
