-- +goose Up
-- A project's board (its Charts page): saved charts and funnels, in the order a member
-- arranged them. position is dense, 0 to n-1 within the project (board.go keeps it so).
CREATE TABLE cards (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL, -- chart or funnel
    title      TEXT    NOT NULL,
    params     TEXT    NOT NULL, -- the question as a URL query, as written
    wide       INTEGER NOT NULL DEFAULT 0,
    position   INTEGER NOT NULL,
    created_at INTEGER NOT NULL  -- unix ms
);
CREATE INDEX cards_project ON cards (project_id, position);

-- +goose Down
DROP TABLE cards;
