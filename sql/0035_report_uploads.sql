-- The monthly report is uploaded at most once a month: report_uploading_at is set, under the row's lock, just
-- before the upload starts, and only one worker can set it for a month. It is cleared when the upload is recorded
-- or when Slack's answer says for certain that nothing reached the channel (the report is then retried). After a
-- crash, or an answer that was lost, it stays: the month's report may be in the channel, so it is not sent again.
ALTER TABLE channel_settings ADD COLUMN report_uploading_at timestamptz;
