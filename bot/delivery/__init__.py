"""The Slack side of what the core decided: a slot's post (``slot_posts``), context replies in threads
(``thread_replies``), personal picks in a direct message (``picks_dm``), the monthly report's upload
(``report_upload``), papers on demand (``like``), follow-ups (``follow_up_posts``), members' own papers
(``author_posts``), the conference planner (``conference_post``), what PaperPing does when it joins a channel
(``joining``), and the one way all of them post a short text (``short_messages``)."""
