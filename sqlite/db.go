// Package sqlite is the embedded store: one SQLite file in WAL mode, with every event
// and insight write group-committed by a single writer.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/changemark"
	"github.com/tidings-dev/tidings/internal/groupcommit"
	"github.com/tidings-dev/tidings/internal/tokencache"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the database file inside the data folder.
const FileName = "tidings.db"

// Options configure a DB. Zero values are replaced by defaults.
type Options struct {
	Now      func() time.Time
	MaxBatch int               // jobs per transaction (default 256)
	OnCommit groupcommit.Stats // told about each batch, for metrics
	Log      *slog.Logger      // where a long migration reports its progress (default: discarded)
	// SkipSearchBackfill leaves the events stored before search unindexed at Open
	// (a management command; the server indexes them).
	SkipSearchBackfill bool
	// OnIndexed is told about each step of the full-text indexer that indexed events:
	// how many, and how long the oldest of them waited since its commit (metrics).
	OnIndexed func(rows int, lag time.Duration)
	// IndexDelay is how long the indexer lets events gather after a commit (default
	// 100 ms); a search never waits that long, it asks for the events at once.
	IndexDelay time.Duration
	// AnySchema lets OpenReadOnly open a store whose schema is another version's: a
	// backup copies the store as it is (a copy before an upgrade is the point of one).
	AnySchema bool
	// TagRollup is how many events a tag must have had for the store to count its
	// events per hour (default tidings.TagRollup; tests lower it): tag_hours.go.
	TagRollup int64
}

// DB is a tidings.Store on SQLite.
type DB struct {
	write     *sql.DB // one connection: the group committer and management writes
	read      *sql.DB // a pool for readers; WAL lets them run beside the writer
	now       func() time.Time
	writer    *groupcommit.Committer[*writeJob, *writeResult]
	spareRows spareRows // the writer's row buffers, kept between batches
	// prepared holds the write path's statements, made at Open and read-only after.
	prepared map[string]*sql.Stmt
	// reads runs the read pool's most common lookups (every API request's token, its
	// project, a user) by statements prepared once, any other query unprepared.
	reads  prepared
	tokens *tokencache.Cache // FindToken's results for a second; cleared by writes that invalidate tokens
	// tokensChanged is a mark (a file each process maps) that every process sharing the
	// folder bumps after a write that can invalidate a token (the CLI revoking one beside
	// the server): a change clears the cache. Looking costs a memory read per request.
	tokensChanged *changemark.Mark
	tokensSeen    atomic.Uint64 // the mark's value when last looked at
	health        writeHealth
	outbox        chan struct{} // a job was added to the outbox
	ix            indexer       // the full-text index's trailing indexer
	readOnly      bool          // opened by OpenReadOnly: no writer, no indexer, no token mark
	tagRollup     int64         // Options.TagRollup
}

var _ tidings.Store = (*DB)(nil)

// Open opens (creating if needed) the store in dir and migrates it.
func Open(ctx context.Context, dir string, opts Options) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	// synchronous(FULL): in WAL mode NORMAL survives a killed process but may lose the
	// last commits on power loss; we promise "acknowledged is durable", so every commit
	// is fsynced. Group commit pays that fsync once per batch, not once per event.
	q := url.Values{}
	for _, p := range []string{"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	dsn := "file:" + filepath.ToSlash(filepath.Join(dir, FileName)) + "?" + q.Encode()
	// The writer keeps its temporary data in memory: each job's savepoint journal
	// spilled to a temp file and cost a fifth of the CPU of a publish (+19% /v1/log,
	// docs/performance.md). Readers keep the default, so a large sort cannot grow memory.
	// It also keeps 64 MiB of pages (not 2), so that the indexes' inner pages stay in
	// memory on a large store, and lets the WAL grow to 8,192 pages (32 MiB) before it
	// copies them back: a page that many batches change is copied once, not once per
	// two batches (+27% seeding 300,000 events with tags of 200,000 users).
	write, err := sql.Open("sqlite", dsn+"&_pragma=temp_store(MEMORY)&_pragma=cache_size(-65536)&_pragma=wal_autocheckpoint(8192)")
	if err != nil {
		return nil, err
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	read, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		return nil, err
	}
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8)

	db := &DB{write: write, read: read, now: opts.Now, prepared: map[string]*sql.Stmt{}, outbox: make(chan struct{}, 1),
		tokens: tokencache.New(nil), tagRollup: rollupOf(opts)}
	if db.now == nil {
		db.now = time.Now
	}
	if db.tokensChanged, err = changemark.Open(filepath.Join(dir, "tokens-changed")); err != nil {
		db.write.Close()
		db.read.Close()
		return nil, fmt.Errorf("open the token mark: %w", err)
	}
	db.tokensSeen.Store(db.tokensChanged.Value())
	if err := db.migrate(ctx, opts.Log, opts.SkipSearchBackfill); err != nil {
		db.closeFiles()
		return nil, err
	}
	if db.reads, err = prepareReads(ctx, read); err != nil {
		db.closeFiles()
		return nil, err
	}
	if err := db.prepare(ctx); err != nil {
		db.closeFiles()
		return nil, err
	}
	maxBatch := opts.MaxBatch
	if maxBatch <= 0 {
		maxBatch = 256
	}
	stats := func(size int, d time.Duration, err error) {
		db.health.observe(err)
		if opts.OnCommit != nil {
			opts.OnCommit(size, d, err)
		}
	}
	db.writer = groupcommit.New(db.commitBatch, maxBatch, 4*maxBatch, stats)
	if err := db.startIndexer(ctx, opts.IndexDelay, opts.OnIndexed); err != nil {
		db.writer.Close()
		db.write.Close()
		db.read.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) migrate(ctx context.Context, log *slog.Logger, skipBackfill bool) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, db.write, sub, goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(migration6()))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if err := copyEvents(ctx, db.write, log); err != nil {
		return err
	}
	// A server and a management command may start together on a new folder: the
	// loser of that race finds the schema made and simply retries.
	for attempt := 0; ; attempt++ {
		_, err = p.Up(ctx)
		if err == nil || attempt == 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if skipBackfill {
		return nil
	}
	return backfillSearch(ctx, db.write, log)
}

// Ping reports whether the store answers and can commit.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.read.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return tidings.Errorf(tidings.EUnavailable, "the store does not answer")
	}
	if !db.canWrite(ctx) {
		return errCannotWrite
	}
	return nil
}

// QueueLen is the number of writes waiting for the group committer.
func (db *DB) QueueLen() int { return db.writer.QueueLen() }

// Close commits every queued write, then closes the database.
func (db *DB) Close() error {
	if db.readOnly {
		db.reads.close()
		return db.read.Close()
	}
	db.stopIndexer()
	db.writer.Close()
	for _, s := range db.prepared {
		s.Close()
	}
	return db.closeFiles()
}

// closeFiles closes the connections and the token mark.
func (db *DB) closeFiles() error {
	db.reads.close()
	return errors.Join(db.read.Close(), db.write.Close(), db.tokensChanged.Close())
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.Int64)
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// Pragmas reports the settings of the writing connection: journal mode, synchronous
// level (2 is FULL) and whether foreign keys are enforced.
func (db *DB) Pragmas(ctx context.Context) (journal string, synchronous, foreignKeys int) {
	db.write.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal)
	db.write.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synchronous)
	db.write.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&foreignKeys)
	return journal, synchronous, foreignKeys
}

// stamp is the current time at the precision stored (milliseconds), so that what a
// write returns equals what a later read returns.
func (db *DB) stamp() time.Time { return db.now().UTC().Truncate(time.Millisecond) }

// Backup writes a consistent copy of the database to path (SQLite's VACUUM INTO), while
// the store is in use: readers and the writer go on. path must not exist.
func (db *DB) Backup(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists already: choose a new file", path)
	}
	if db.readOnly {
		return db.backupReadOnly(ctx, path)
	}
	_, err := db.read.ExecContext(ctx, `VACUUM INTO ?`, path)
	return err
}

// The optional features of a store that this one has.
var (
	_ tidings.QueueWatcher    = (*DB)(nil)
	_ tidings.OutboxSignaller = (*DB)(nil)
	_ tidings.LeaseReleaser   = (*DB)(nil)
	_ tidings.BackerUp        = (*DB)(nil)
)
