"""The ``/paperping`` slash command: each command declared once (``base.command``), with its usage line, parser
and handler, in the module of its kind. Answers are ephemeral; a wrong word gets the usage back.

`/paperping help` lists them module by module, in the order they are imported below.
"""

from bot.commands import about, authors, channel, group, member, profile, reading, sources, steering
from bot.commands.base import (
    COMMANDS,
    Command,
    Invocation,
    UsageError,
    is_slow,
    parse_command,
    run_command,
    usage_text,
)
from bot.commands.member import parse_author_link

__all__ = [
    "COMMANDS",
    "Command",
    "Invocation",
    "UsageError",
    "about",
    "authors",
    "channel",
    "group",
    "is_slow",
    "member",
    "parse_author_link",
    "parse_command",
    "profile",
    "reading",
    "run_command",
    "sources",
    "steering",
    "usage_text",
]
