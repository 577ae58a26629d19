-- +goose Up
-- A project's board (its Charts page): saved charts and funnels, each at its place.
-- Positions are dense, 0 to n-1 per project; whoever adds, moves or deletes a card
-- locks the project's row first (as for its channels' and insights' caps), so that
-- the board never holds more than tidings.MaxBoardCards nor two cards at one place.
CREATE TABLE cards (
    id          BIGSERIAL PRIMARY KEY,
    project_id  BIGINT  NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    params      TEXT    NOT NULL,
    wide        BOOLEAN NOT NULL DEFAULT false,
    position    INTEGER NOT NULL,
    created_at  BIGINT  NOT NULL
);
CREATE INDEX cards_project_position ON cards (project_id, position);

-- +goose Down
DROP TABLE cards;
