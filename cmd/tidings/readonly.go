package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
	"github.com/tidings-dev/tidings/sqlite"
)

// The commands that only read (check, and the lists) open the store read-only: no
// migration, no search indexing, no writer, nothing written to the data folder or the
// database. A check that mended what it found (the indexer catching up, a migration
// rebuilding a table) would report damage that is gone when looked at again, and would
// write beside a running server, or to a store the operator meant to examine as it is.

// openReadOnly opens the store of the configuration for reading only; it refuses one
// whose schema is not this version's.
func openReadOnly(ctx context.Context, c Config) (tidings.Store, error) {
	return openReadOnlyFor(ctx, c, false)
}

// openReadOnlyFor is openReadOnly; fullCheck has a PostgreSQL store's Check compare
// every search vector rather than a sample (tidings check --full).
func openReadOnlyFor(ctx context.Context, c Config, fullCheck bool) (tidings.Store, error) {
	if err := storeExists(c); err != nil {
		return nil, err
	}
	if c.DatabaseURL != "" {
		return postgres.OpenReadOnly(ctx, c.DatabaseURL, postgres.Options{MaxConns: 2, FullCheck: fullCheck})
	}
	return sqlite.OpenReadOnly(ctx, c.Data, sqlite.Options{})
}

// storeExists refuses a --database that is not a PostgreSQL URL, and a data folder that
// does not exist: only serve makes one, and a command pointed at the wrong place says so.
func storeExists(c Config) error {
	if c.DatabaseURL != "" {
		if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
			return errors.New("--database must be a postgres://user:password@host:5432/dbname URL")
		}
		return nil
	}
	if _, err := os.Stat(c.Data); errors.Is(err, fs.ErrNotExist) {
		abs, _ := filepath.Abs(c.Data)
		return fmt.Errorf("no data folder at %s: give the server's folder with --data DIR (or TIDINGS_DATA), or --database URL", abs)
	}
	return nil
}

// withReadStore is withStore for a command that only reads.
func withReadStore(ctx context.Context, c *cli, fn func(s tidings.Store) error) error {
	s, err := openReadOnly(ctx, c.cfg)
	if err != nil {
		return err
	}
	return errors.Join(fn(s), s.Close())
}

// withReadAccount is withAccount for a command that only reads.
func withReadAccount(ctx context.Context, c *cli, fn func(s tidings.Store, a *tidings.Account) error) error {
	return withReadStore(ctx, c, func(s tidings.Store) error {
		a, err := findAccount(ctx, s, c.account)
		if err != nil {
			return err
		}
		return fn(s, a)
	})
}
