package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/postgres"
	"github.com/tidings-dev/tidings/storetest"
)

func open(t *testing.T) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) tidings.Store { return open(t) })
}

// TestOpenWithoutSchema: a URL whose search_path names no existing schema gets an
// error that says what to do, not the migrations' "no schema has been selected".
func TestOpenWithoutSchema(t *testing.T) {
	t.Parallel()
	url := pgtest.WithSchema(t, pgtest.BaseURL(t), "t_never_created")
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err == nil {
		db.Close()
		t.Fatal("opened a store in a schema that does not exist")
	}
	if !strings.Contains(err.Error(), "t_never_created") || !strings.Contains(err.Error(), "CREATE SCHEMA") {
		t.Fatalf("error %q does not name the schema and the fix", err)
	}
}

// TestStoreTagRollup runs the store's tests, the concurrent workload among them, with
// every tag of 3 events or more rolled: its hourly counts kept through racing batches,
// deletions, purges and deleted channels and projects, and checked at the end.
func TestStoreTagRollup(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) tidings.Store {
		db := open(t)
		postgres.SetTagRollup(db, 3)
		return db
	})
}
