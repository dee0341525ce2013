-- What Slack said is gone, remembered for 30 days (pruned with the events already seen), so that what arrives out of
-- order, or again, cannot bring it back: a message event handled after the message's deletion, an edit after it,
-- an added reaction heard after its removal, a backfill or an export read after them.
-- A deleted message or thread: no member's data, only where and which message it was.
CREATE TABLE deleted_messages (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    ts          text NOT NULL,
    deleted_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, channel_id, ts)
);
CREATE INDEX deleted_messages_time ON deleted_messages (deleted_at);

-- A reaction taken off, with the time Slack gave the removal: an add heard later but made before it is late and
-- ignored; one made after it is a new reaction and takes the row away.
CREATE TABLE removed_reactions (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    ts          text NOT NULL,
    user_id     text NOT NULL,
    emoji       text NOT NULL,
    removed_at  timestamptz NOT NULL,
    PRIMARY KEY (team_id, channel_id, ts, user_id, emoji)
);
CREATE INDEX removed_reactions_time ON removed_reactions (removed_at);
CREATE INDEX removed_reactions_member ON removed_reactions (team_id, user_id);

-- A member put on the forget list leaves no removed reaction behind (none of theirs is written afterwards).
CREATE FUNCTION forget_removed_reactions() RETURNS trigger AS $$
BEGIN
    DELETE FROM removed_reactions WHERE team_id = NEW.team_id AND user_id = NEW.user_id;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER forgotten_members_removed_reactions AFTER INSERT ON forgotten_members
    FOR EACH ROW EXECUTE FUNCTION forget_removed_reactions();

-- Which channel brought a paper in is also read from saves and personal picks (a paper only another channel saved
-- is not this channel's to see): by paper.
CREATE INDEX saved_papers_paper ON saved_papers (paper_id);
CREATE INDEX personal_picks_paper ON personal_picks (paper_id);
