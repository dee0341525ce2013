-- When the hourly sweep last asked Slack for a channel's member list, read or not. The sweep takes the lists it
-- tried longest ago first: a channel Slack will never list (gone, PaperPing removed unheard) no longer comes first
-- at every run, holding back the lists of every other channel.
ALTER TABLE channels ADD COLUMN members_tried_at timestamptz;
