-- A member's latest announcement of a settings change in a channel (`<@member> asked PaperPing to ...`): a change
-- within ten minutes of it is added to that message (edited in Slack) instead of posted anew, so that one member
-- changing settings over and over costs the channel one message, and the group still sees every change.
CREATE TABLE announcements (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    user_id     text NOT NULL,
    ts          text NOT NULL,          -- the announcement's message in the channel
    lines       text[] NOT NULL,        -- what it says, one change a line (PaperPing's own sentences)
    posted_at   timestamptz NOT NULL,   -- when it was first posted: the ten minutes run from here
    PRIMARY KEY (team_id, channel_id, user_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
