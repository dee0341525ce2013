-- Nothing reads a member's real name (PaperPing names members by their display name): it is no longer kept.
ALTER TABLE members DROP COLUMN real_name;
