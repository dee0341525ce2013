"""The demo's loop: what the members' reactions to the first post changed in the next ranking (its top five, and
the papers whose scores moved most)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.demo.extras import Say
from socialrag.recommender import Recommendation

LOOP_WIDTH = 50  # the loop looks at this many of the next ranking's papers after the reactions
LOOP_BEFORE = 1000  # and finds them among this many before, so that a paper that rose from far down is seen
LOOP_MOVERS = 3  # and names the ones whose scores moved most


def show_loop(
    before: Recommendation,
    after: Recommendation,
    reactors: Sequence[tuple[str, str]],
    names: dict[str, str],
    say: Say,
) -> None:
    """How the members' reactions to the first post (``reactors``: member and emoji) moved the next ranking."""
    reacted = ", ".join(f"@{names.get(u, u)} :{e}:" for u, e in reactors)
    say(f"\n── The loop: {reacted} on the first post, and @{names.get('U01AMARA')} replied " + "─" * 6)
    old = {c.paper_id: (i, c.score) for i, c in enumerate(before.candidates[:5], 1)}
    lines, moved, rescored = [], False, False
    for i, c in enumerate(after.candidates[:5], 1):
        was = old.get(c.paper_id)
        change = f"was #{was[0]}" if was else "new in the top five"
        if was and was[0] == i:
            change = "same place"
        moved |= change != "same place"
        rescored |= was is None or abs(c.score - was[1]) > 5e-4
        lines.append(
            f"    #{i} {c.score:.3f} (was {was[1]:.3f})  {c.title}  [{change}]"
            if was
            else f"    #{i} {c.score:.3f}  {c.title}  [{change}]"
        )
    how = "the next top five keep their places, with these scores:"
    if moved:
        how = "the next ranking moves:" if rescored else "the next top five keep their scores, and their order changes:"
    say(f"  The first post's paper now counts as something the group liked; {how}")
    for line in lines:
        say(line)
    top = [c.score for c in after.candidates[:5]]
    if top != sorted(top, reverse=True):
        say("    (the order is the posting order: variety moves a paper close to a recent post down)")
    dropped = [c.title for c in before.candidates[:5] if c.paper_id not in {a.paper_id for a in after.candidates[:5]}]
    if dropped:
        say("    dropped out: " + "; ".join(dropped))
    show_movers(before, after, say)


def show_movers(before: Recommendation, after: Recommendation, say: Say) -> None:
    """The papers of the next ranking's first ``LOOP_WIDTH`` (``after``) whose scores the reactions moved most,
    with their places in ``before`` (the ranking just before the reactions, further down)."""
    was = {c.paper_id: (i, c.score) for i, c in enumerate(before.candidates, 1)}
    moved = [
        (c.score - was[c.paper_id][1], was[c.paper_id][0], i, c.title)
        for i, c in enumerate(after.candidates, 1)
        if c.paper_id in was and abs(c.score - was[c.paper_id][1]) > 5e-4
    ]
    if not moved:
        say(f"  No score among the next {len(after.candidates)} papers changed.")
        return
    say(f"  The scores the reactions moved most, of the next {len(after.candidates)} papers:")
    for delta, old, new, title in sorted(moved, key=lambda m: -abs(m[0]))[:LOOP_MOVERS]:
        say(f"    {delta:+.3f}  {title}  [#{old} → #{new}]")
