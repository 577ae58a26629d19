package sqlite

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/tidings-dev/tidings"
)

// BenchmarkCheckParts times each part of Check alone, one after the other, on a large
// store made by bench/seed (TIDINGS_BENCH_STORE=/tmp/big; -benchtime 1x):
//
//	go run ./bench/seed -data /tmp/big -events 1250000 && go run ./bench/seed -data /tmp/big -multiply 8
//	TIDINGS_BENCH_STORE=/tmp/big go test ./sqlite -run '^$' -bench CheckParts -benchtime 1x
func BenchmarkCheckParts(b *testing.B) {
	dir := os.Getenv("TIDINGS_BENCH_STORE")
	if dir == "" {
		b.Skip("set TIDINGS_BENCH_STORE to the data folder of a large store (bench/seed)")
	}
	ctx := context.Background()
	db, err := Open(ctx, dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	snap, err := db.snapshot(ctx, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer snap.close()
	tx := snap.txs[0]
	var maxSeq, maxTag int64
	if err := tx.QueryRow(`SELECT (SELECT max(seq) FROM events), (SELECT max(id) FROM tags)`).Scan(&maxSeq, &maxTag); err != nil {
		b.Fatal(err)
	}
	f, th := newRowHash(), newTagHash()
	channels := map[int64]int64{}
	rows, err := tx.Query(`SELECT id, project_id FROM channels`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var id, project int64
		rows.Scan(&id, &project)
		channels[id] = project
	}
	rows.Close()
	for _, part := range []struct {
		name string
		run  func(tx *sql.Tx, r *tidings.CheckReport) error
	}{
		{"events", func(tx *sql.Tx, r *tidings.CheckReport) error {
			_, err := passEvents(ctx, tx, 0, maxSeq, f, th, channels)
			return err
		}},
		{"tag_index", func(tx *sql.Tx, r *tidings.CheckReport) error {
			_, err := passTagIndex(ctx, tx, 0, maxTag, f, th)
			return err
		}},
		{"search", func(tx *sql.Tx, r *tidings.CheckReport) error { return checkSearchRows(ctx, tx, r) }},
		{"search.scope", func(tx *sql.Tx, r *tidings.CheckReport) error {
			return checkScopeSums(ctx, tx, r, `SELECT 'p', id FROM projects`)
		}},
		{"search.channel", func(tx *sql.Tx, r *tidings.CheckReport) error {
			return checkScopeSums(ctx, tx, r, `SELECT 'c', id FROM channels`)
		}},
		{"search.text", func(tx *sql.Tx, r *tidings.CheckReport) error { return checkSearchText(ctx, tx, r) }},
		{"search.tag", func(tx *sql.Tx, r *tidings.CheckReport) error { return checkSearchTags(ctx, tx, r) }},
		{"hour_count", func(tx *sql.Tx, r *tidings.CheckReport) error { return checkHourCounts(ctx, tx, r) }},
		{"tag_hour", func(tx *sql.Tx, r *tidings.CheckReport) error { return checkTagHours(ctx, tx, tidings.TagRollup, r) }},
	} {
		b.Run(part.name, func(b *testing.B) {
			for b.Loop() {
				if err := part.run(tx, &tidings.CheckReport{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
