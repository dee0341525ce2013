-- No member can make PaperPing work without bound: a member's cooldown on each costly request (`for-me now`,
-- `like` and the shortcut), and the LLM calls made for each member and each channel, per hour.
CREATE TABLE member_cooldowns (
    team_id  text NOT NULL REFERENCES teams ON DELETE CASCADE,
    user_id  text NOT NULL,
    kind     text NOT NULL,
    until    timestamptz NOT NULL,
    PRIMARY KEY (team_id, user_id, kind)
);
-- one row per (member, hour) with channel_id '' and one per (channel, hour) with user_id ''
CREATE TABLE llm_usage (
    team_id     text NOT NULL REFERENCES teams ON DELETE CASCADE,
    channel_id  text NOT NULL DEFAULT '',
    user_id     text NOT NULL DEFAULT '',
    hour        timestamptz NOT NULL,
    calls       integer NOT NULL DEFAULT 0,
    PRIMARY KEY (team_id, channel_id, user_id, hour)
);
