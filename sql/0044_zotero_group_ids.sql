-- Zotero group ids as Zotero reads them, a number: `04242` is group 4242. Before 0044's release a channel could
-- bind a group with leading zeros; the push has since sent such a binding nothing. Each is now written as its
-- number, so the lab's reading list goes on reaching its library after the upgrade.

-- One holder per number: the workspace that bound the number itself keeps it, else the one that bound a written
-- form of it first. The push checks the holder, so a channel whose form lost sends nothing there, as before.
DELETE FROM zotero_groups z
 WHERE z.group_id ~ '^[0-9]+$' AND EXISTS (
       SELECT 1 FROM zotero_groups c
        WHERE c.group_id ~ '^[0-9]+$' AND c.group_id <> z.group_id
          AND ltrim(c.group_id, '0') = ltrim(z.group_id, '0')
          AND (c.group_id ~ '^0', c.bound_at, c.group_id) < (z.group_id ~ '^0', z.bound_at, z.group_id));
UPDATE zotero_groups SET group_id = ltrim(group_id, '0') WHERE group_id ~ '^0+[1-9][0-9]*$';

UPDATE channel_settings SET zotero_group_id = ltrim(zotero_group_id, '0')
 WHERE zotero_group_id ~ '^0+[1-9][0-9]*$';

-- One row per paper and library: the one that was added to Zotero, else the number's own, so no paper is added
-- twice.
DELETE FROM zotero_items z
 WHERE z.group_id ~ '^[0-9]+$' AND EXISTS (
       SELECT 1 FROM zotero_items c
        WHERE (c.team_id, c.channel_id, c.paper_id) = (z.team_id, z.channel_id, z.paper_id)
          AND c.group_id ~ '^[0-9]+$' AND c.group_id <> z.group_id
          AND ltrim(c.group_id, '0') = ltrim(z.group_id, '0')
          AND (c.pushed_at IS NULL, c.group_id ~ '^0', c.group_id) < (z.pushed_at IS NULL, z.group_id ~ '^0', z.group_id));
UPDATE zotero_items SET group_id = ltrim(group_id, '0') WHERE group_id ~ '^0+[1-9][0-9]*$';
