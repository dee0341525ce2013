-- Who may take what off a reading list: a member's `unsave` takes back their own saves only (up to that moment);
-- taking a paper off for everyone (`reading_list_removals`) is for the channel's stewards.
CREATE TABLE reading_list_unsaves (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    paper_id    bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    user_id     text NOT NULL,
    removed_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, channel_id, paper_id, user_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
-- `/paperping export` uploads a file to the channel: once per channel every few minutes, like the report.
ALTER TABLE channel_settings ADD COLUMN export_asked_at timestamptz;
