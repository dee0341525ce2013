"""PaperPing's command line, the part that is not Slack: each subcommand a ``Subcommand`` (``base``) with its
options and its work, in the module of its kind. ``bot.cli`` adds the Slack ones (``run``, ``backfill``,
``import-export``, ``demo``) and is the ``paperping`` program.
"""

from socialrag.cli import ask, backups, catalog, export, maintenance, recommend, report, status, upgrades
from socialrag.cli.subcommand import Subcommand

CORE_COMMANDS: tuple[Subcommand, ...] = (
    catalog.COMMAND,
    maintenance.INDEX,
    recommend.RECOMMEND,
    recommend.EVAL,
    report.COMMAND,
    export.COMMAND,
    recommend.REFIT,
    ask.COMMAND,
    maintenance.PURGE,
    maintenance.ZOTERO_GROUP,
    status.COMMAND,
    maintenance.MIGRATE,
    maintenance.KEYGEN,
    backups.BACKUP,
    backups.RESTORE,
    backups.MOVE_TO,
    upgrades.UPGRADE_HOME,
)

__all__ = ["CORE_COMMANDS", "Subcommand"]
