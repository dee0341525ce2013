from __future__ import annotations

import threading

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


def test_posts_queued_for_one_channel_do_not_hold_up_another() -> None:
    # three posts for C1 at once take the seconds after one another; C2's post, asked for meanwhile, waits for none
    started = threading.Event()
    release = threading.Event()
    now = [100.0]
    waits: dict[str, list[float]] = {"C1": [], "C2": [], "MainThread": []}

    def sleep(seconds: float) -> None:
        name = threading.current_thread().name
        waits[name].append(seconds)
        if name == "C1":
            started.set()
            release.wait(10)

    pacer = SlackPacer(sleep=sleep, clock=lambda: now[0])
    pacer.wait_channel("C1")  # C1's first second is taken
    first = threading.Thread(target=pacer.wait_channel, args=("C1",), name="C1")
    first.start()
    assert started.wait(10), "C1's second post waits for its second"
    other = threading.Thread(target=pacer.wait_channel, args=("C2",), name="C2")
    other.start()
    other.join(10)
    assert not other.is_alive() and waits["C2"] == [], "C2 went ahead while C1's post waited"
    release.set()
    first.join(10)
    pacer.wait_channel("C1")  # reserved after the one waiting: two seconds on
    assert waits["C1"] == [1.0] and waits["MainThread"] == [2.0], "the waiting post's second was reserved"


def test_reserved_seconds_follow_one_another() -> None:
    slept: list[float] = []
    pacer = SlackPacer(sleep=slept.append, clock=lambda: 50.0)
    for _ in range(4):
        pacer.wait_channel("C1")
    assert slept == [1.0, 2.0, 3.0], "each post waits for the second after the one reserved before it"


def test_a_call_waits_out_slacks_429s_only_up_to_its_budget() -> None:
    """Retry-Afters are waited out while their sum stays within ``max_wait``; the wait that would pass it is not
    begun, and the call fails as rate limited, for the caller's own retry."""
    import pytest
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web import SlackResponse

    from socialrag.errors import RateLimited

    def limited(after: int) -> SlackApiError:
        answer = SlackResponse(
            client=None, http_verb="POST", api_url="https://slack.com/api/chat.postMessage", req_args={},
            data={"ok": False, "error": "ratelimited"}, headers={"Retry-After": str(after)}, status_code=429,
        )  # fmt: skip
        return SlackApiError("ratelimited", answer)

    asked = [100, 150, 60]

    def post(**kwargs: object) -> dict[str, bool]:
        if asked:
            raise limited(asked.pop(0))
        return {"ok": True}

    slept: list[float] = []
    pacer = SlackPacer(sleep=slept.append, max_wait=300)
    with pytest.raises(RateLimited, match="asked to wait 60 s, past the 300 s"):
        pacer.call(post, channel="C1")
    assert slept == [100.0, 150.0], "the third wait would pass 300 s: not begun"
    asked[:] = [120]
    assert pacer.call(post, channel="C1") == {"ok": True} and slept[-1] == 120.0
