package sqlite_test

import (
	"context"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/sqlite"
	"github.com/tidings-dev/tidings/storetest"
)

// TestHooks runs the shared suite of inbound hooks and their delivery logs.
func TestHooks(t *testing.T) {
	t.Parallel()
	storetest.Hooks(t, func(t *testing.T) tidings.Store {
		db, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}
