package sqlite_test

import (
	"context"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/sqlite"
	"github.com/tidings-dev/tidings/storetest"
)

// TestRoutes runs the shared suite of members' routes and digests, projects'
// escalation and invitations' emails.
func TestRoutes(t *testing.T) {
	t.Parallel()
	storetest.Routes(t, func(t *testing.T) tidings.Store {
		db, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}
