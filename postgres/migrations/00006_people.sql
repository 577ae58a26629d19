-- +goose Up
-- A project's users and groups, as identify and group calls describe them. Properties
-- are a JSON object in the order first sent (like events' tags).
CREATE TABLE people (
    id          BIGSERIAL PRIMARY KEY,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id     TEXT   NOT NULL,
    properties  TEXT   NOT NULL DEFAULT '{}',
    first_seen  BIGINT NOT NULL,
    last_seen   BIGINT NOT NULL,
    events      BIGINT NOT NULL DEFAULT 0, -- events received with this user_id
    UNIQUE (project_id, user_id)
);
CREATE INDEX people_recent ON people (project_id, last_seen, id);
CREATE TABLE groups (
    id          BIGSERIAL PRIMARY KEY,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    group_id    TEXT   NOT NULL,
    properties  TEXT   NOT NULL DEFAULT '{}',
    first_seen  BIGINT NOT NULL,
    last_seen   BIGINT NOT NULL,
    UNIQUE (project_id, group_id)
);
CREATE TABLE group_members (
    group_ref  BIGINT NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
    person_ref BIGINT NOT NULL REFERENCES people(id) ON DELETE CASCADE,
    PRIMARY KEY (group_ref, person_ref)
);
CREATE INDEX group_members_person ON group_members (person_ref, group_ref);

-- +goose Down
DROP TABLE group_members;
DROP TABLE groups;
DROP TABLE people;
