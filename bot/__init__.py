"""PaperPing's Slack side: the command line, Slack payloads and exports, the bolt app."""
