-- The monthly report claimed like a slot (one worker posts it), retried later after a passing failure, and
-- stopped with its reason after one that cannot heal (status shows it; `/paperping report monthly` restarts it).
-- An on-demand report is kept to one every ten minutes.
ALTER TABLE channel_settings
    ADD COLUMN report_claimed_until  timestamptz,
    ADD COLUMN report_retry_at       timestamptz,
    ADD COLUMN report_failures       integer NOT NULL DEFAULT 0,
    ADD COLUMN report_stopped_reason text,
    ADD COLUMN report_asked_at       timestamptz;
