-- +goose Up
-- A project's users and groups, as identify and group calls describe them. Properties
-- are a JSON object in the order first sent (like events' tags).
CREATE TABLE people (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id     TEXT    NOT NULL,
    properties  TEXT    NOT NULL DEFAULT '{}',
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    events      INTEGER NOT NULL DEFAULT 0, -- events received with this user_id
    UNIQUE (project_id, user_id)
);
CREATE INDEX people_recent ON people (project_id, last_seen, id);
CREATE TABLE groups (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    group_id    TEXT    NOT NULL,
    properties  TEXT    NOT NULL DEFAULT '{}',
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    UNIQUE (project_id, group_id)
);
CREATE TABLE group_members (
    group_ref  INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
    person_ref INTEGER NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    PRIMARY KEY (group_ref, person_ref)
) WITHOUT ROWID;
CREATE INDEX group_members_person ON group_members (person_ref, group_ref);

-- +goose Down
DROP TABLE group_members;
DROP TABLE groups;
DROP TABLE people;
