package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/postgres"
)

// TestOpenReadOnly: a read-only store checks and lists a current schema and can write
// nothing; a schema one migration behind is refused with what to do, and left as it
// was (a read-write open would have applied the migration).
func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	rw, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := testbackend.Seed(t, rw, "acme")
	f.Publish(t, tidings.NewEvent{Event: "Paid", Parser: tidings.ParserText, UserID: "u-1"}, tidings.NewEvent{Event: "Paid again", Parser: tidings.ParserText})
	rw.Close()

	ro, err := postgres.OpenReadOnly(ctx, url, postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ro.Check(ctx)
	if err != nil || !r.OK() || r.Events != 2 {
		t.Fatalf("check of a consistent store: %v, %+v", err, r)
	}
	if as, err := ro.ListAccounts(ctx); err != nil || len(as) != 1 {
		t.Fatalf("accounts: %v, %v", as, err)
	}
	if _, err := ro.CreateAccount(ctx, "intruder"); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Fatalf("a write through a read-only store: %v", err)
	}
	ro.Close()

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	version := func() (v int64) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	latest := version()
	if _, err := conn.Exec(ctx, `DELETE FROM goose_db_version WHERE version_id = $1`, latest); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.OpenReadOnly(ctx, url, postgres.Options{MaxConns: 2})
	if want := fmt.Sprintf("schema is at migration %d, this tidings expects %d", latest-1, latest); err == nil ||
		!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "tidings serve") {
		t.Fatalf("an older schema: %v; want %q", err, want)
	}
	if v := version(); v != latest-1 {
		t.Fatalf("the refused schema was migrated to %d", v)
	}

	empty := pgtest.URL(t)
	if _, err := postgres.OpenReadOnly(ctx, empty, postgres.Options{MaxConns: 2}); err == nil || !strings.Contains(err.Error(), "holds no Tidings store") {
		t.Fatalf("an empty schema: %v", err)
	}
	econn, err := pgx.Connect(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	defer econn.Close(ctx)
	var table *string
	if err := econn.QueryRow(ctx, `SELECT to_regclass('goose_db_version')::text`).Scan(&table); err != nil || table != nil {
		t.Fatalf("refusing an empty schema made %v (%v)", table, err)
	}
}
