-- +goose Up
-- Members' routes (issue 39): how a member is notified of a project's events (channel
-- NULL) or of one channel's: push, email, both or neither. A member who chose nothing
-- has no row (tidings.DefaultRoutes: push). The rows go with their member, project or
-- channel.
CREATE TABLE member_routes (
    account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id INTEGER REFERENCES channels(id) ON DELETE CASCADE, -- NULL: the project's
    push       INTEGER NOT NULL,
    email      INTEGER NOT NULL
);
-- One choice per member, project and channel (or none): NULL is never equal to NULL
-- in a unique index, 0 is.
CREATE UNIQUE INDEX member_routes_one ON member_routes (user_id, project_id, ifnull(channel_id, 0));
CREATE INDEX member_routes_account ON member_routes (account_id);
-- The deletions of a project and of a channel find their rows by these.
CREATE INDEX member_routes_project ON member_routes (project_id);
CREATE INDEX member_routes_channel ON member_routes (channel_id);

-- Members' digests of projects: daily or weekly (off has no row); last_period is the
-- end (unix ms) of the last period whose digest was queued, 0 before the first.
CREATE TABLE member_digests (
    account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    every       TEXT    NOT NULL CHECK (every IN ('daily', 'weekly')),
    last_period INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, project_id)
) WITHOUT ROWID;
CREATE INDEX member_digests_project ON member_digests (project_id);
CREATE INDEX member_digests_account ON member_digests (account_id);

-- A project's escalation order: an unacknowledged urgent event goes to every member
-- this many seconds after it was accepted (0: never). The address an invitation was
-- mailed to ('' when its link was copied by hand). Adding the columns rewrites nothing.
ALTER TABLE projects ADD COLUMN escalate_after INTEGER NOT NULL DEFAULT 0;
ALTER TABLE invites ADD COLUMN email TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE invites DROP COLUMN email;
ALTER TABLE projects DROP COLUMN escalate_after;
DROP TABLE member_digests;
DROP TABLE member_routes;
