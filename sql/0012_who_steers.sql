-- Who may change what a channel gets: the member who invited PaperPing there, and whether the channel's
-- settings are locked to that member and the workspace's admins (`/paperping lock`).
ALTER TABLE channel_settings
    ADD COLUMN invited_by  text,
    ADD COLUMN locked      boolean NOT NULL DEFAULT false;
