package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/tokencache"
)

// OpenReadOnly opens the store in dir for the commands that only read (tidings check,
// the lists, backup): it migrates nothing, indexes nothing, starts no writer and writes
// nothing to the database or its WAL, so that a check reports the damage it finds
// rather than mending it, and those files after it are the same byte for byte. It
// refuses a store whose schema is not this version's: its queries are written for that
// schema, and upgrading it is a write. Only the store's reads (and Backup) may be
// called: a management write fails with SQLITE_READONLY, and there is no group
// committer for events and insights.
//
// Its connections open the file read-only (mode=ro): a connection that may write
// copies the WAL back into the database when the last one closes and deletes the
// WAL, which query_only alone does not prevent. query_only stops writes besides, temp
// tables included. A WAL left by a killed server is read as it is, with what it
// committed: only the -shm file, the WAL's index that every reader shares, is rebuilt.
// A store stopped cleanly has neither: SQLite makes them empty, as for any reader.
func OpenReadOnly(ctx context.Context, dir string, opts Options) (*DB, error) {
	file := filepath.Join(dir, FileName)
	if _, err := os.Stat(file); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s holds no Tidings store (no %s): start `tidings serve` there once to create it", dir, FileName)
		}
		return nil, err
	}
	q := url.Values{}
	q.Set("mode", "ro")
	for _, p := range []string{"busy_timeout(5000)", "query_only(1)"} {
		q.Add("_pragma", p)
	}
	read, err := sql.Open("sqlite", "file:"+filepath.ToSlash(file)+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8)
	// The write methods find the read-only pool: they fail with SQLITE_READONLY rather
	// than write.
	db := &DB{write: read, read: read, now: opts.Now, readOnly: true, tokens: tokencache.New(nil), tagRollup: rollupOf(opts)}
	if db.now == nil {
		db.now = time.Now
	}
	if opts.AnySchema {
		return db, nil // its reads may not be this version's: only Backup is called
	}
	if err := db.schemaCurrent(ctx); err != nil {
		read.Close()
		return nil, err
	}
	if db.reads, err = prepareReads(ctx, read); err != nil {
		read.Close()
		return nil, err
	}
	return db, nil
}

// schemaCurrent refuses a store whose last migration is not this version's last one.
func (db *DB) schemaCurrent(ctx context.Context) error {
	var have sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&have)
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return errors.New("the data folder's tidings.db is not a Tidings store (it has no migrations): start `tidings serve` there once to create one")
	}
	if err != nil {
		return err
	}
	return tidings.SchemaMismatch(have.Int64, latestMigration())
}

// latestMigration is the number of the last migration this version applies.
func latestMigration() int64 {
	latest := migration6().Version
	files, _ := fs.ReadDir(migrations, "migrations")
	for _, f := range files {
		if v, err := goose.NumericComponent(f.Name()); err == nil {
			latest = max(latest, v)
		}
	}
	return latest
}

// snapshotReadOnly begins read transactions on n connections that see the same state
// without the write lock, which a read-only connection cannot take: it begins them,
// then asks a connection outside them whether any commit landed meanwhile (PRAGMA
// data_version changes when another connection commits), and begins again if one did.
// The transactions begin within a fraction of a millisecond, so a busy server's
// commits rarely fall between them.
func (db *DB) snapshotReadOnly(ctx context.Context, n int) (*snapshot, error) {
	watch, err := db.read.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer watch.Close()
	version := func() (v int64, err error) {
		err = watch.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v)
		return v, err
	}
	for range 1000 {
		before, err := version()
		if err != nil {
			return nil, err
		}
		s, err := db.beginReads(ctx, n)
		if err != nil {
			return nil, err
		}
		after, err := version()
		if err != nil || after != before {
			s.close()
		}
		if err != nil {
			return nil, err
		}
		if after == before {
			return s, nil
		}
	}
	return nil, errors.New("the store changed while the check began, a thousand times: run it again")
}

// backupReadOnly is Backup on a read-only store: query_only refuses VACUUM INTO, whose
// writes go to the new file, so one connection lifts it for that statement; mode=ro
// still keeps the store's own files from being written.
func (db *DB) backupReadOnly(ctx context.Context, path string) error {
	conn, err := db.read.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA query_only = 0`); err != nil {
		return err
	}
	// The connection goes back to the pool as it came: a read that follows must not write.
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA query_only = 1`)
	_, err = conn.ExecContext(ctx, `VACUUM INTO ?`, path)
	return err
}
