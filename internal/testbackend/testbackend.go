// Package testbackend runs a package's tests on every store backend: on the embedded
// SQLite store in the test process, then on PostgreSQL in a second run of the same
// test binary. Tests ask it for a fresh store, or where one lives; they are written
// once and run on both.
package testbackend

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/internal/testenv"
	"github.com/tidings-dev/tidings/postgres"
	"github.com/tidings-dev/tidings/sqlite"
)

// EnvBackend names the backend of a test run: "sqlite" (the default) or "postgres".
const EnvBackend = "TIDINGS_TEST_BACKEND"

// Backends are the store backends, in the order their runs go.
var Backends = []string{"sqlite", "postgres"}

// Name is the backend this test run uses.
func Name() string {
	if b := os.Getenv(EnvBackend); b != "" {
		return b
	}
	return "sqlite"
}

// Postgres reports whether this run is on PostgreSQL.
func Postgres() bool { return Name() == "postgres" }

// Parallel is how many of a package's parallel tests run at once unless -parallel says
// otherwise: several times the CPUs, since most of them wait (on a server, a browser,
// a commit) more than they compute. On 2 cores, web's tests took 74 s at 4, 57 s at 8
// and 78 s at 16.
var Parallel = max(8, 4*runtime.GOMAXPROCS(0))

// Main runs the tests on SQLite and, side by side, this test binary again, with the
// same flags, on PostgreSQL; the second run's output follows the first's, so that
// go test's reports (and -json) read one run after the other. Most tests wait (on a
// server, a browser, a commit) more than they compute, so the two runs share the CPUs
// well. Without TIDINGS_TEST_DATABASE_URL the second run is skipped with a message, or
// fails where TIDINGS_REQUIRE_SERVICES=1 (CI).
func Main(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(Parallel))
	}
	var pg *exec.Cmd
	var pgOut, pgErr bytes.Buffer
	if os.Getenv(EnvBackend) == "" && os.Getenv(pgtest.EnvURL) != "" {
		pg = exec.Command(os.Args[0], os.Args[1:]...)
		pg.Env = append(os.Environ(), EnvBackend+"=postgres")
		pg.Stdout, pg.Stderr = &pgOut, &pgErr
		if err := pg.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: start the PostgreSQL run:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if emptyStore.dir != "" {
		os.RemoveAll(emptyStore.dir)
	}
	if os.Getenv(EnvBackend) != "" {
		os.Exit(code)
	}
	if pg == nil {
		if testenv.Required() {
			fmt.Fprintln(os.Stderr, "FAIL: PostgreSQL is required (TIDINGS_REQUIRE_SERVICES=1) but "+pgtest.EnvURL+" is not set")
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "testbackend: the PostgreSQL run is skipped: set "+pgtest.EnvURL+
			"=postgres://user@host:5432/db?sslmode=disable to run these tests on PostgreSQL too")
		os.Exit(code)
	}
	err := pg.Wait()
	fmt.Fprintln(os.Stderr, "testbackend: the tests on PostgreSQL (run beside those on SQLite):")
	os.Stdout.Write(pgOut.Bytes())
	os.Stderr.Write(pgErr.Bytes())
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: on PostgreSQL:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// Location returns where a fresh, empty store of this run's backend lives: a data
// folder, or a postgres:// URL of a schema of its own. Both are removed after the test.
func Location(t testing.TB) string {
	t.Helper()
	if Postgres() {
		return pgtest.URL(t)
	}
	dir := t.TempDir()
	if err := copyEmptyStore(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// emptyStore is an empty SQLite store made once per test binary by the store's own
// Open (its migrations), which a fresh location gets a copy of: under -race, migrating
// a new store costs about half a second; copying its file, a millisecond.
var emptyStore struct {
	once sync.Once
	dir  string
	err  error
}

func copyEmptyStore(dir string) error {
	emptyStore.once.Do(func() {
		d, err := os.MkdirTemp("", "tidings-empty-store-")
		if err != nil {
			emptyStore.err = err
			return
		}
		emptyStore.dir = d
		s, err := sqlite.Open(context.Background(), d, sqlite.Options{})
		if err != nil {
			emptyStore.err = err
			return
		}
		emptyStore.err = s.Close()
	})
	if emptyStore.err != nil {
		return fmt.Errorf("the empty store to copy: %w", emptyStore.err)
	}
	b, err := os.ReadFile(filepath.Join(emptyStore.dir, sqlite.FileName))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, sqlite.FileName), b, 0o600)
}

// IsURL reports whether a location is a database URL rather than a data folder.
func IsURL(loc string) bool {
	return strings.HasPrefix(loc, "postgres://") || strings.HasPrefix(loc, "postgresql://")
}

// Open opens the store at a location.
func Open(t testing.TB, loc string) tidings.Store {
	t.Helper()
	var s tidings.Store
	var err error
	if IsURL(loc) {
		// A small pool: tests run side by side, two packages at a time, within
		// PostgreSQL's default 100 connections.
		s, err = postgres.Open(context.Background(), loc, postgres.Options{MaxConns: 6})
	} else {
		s, err = sqlite.Open(context.Background(), loc, sqlite.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// New opens a fresh, empty store of this run's backend.
func New(t testing.TB) tidings.Store {
	t.Helper()
	return Open(t, Location(t))
}

// Once skips, in the PostgreSQL run, a test whose subject is not the store — the
// dashboard in a browser, an SDK, a command's flags — so that it runs once, on SQLite.
// What it stores is tested on both stores by the store's own tests and the API's.
func Once(t testing.TB) {
	t.Helper()
	if Postgres() {
		t.Skip("not about the store: runs once, in the SQLite run")
	}
}

// SQLiteOnly skips a test about the embedded store itself (its data folder, its file)
// in the PostgreSQL run.
func SQLiteOnly(t testing.TB) {
	t.Helper()
	if Postgres() {
		t.Skip("about the embedded SQLite store")
	}
}
