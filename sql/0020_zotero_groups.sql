-- A Zotero group library belongs to one workspace: the first that binds it (`/paperping zotero GROUP_ID`), or the
-- one the operator's allow-list (PAPERPING_ZOTERO_GROUPS) names; `paperping zotero-group` moves it. A channel of
-- another workspace cannot send its reading list there, and is told so without the library being asked anything.
CREATE TABLE zotero_groups (
    group_id  text PRIMARY KEY,
    team_id   text NOT NULL REFERENCES teams ON DELETE CASCADE,
    bound_at  timestamptz NOT NULL DEFAULT now()
);
