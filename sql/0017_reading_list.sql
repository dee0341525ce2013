-- The channel's reading list and the feedback buttons on PaperPing's posts.
-- A click on a post's button (relevant, not for us, save) is stored in `reactions` under a name no Slack emoji can
-- have ('button:relevant', ...), so that it counts everywhere a reaction does. A paper saved with the button or a
-- :bookmark: reaction is on the list through that reaction (and leaves it with the reaction, the message, or the
-- member's forget-me); one saved by `/paperping save LINK` is kept here.
CREATE TABLE saved_papers (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    paper_id    bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    user_id     text NOT NULL,
    saved_at    timestamptz NOT NULL,
    PRIMARY KEY (team_id, channel_id, paper_id, user_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX saved_papers_user ON saved_papers (team_id, user_id);

-- `/paperping unsave LINK`: the paper is off the list for every save made before this moment.
CREATE TABLE reading_list_removals (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    paper_id    bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    removed_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, channel_id, paper_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);

-- A channel's Zotero group library (`/paperping zotero GROUP_ID [COLLECTION]`), and what was added to it.
ALTER TABLE channel_settings ADD COLUMN zotero_group_id text;
ALTER TABLE channel_settings ADD COLUMN zotero_collection text;

CREATE TABLE zotero_items (
    team_id      text NOT NULL,
    channel_id   text NOT NULL,
    paper_id     bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    group_id     text NOT NULL,
    item_key     text,
    pushed_at    timestamptz,
    failures     integer NOT NULL DEFAULT 0,
    retry_at     timestamptz,
    last_error   text,
    PRIMARY KEY (team_id, channel_id, paper_id, group_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
