-- What members said of PaperPing's answers about their channels' history (the feedback buttons under a streamed
-- answer): one mark a member an answer, the latest click kept. about_channel_id is the channel the answer was
-- drawn from when it was one (NULL for an answer over several); `forget-me` and a workspace purge delete the rows.
CREATE TABLE answer_feedback (
    team_id           text NOT NULL,
    answer_channel_id text NOT NULL,
    answer_ts         text NOT NULL,
    user_id           text NOT NULL,
    about_channel_id  text,
    helpful           boolean NOT NULL,
    marked_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, answer_channel_id, answer_ts, user_id)
);
CREATE INDEX answer_feedback_about ON answer_feedback (team_id, about_channel_id, marked_at);
