-- When a member last asked for a post now (`now`, `start-over`), whatever came of it: a search that found nothing
-- to post cost as much as one that posted, so it holds the channel's ten minutes between posts on demand too.
ALTER TABLE channel_settings ADD COLUMN post_asked_at timestamptz;
