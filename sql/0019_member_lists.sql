-- Trust, third round: a channel's members as Slack last said them. Each (re)join and the hourly sweep read
-- `conversations.members` and replace the stored list (not only add to it); anything of a channel reaches a
-- member in private only while this is under a day old, or after it is read again.
ALTER TABLE channels ADD COLUMN members_read_at timestamptz;
