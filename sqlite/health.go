package sqlite

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/tidings-dev/tidings"
)

// errCannotWrite is what a write gets while the disk is full, read-only or failing:
// 503 with Retry-After at the API, never a 500.
var errCannotWrite = tidings.Errorf(tidings.EUnavailable,
	"the store cannot write right now (disk full, read-only or failing); retry in a moment")

// isStorageError reports the SQLite errors of the storage underneath rather than of
// the statement: full, read-only, I/O, cannot open.
func isStorageError(err error) bool {
	if err == nil {
		return false // without the As below, whose target escapes: an allocation per write
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// writeHealth remembers whether the last write failed for storage reasons, so that
// readiness tells the truth, and probes (at most once a second) whether it recovered.
type writeHealth struct {
	mu        sync.Mutex
	failing   bool
	lastProbe time.Time
}

func (h *writeHealth) observe(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil:
		h.failing = false
	case isStorageError(err):
		h.failing = true
	}
}

// canWrite reports whether writes work: true while nothing failed; after a failure, a
// probe write (through the committer, at most once a second) decides.
func (db *DB) canWrite(ctx context.Context) bool {
	h := &db.health
	h.mu.Lock()
	if !h.failing {
		h.mu.Unlock()
		return true
	}
	if time.Since(h.lastProbe) < time.Second {
		h.mu.Unlock()
		return false
	}
	h.lastProbe = time.Now()
	h.mu.Unlock()
	_, err := db.submit(ctx, &writeJob{probe: true})
	return err == nil
}

// probe writes and frees 64 KiB in the batch's transaction: the commit needs room on
// disk as an event would, and leaves nothing behind.
func (b *batch) probe(ctx context.Context) error {
	if _, err := b.tx.ExecContext(ctx, `INSERT INTO write_probe (data) VALUES (zeroblob(65536))`); err != nil {
		return err
	}
	_, err := b.tx.ExecContext(ctx, `DELETE FROM write_probe`)
	return err
}

// SetMaxPageCount caps the database file at n pages (PRAGMA max_page_count on the
// writing connection): past it every write fails as on a full disk. A quota for
// operators; the tests use it to fill the disk.
func (db *DB) SetMaxPageCount(ctx context.Context, n int) error {
	_, err := db.write.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.Itoa(n))
	return err
}

// PageCount is the database's size in pages.
func (db *DB) PageCount(ctx context.Context) (int, error) {
	var n int
	err := db.write.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&n)
	return n, err
}
