-- A Slack event's id is claimed before its listener runs (handled_at NULL) and marked handled when the listener is
-- done, in the transaction of what it stored. A copy Slack resends while the first is still being handled is told
-- to come back later instead of being handled a second time; a claim whose listener failed is let go, so that the
-- resend is handled. Rows written before this migration, and clicks on buttons, count as handled.
ALTER TABLE processed_events ADD COLUMN handled_at timestamptz DEFAULT now();
