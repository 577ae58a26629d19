// Package pgtest gives tests a fresh, empty PostgreSQL database of their own: a new
// schema in the database named by TIDINGS_TEST_DATABASE_URL, dropped at the end.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings/internal/testenv"
)

// EnvURL names the variable that points the tests at a PostgreSQL database.
const EnvURL = "TIDINGS_TEST_DATABASE_URL"

// BaseURL returns the test database's URL, or skips the test when there is none (and
// fails it where TIDINGS_REQUIRE_SERVICES=1, as in CI).
func BaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u != "" {
		return u
	}
	testenv.Need(t, "no PostgreSQL: set %s=postgres://user@host:5432/db?sslmode=disable to run the PostgreSQL backend's tests", EnvURL)
	return ""
}

// URL makes a new schema and returns a URL whose connections use it: an empty store
// for one test, removed when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			return
		}
		defer c.Close(ctx)
		c.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
	})
	return WithSchema(t, base, schema)
}

// AppName is the application_name of the connections made with a URL from URL: a
// test may end its own connections (pg_terminate_backend) and nobody else's.
func AppName(url string) string {
	i := strings.Index(url, "search_path=")
	if i < 0 {
		return "tidings"
	}
	return "tidings_" + strings.SplitN(url[i+len("search_path="):], "&", 2)[0]
}

// Terminate ends the connections of the store at url (those whose query matches
// like, e.g. "%" for all, "LISTEN%" for a relay's), as a database restart would, and
// returns how many it ended.
func Terminate(t testing.TB, url, like string) int {
	t.Helper()
	ctx := context.Background()
	conn := connect(t)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE $2`, AppName(url), like).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// WaitListening waits until n connections of the store at url are listening for
// notifications (a relay's LISTEN has run), or fails the test after 30 seconds.
func WaitListening(t testing.TB, url string, n int) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t)
	var got int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND query LIKE 'LISTEN%' AND state = 'idle'`, AppName(url)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
	}
	t.Fatalf("%d of %d relays listening after 30 s", got, n)
}

// connect opens a connection to the test database itself (no schema of a test's),
// closed when the test ends.
func connect(t testing.TB) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), BaseURL(t))
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvURL, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// WithSchema returns base with its connections' search_path set to schema.
func WithSchema(t testing.TB, base, schema string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", "tidings_"+schema)
	u.RawQuery = q.Encode()
	return u.String()
}
