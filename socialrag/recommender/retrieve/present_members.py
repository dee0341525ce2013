"""The signals as a message in the channel may state them in plain text (a context reply, the conference planner):
a signal about a member who is no longer in the channel (an author, an affiliation, an earlier paper, who may care)
goes; an earlier thread that such a member started stays, without their name. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from socialrag.models import EarlierReception, RelatedToEarlierPaper, SocialSignal
from socialrag.recommender.retrieve.context import ChannelContext


def named_in(signal: SocialSignal) -> set[str]:
    """The members a signal names or rests on."""
    fact = signal.fact
    said = {getattr(fact, "member", None), getattr(fact, "sharer", None)}
    return {m for m in said if isinstance(m, str)} | set(signal.members)


def for_the_channel(signals: Sequence[SocialSignal], ctx: ChannelContext) -> list[SocialSignal]:
    """``signals`` naming only members present in the channel now (``ChannelContext.present``)."""
    kept = []
    for s in signals:
        if all(ctx.present(m) for m in named_in(s)):
            kept.append(s)
        elif isinstance(s.fact, RelatedToEarlierPaper):  # the thread still counts; who started it is not said
            kept.append(replace(s, fact=replace(s.fact, sharer=None), members=()))
        elif isinstance(s.fact, EarlierReception):  # counts only: its repliers are never named
            kept.append(replace(s, members=tuple(m for m in s.members if ctx.present(m))))
    return kept
