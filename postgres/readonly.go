package postgres

import (
	"context"
	"errors"
	"io/fs"

	"github.com/pressly/goose/v3"

	"github.com/tidings-dev/tidings"
)

// OpenReadOnly connects to the database at url for the commands that only read
// (tidings check, the lists): it migrates nothing, indexes nothing for search, starts
// no writer and joins no instances table. Every transaction of its connections is
// read-only (default_transaction_read_only), so that no statement of it can write,
// whatever it is. It refuses a schema that is not this version's: its queries are
// written for that schema, and upgrading it is a write.
func OpenReadOnly(ctx context.Context, url string, opts Options) (*DB, error) {
	db, err := connect(ctx, url, opts, true)
	if err != nil {
		return nil, err
	}
	db.readOnly = true
	if err := db.schemaCurrent(ctx); err != nil {
		db.pool.Close()
		return nil, err
	}
	return db, nil
}

// schemaCurrent refuses a schema whose last migration is not this version's last one.
func (db *DB) schemaCurrent(ctx context.Context) error {
	var have *int64
	err := db.row(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&have)
	if pgCode(err) == "42P01" { // undefined_table
		return errors.New("the database holds no Tidings store (it has no migrations): start `tidings serve --database` on it once to create one")
	}
	if err != nil {
		return err
	}
	if have == nil {
		have = new(int64)
	}
	return tidings.SchemaMismatch(*have, latestMigration())
}

// latestMigration is the number of the last migration this version applies.
func latestMigration() int64 {
	var latest int64
	files, _ := fs.ReadDir(migrations, "migrations")
	for _, f := range files {
		if v, err := goose.NumericComponent(f.Name()); err == nil {
			latest = max(latest, v)
		}
	}
	return latest
}
