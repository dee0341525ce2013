"""What PaperPing shows in Slack, as Block Kit: posts and digests (``post_blocks``), replies in threads
(``replies``) and the App Home tab (``home_tab``). Every outside text is escaped here."""
