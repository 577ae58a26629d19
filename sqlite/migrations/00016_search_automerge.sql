-- +goose Up
-- FTS5 merges a level's segments once it holds 16 of them, not 4: about half the levels,
-- so each row is rewritten about half as often, 8% of the CPU of a publish; searches at
-- 700,000 events took as long (docs/performance.md). Merges stay incremental: a level is
-- merged in one go (a "crisis" merge, which would hold up the indexer's step and the
-- publishes behind it) only past 64 segments.
INSERT INTO events_fts (events_fts, rank) VALUES ('automerge', 16);
INSERT INTO events_fts (events_fts, rank) VALUES ('crisismerge', 64);

-- +goose Down
INSERT INTO events_fts (events_fts, rank) VALUES ('automerge', 4);
INSERT INTO events_fts (events_fts, rank) VALUES ('crisismerge', 16);
