"""PaperPing's Slack side, by role: the bolt app (``app``, with what its listeners share in ``app_context``),
every bolt registration (``listeners/``), the ``/paperping`` subcommands (``commands/``), Slack's API
(``slack/``), Block Kit (``views/``), the delivery of what the core decided (``delivery/``), the ``paperping``
program (``cli/``) and the offline demo (``demo/``)."""
