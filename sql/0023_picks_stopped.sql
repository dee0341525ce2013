-- A personal-picks DM Slack refuses for good (the member is gone, cannot be messaged, the message is refused)
-- stops the member's picks, with why, until they turn them on again; status and App Home say so.
ALTER TABLE member_settings ADD COLUMN picks_stopped_reason text;
