"""``python -m bot.cli``: the ``paperping`` program."""

import sys

from bot.cli import main

sys.exit(main())
