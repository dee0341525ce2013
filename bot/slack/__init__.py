"""What talks to Slack's API and nothing else: installations and their tokens (``installation_store``), the
HTTP front (``http_front``), events handled once (``dedupe``), payloads turned into PaperPing's models
(``payloads``), the pace of Web API calls (``pacer``), what PaperPing knows of each workspace (``directory``),
channel member lists (``members``), a channel's history (``backfill``) and a workspace export
(``workspace_export``)."""
