-- `/paperping report monthly` posts the month's summary chart in the channel on the first of each month.
ALTER TABLE channel_settings ADD COLUMN report_monthly boolean NOT NULL DEFAULT false;
ALTER TABLE channel_settings ADD COLUMN report_last_at timestamptz;
