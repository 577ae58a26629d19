-- +goose Up
-- Scope tokens begin with _ (_p7 _c12 _t40 _u…), which the tokenizer keeps inside a
-- token and which no query word and no indexed text holds (searchText): a search for the
-- word p1 read the posting list of project 1's token p1, every event of the project,
-- to find nothing (docs/decisions.md). The table is made anew with that tokenizer, and
-- every event is handed to the search backfill (search.go), which indexes the stored
-- events at the next start, newest first: events up to search_backfill.next_seq are
-- still to index, those above the indexer's watermark are the indexer's, as ever.
DROP TABLE events_fts;
CREATE VIRTUAL TABLE events_fts USING fts5(text, scope, content='', contentless_delete=1,
    tokenize="unicode61 remove_diacritics 2 tokenchars '_'");
-- As migration 16 set them on the table dropped.
INSERT INTO events_fts (events_fts, rank) VALUES ('automerge', 16);
INSERT INTO events_fts (events_fts, rank) VALUES ('crisismerge', 64);
UPDATE search_backfill SET next_seq = max(next_seq, (SELECT seq FROM search_indexed));
-- The index's terms, each with the number of rows that hold it, for tidings check
-- (check_search.go). A view over events_fts's index, storing nothing; made here, not by
-- the check, because the check opens the store read-only (temp tables included).
CREATE VIRTUAL TABLE search_vocab USING fts5vocab(events_fts, row);

-- +goose Down
DROP TABLE search_vocab;
-- The old tokenizer, and every event to the backfill again (the old code reads tokens
-- without the mark).
DROP TABLE events_fts;
CREATE VIRTUAL TABLE events_fts USING fts5(text, scope, content='', contentless_delete=1,
    tokenize='unicode61 remove_diacritics 2');
INSERT INTO events_fts (events_fts, rank) VALUES ('automerge', 16);
INSERT INTO events_fts (events_fts, rank) VALUES ('crisismerge', 64);
UPDATE search_backfill SET next_seq = max(next_seq, (SELECT seq FROM search_indexed));
