package sqlite_test

import (
	"context"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/sqlite"
	"github.com/tidings-dev/tidings/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) tidings.Store {
		// Tags of 25 events are counted per hour: the suite's charts and workload read
		// and keep those counts, as a big store's do.
		db, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{TagRollup: 25})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

// TestDurabilitySettings guards the promise that an acknowledged write survives a crash
// and power loss: WAL with synchronous=FULL on the connection that commits.
func TestDurabilitySettings(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mode, sync, fk := db.Pragmas(t.Context())
	if mode != "wal" || sync != 2 || fk != 1 {
		t.Fatalf("journal_mode=%s synchronous=%d foreign_keys=%d, want wal, 2 (FULL), 1", mode, sync, fk)
	}
}
