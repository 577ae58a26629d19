-- +goose Up
-- Readiness writes and frees a blob here to learn whether the disk takes writes again.
CREATE TABLE write_probe (data BLOB);

-- +goose Down
DROP TABLE write_probe;
