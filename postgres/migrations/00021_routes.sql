-- +goose Up
-- Members' routes and digests, a project's escalation delay, an invitation's email
-- (issue 39). Column for column as in the embedded store, so that migrate-store copies
-- them as they are. Times are unix milliseconds (UTC), delays seconds.

-- A member's choice of how a project's events reach them (channel_id NULL) or one
-- channel's: one row per user, project and channel-or-none. A row names its account
-- so that an account's routes are read in one range (AccountRoutes, at expansion).
CREATE TABLE member_routes (
    account_id BIGINT  NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id    BIGINT  NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    project_id BIGINT  NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    channel_id BIGINT  REFERENCES channels(id) ON DELETE CASCADE, -- NULL: the project's
    push       BOOLEAN NOT NULL,
    email      BOOLEAN NOT NULL
);
-- coalesce: NULLS NOT DISTINCT needs PostgreSQL 15, and 13 is supported.
CREATE UNIQUE INDEX member_routes_choice ON member_routes (user_id, project_id, (coalesce(channel_id, 0)));
CREATE INDEX member_routes_account ON member_routes (account_id);
CREATE INDEX member_routes_project ON member_routes (project_id);
CREATE INDEX member_routes_channel ON member_routes (channel_id) WHERE channel_id IS NOT NULL;

-- A member's digest of a project; last_period is the end of the last period whose
-- digest was queued (0: none yet).
CREATE TABLE member_digests (
    account_id  BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    every       TEXT   NOT NULL CHECK (every IN ('daily', 'weekly')),
    last_period BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, project_id)
);
CREATE INDEX member_digests_project ON member_digests (project_id);
CREATE INDEX member_digests_account ON member_digests (account_id);

-- Constant defaults: PostgreSQL 11 and later add them without rewriting the tables.
ALTER TABLE projects ADD COLUMN escalate_after INTEGER NOT NULL DEFAULT 0; -- seconds; 0: never
ALTER TABLE invites ADD COLUMN email TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE invites DROP COLUMN email;
ALTER TABLE projects DROP COLUMN escalate_after;
DROP TABLE member_digests;
DROP TABLE member_routes;
