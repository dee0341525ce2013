-- A source that keeps failing is backed off as a whole, not paper by paper: after three failures in a row no
-- process asks it until `held_until` (doubling from two minutes to an hour), and status says which and why.
ALTER TABLE source_pace ADD COLUMN failures integer NOT NULL DEFAULT 0;
ALTER TABLE source_pace ADD COLUMN failing_since timestamptz;
ALTER TABLE source_pace ADD COLUMN held_until timestamptz;
ALTER TABLE source_pace ADD COLUMN last_error text;
