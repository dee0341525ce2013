-- A personal-picks DM is sent with its try in the message metadata, and the try is kept here until it is recorded
-- or Slack refused it. When Slack's answer never came (a timeout after Slack may have taken the message), the
-- next try looks in the member's DM for PaperPing's message of that try and records it instead of sending twice.
ALTER TABLE member_settings ADD COLUMN picks_attempt_at timestamptz;
