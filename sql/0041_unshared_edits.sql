-- An edit that took a message's last paper link out takes the share and its thread out of the base, as a deletion
-- does, and is remembered the same way, with the time of the edit: a copy of the message edited before then (an
-- export or a history page taken before the edit, the message event heard after it) is older and is not stored;
-- a copy edited later (a link put back) is. NULL: the message was deleted, and no copy of it is stored.
ALTER TABLE deleted_messages ADD COLUMN edited_at timestamptz;
