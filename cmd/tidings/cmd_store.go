// The commands of the store as a whole: serve, backup, migrate-store.

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/logbuf"
	"github.com/tidings-dev/tidings/sqlite"
)

func backup(ctx context.Context, c *cli, _ []string) error {
	if c.to == "" {
		return errors.New("--to FILE is required: where to write the copy")
	}
	if c.cfg.DatabaseURL != "" {
		return errors.New("backup copies the embedded store; for PostgreSQL use pg_dump")
	}
	if err := storeExists(c.cfg); err != nil {
		return err
	}
	// Read-only, and of whichever schema: the copy is the store as it is, before an
	// upgrade too, and making it writes nothing to the folder.
	db, err := sqlite.OpenReadOnly(ctx, c.cfg.Data, sqlite.Options{AnySchema: true})
	if err != nil {
		return err
	}
	if err := errors.Join(db.Backup(ctx, c.to), db.Close()); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "backed up %s to %s\n", c.cfg.Data, c.to)
	return nil
}

func runServe(ctx context.Context, c *cli, _ []string) error {
	// The log's lines are written in batches (internal/logbuf): a warning or an error
	// at once, the rest within 100 ms, and all at the end.
	lw := logbuf.New(c.stderr)
	defer lw.Close()
	m := &Main{Config: c.cfg, Logger: slog.New(logbuf.Handler(newLogger(lw, c.cfg.LogFormat).Handler(), lw))}
	if err := m.Run(ctx); err != nil {
		return err
	}
	m.Logger.Info("tidings is serving: open "+m.URL(), "url", m.URL(), "data", storeName(c.cfg), "max_connections", m.maxConns)
	if n, err := m.store.CountUsers(ctx); err == nil && n == 0 {
		m.Logger.Info("this store has no account yet: open " + m.URL() + " to create the first one (you become its owner)")
	}
	select {
	case <-ctx.Done():
		m.Logger.Info("shutting down")
	case err := <-m.served:
		m.Close()
		return err
	}
	return m.Close()
}

// storeName is where the store lives, for the log: PostgreSQL, or the data folder's
// absolute path (the default ./tidings-data depends on where the server was started).
func storeName(c Config) string {
	if c.DatabaseURL != "" {
		return "postgres"
	}
	if abs, err := filepath.Abs(c.Data); err == nil {
		return abs
	}
	return c.Data
}

// migrateStore copies the data folder --from into the PostgreSQL database --to, from
// one snapshot, and checks every table's count. Stop the server first: what it accepts
// after the snapshot would stay behind.
func migrateStore(ctx context.Context, c *cli, _ []string) error {
	if c.from == "" || c.to == "" {
		return errors.New("--from DIR and --to postgres://… are both required")
	}
	file := filepath.Join(c.from, sqlite.FileName)
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("%s holds no Tidings store (no %s)", c.from, sqlite.FileName)
	}
	// Opening it brings the folder's schema up to this version's.
	src, err := openStore(ctx, Config{Data: c.from}, nil, 2, false) // PostgreSQL indexes the copy for search itself
	if err != nil {
		return err
	}
	defer src.Close()
	cfg := c.cfg
	cfg.DatabaseURL = c.to
	dst, err := openStore(ctx, cfg, nil, 2, false)
	if err != nil {
		return err
	}
	defer dst.Close()
	dumper, ok1 := src.(tidings.Dumper)
	loader, ok2 := dst.(tidings.Loader)
	if !ok1 || !ok2 {
		return errors.New("these stores cannot be copied one into the other")
	}
	snapshot, err := dumper.Dump(ctx)
	if err != nil {
		return err
	}
	defer snapshot.Close()
	counts, err := loader.Load(ctx, snapshot)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	for _, tc := range counts {
		fmt.Fprintf(w, "%s\t%d\n", tc.Table, tc.Rows)
	}
	w.Flush()
	fmt.Fprintf(c.stdout, "copied and verified %d tables; serve with --database now\n", len(counts))
	return nil
}
