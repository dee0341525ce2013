-- Beyond one post: context on members' shares, digests, personal picks and the group's tone.

-- `/paperping context on|off`: a short reply in the thread of each paper a member shares here.
ALTER TABLE channel_settings ADD COLUMN share_context boolean NOT NULL DEFAULT false;
-- `/paperping frequency weekly-digest [N]`: N papers (3 to 7) in one message a week instead of single posts.
ALTER TABLE channel_settings ADD COLUMN digest_size integer CHECK (digest_size BETWEEN 3 AND 7);
ALTER TABLE channel_settings DROP CONSTRAINT channel_settings_frequency_check;
ALTER TABLE channel_settings ADD CONSTRAINT channel_settings_frequency_check
    CHECK (frequency IN ('daily', 'every-other-day', 'weekly', 'weekly-digest'));
-- `/paperping length short|normal` and `/paperping language CODE` (the `llm` style writes in it).
ALTER TABLE channel_settings ADD COLUMN explanation_length text NOT NULL DEFAULT 'normal'
    CHECK (explanation_length IN ('short', 'normal'));
ALTER TABLE channel_settings ADD COLUMN language text;
-- the length a post was written to, for the monthly report's "which lengths drew answers"
ALTER TABLE recommendations ADD COLUMN explanation_length text;

-- One row per member share PaperPing considered replying to: at most one reply per message, whatever Slack
-- sends again. `waiting` until its papers are looked up; then `replied` (with the reply's ts) or `silent`
-- (nothing grounded to add, with why).
CREATE TABLE share_replies (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    message_ts  text NOT NULL,
    status      text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'sending', 'replied', 'silent')),
    reply_ts    text,
    reason      text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    done_at     timestamptz,
    PRIMARY KEY (team_id, channel_id, message_ts),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX share_replies_waiting ON share_replies (created_at) WHERE status IN ('waiting', 'sending');

-- `/paperping for-me on|off`: a member's weekly direct message of papers, and the papers it already sent.
ALTER TABLE member_settings ADD COLUMN picks_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE member_settings ADD COLUMN picks_next_at timestamptz;
CREATE TABLE personal_picks (
    team_id     text NOT NULL,
    user_id     text NOT NULL,
    paper_id    bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    channel_id  text NOT NULL,
    sent_at     timestamptz NOT NULL,
    PRIMARY KEY (team_id, user_id, paper_id)
);
