-- Exactly one post per slot, however slow a recommendation is: the worker serving a slot holds a lease on
-- its row (renewed while it works) and must win a compare-and-set to 'sending' before it posts.
ALTER TABLE recommendations ADD COLUMN claimed_by text;
ALTER TABLE recommendations ADD COLUMN lease_until timestamptz;
ALTER TABLE recommendations DROP CONSTRAINT recommendations_status_check;
ALTER TABLE recommendations ADD CONSTRAINT recommendations_status_check
    CHECK (status IN ('drafted', 'posting', 'sending', 'posted', 'failed'));

-- Failures of a channel's posts: consecutive transient ones back off; a permanent one (channel gone, bot
-- removed, token revoked) stops the channel with its reason, shown by `status`.
ALTER TABLE channel_settings ADD COLUMN failures integer NOT NULL DEFAULT 0;
ALTER TABLE channel_settings ADD COLUMN stopped_reason text;
