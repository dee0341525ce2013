"""What the group reads, as a whole: `top [week|month|year]`, the papers the channel engaged with most."""

from __future__ import annotations

from bot.commands.base import Command, Invocation, UsageError, command
from bot.views.top_list import render_top_list
from socialrag.report import PERIODS, load_top_list


def parse_top(name: str, args: tuple[str, ...], rest: str) -> Command:
    period = args[0].lower() if args else "month"
    if len(args) > 1 or period not in PERIODS:
        raise UsageError("Say which period: `/paperping top week`, `top month` (the default) or `top year`.")
    return Command(name, (period,))


@command(
    "top",
    "`top [week|month|year]` — the papers this channel engaged with most in that period, with who engaged",
    parse=parse_top,
)
def cmd_top(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        top = load_top_list(conn, inv.team, inv.channel, inv.args[0], inv.now)
    return render_top_list(top)
