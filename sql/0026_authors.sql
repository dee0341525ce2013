-- The group's own papers and the authors it follows: the Semantic Scholar authors a channel follows
-- (`/paperping follow`), when each author's papers were last asked for, and the new papers noticed for a channel
-- (a followed author's, to be posted as a candidate; a member's own, announced when they let the channel hear).

CREATE TABLE followed_authors (
    team_id       text NOT NULL,
    channel_id    text NOT NULL,
    s2_author_id  text NOT NULL,
    name          text NOT NULL,
    user_id       text,                      -- the member who asked to follow (NULL once they are forgotten)
    followed_at   timestamptz NOT NULL,
    PRIMARY KEY (team_id, channel_id, s2_author_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);

-- Public: when an author's papers were last asked for, and which were seen then.
CREATE TABLE author_checks (
    s2_author_id  text PRIMARY KEY,
    checked_at    timestamptz NOT NULL,
    seen          text[] NOT NULL DEFAULT '{}'
);

CREATE TABLE author_news (
    id            bigserial PRIMARY KEY,
    team_id       text NOT NULL,
    channel_id    text NOT NULL,
    paper_id      bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    s2_author_id  text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('followed', 'member')),
    user_id       text,                      -- kind 'member': whose paper it is
    noticed_at    timestamptz NOT NULL,
    status        text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'posted', 'dropped')),
    posted_at     timestamptz,
    UNIQUE (team_id, channel_id, paper_id, kind),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX author_news_waiting ON author_news (team_id, channel_id) WHERE status = 'waiting';

-- the channels where a member lets the group hear of their new papers (`/paperping my-papers on`)
ALTER TABLE member_settings ADD COLUMN my_papers_channels text[] NOT NULL DEFAULT '{}';
