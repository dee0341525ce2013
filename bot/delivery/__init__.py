"""The Slack side of what the core decided: a slot's post (``slot_posts``), context replies in threads
(``thread_replies``), personal picks in a direct message (``picks_dm``), the monthly report's upload
(``report_upload``), papers on demand (``like``) and what PaperPing does when it joins a channel
(``joining``)."""
