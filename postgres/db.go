// Package postgres is the store for several instances on one PostgreSQL database:
// the same behaviour as the embedded store (package storetest says which), with
// ingest group-committed per instance, insight arithmetic done by the database in one
// statement, delivery jobs claimed with FOR UPDATE SKIP LOCKED, and live updates
// carried between instances by LISTEN/NOTIFY.
package postgres

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/groupcommit"
	"github.com/tidings-dev/tidings/internal/tokencache"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options configure a DB. Zero values are replaced by defaults.
type Options struct {
	// FullCheck makes Check compare every event's search vector with its text; without
	// it a store of more than 100,000 events has a random sample compared (minutes at
	// 10 million events: tidings check --full).
	FullCheck bool
	Now       func() time.Time
	MaxBatch  int               // jobs per transaction (default 256)
	OnCommit  groupcommit.Stats // told about each batch, for metrics
	// MaxConns is the connection pool's size (default 16): the writer holds one, the
	// listener one, readers share the rest.
	MaxConns int32
	// Log is told about long work at Open: indexing the stored events for search.
	Log *slog.Logger
	// SkipSearchBackfill leaves the events stored before search unindexed at Open
	// (a management command; the server indexes them).
	SkipSearchBackfill bool
}

// DB is a tidings.Store on PostgreSQL.
type DB struct {
	pool     *pgxpool.Pool
	now      func() time.Time
	writer   *groupcommit.Committer[*writeJob, *writeResult]
	instance string            // this process's name in notifications and the instances table
	notifyOn string            // the NOTIFY channel of the instances of this schema
	outbox   chan struct{}     // a job was added to the outbox
	seen     seenSet           // events published on this instance, for the relay's catch-up
	tokens   *tokencache.Cache // FindToken's results for a second; cleared by writes that invalidate tokens
	closed   atomic.Bool
	readOnly bool // opened by OpenReadOnly: no writer, and no row in the instances table to remove
	// fullCheck: Check compares every search vector, not a sample (Options.FullCheck).
	fullCheck bool
	// textBudget is how many events' vectors a check compares before it samples
	// (searchTextBudget; tests lower it).
	textBudget float64
	// tagRollup is how many events a tag must have had for its hourly counts to be
	// kept (tidings.TagRollup; tests lower it). The migration that made tag_hours
	// rolled the tags of tidings.TagRollup events.
	tagRollup int64
}

var _ tidings.Store = (*DB)(nil)

// Open connects to the database at url (postgres://…), migrates it and starts the
// group committer. Several instances may open one database at once: migrations take
// an advisory lock.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	db, err := connect(ctx, url, opts, false)
	if err != nil {
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		db.pool.Close()
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !opts.SkipSearchBackfill {
		if err := db.backfillSearch(ctx, log); err != nil {
			db.pool.Close()
			return nil, err
		}
	}
	maxBatch := opts.MaxBatch
	if maxBatch <= 0 {
		maxBatch = 256
	}
	db.writer = groupcommit.New(db.commitBatch, maxBatch, 4*maxBatch, opts.OnCommit)
	return db, nil
}

// connect makes the pool and finds the schema; readOnly makes every transaction of
// the pool's connections read-only (OpenReadOnly).
func connect(ctx context.Context, url string, opts Options, readOnly bool) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 16
	}
	// A statement never waits longer than this for the database: during an outage a
	// request gets 503 in bounded time, never a hang.
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "tidings"
	}
	// Every read is an index walk that stops at a page's end; starting parallel workers
	// for one cost 100 ms where the walk takes 10 (docs/decisions.md). The URL may say otherwise.
	// Nor does compiling a query to machine code (JIT) pay for itself: 11 ms to save none.
	for k, v := range map[string]string{"max_parallel_workers_per_gather": "0", "jit": "off"} {
		if _, set := cfg.ConnConfig.RuntimeParams[k]; !set {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	if readOnly {
		cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	db := &DB{pool: pool, now: opts.Now, instance: newInstanceName(), outbox: make(chan struct{}, 1),
		tokens: tokencache.New(nil), fullCheck: opts.FullCheck, textBudget: searchTextBudget, tagRollup: tidings.TagRollup}
	if db.now == nil {
		db.now = time.Now
	}
	var schema *string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	if schema == nil {
		pool.Close()
		return nil, fmt.Errorf("no schema of the database's search_path exists (%s): create it first, e.g. CREATE SCHEMA name",
			cfg.ConnConfig.RuntimeParams["search_path"])
	}
	db.notifyOn = notifyChannel(*schema)
	return db, nil
}

func newInstanceName() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// migrate applies the numbered migrations under a session advisory lock, so that
// instances starting together take turns and the later ones find nothing to do.
func (db *DB) migrate(ctx context.Context) error {
	sub, _ := fs.Sub(migrations, "migrations")
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	// Up to date (every start but the first after an upgrade): no lock to wait for.
	check, err := goose.NewProvider(goose.DialectPostgres, sqlDB, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if pending, err := check.HasPending(ctx); err != nil {
		return fmt.Errorf("migrations: %w", mapErr(err))
	} else if !pending {
		return nil
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 600)) // try every second, up to 10 min
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, sub,
		goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", mapErr(err))
	}
	return nil
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var one int
	if err := db.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return errUnavailable
	}
	return nil
}

// QueueLen is the number of writes waiting for the group committer.
func (db *DB) QueueLen() int { return db.writer.QueueLen() }

// Close commits every queued write, then closes the pool.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	if db.readOnly {
		db.pool.Close()
		return nil
	}
	db.writer.Close()
	db.leave()
	db.pool.Close()
	return nil
}

// Instance is this process's name among the instances sharing the database.
func (db *DB) Instance() string { return db.instance }

// errUnavailable is what a request gets while the database cannot be reached: 503
// with Retry-After, never a 500 or a hang.
var errUnavailable = tidings.Errorf(tidings.EUnavailable,
	"the database is unavailable right now; retry in a moment")

// mapErr turns errors of the connection (refused, reset, the server shutting down or
// terminating us, a timeout) into errUnavailable; others pass unchanged.
func mapErr(err error) error {
	if err == nil || !isConnError(err) {
		return err
	}
	return fmt.Errorf("%w (%v)", errUnavailable, err)
}

func isConnError(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case len(pe.Code) == 5 && pe.Code[:2] == "08": // connection exception
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", pe.Code == "53300", pe.Code == "57014":
			// admin shutdown, crash shutdown, cannot connect now, too many connections, query canceled
			return true
		}
		return false
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, pgx.ErrTxClosed), pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return true
	}
	return err != nil && errors.Is(err, net.ErrClosed)
}

func isUnique(err error) bool { return pgCode(err) == "23505" }

func isForeignKey(err error) bool { return pgCode(err) == "23503" }

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v *int64) time.Time {
	if v == nil {
		return time.Time{}
	}
	return fromMS(*v)
}

// stamp is the current time at the precision stored (milliseconds).
func (db *DB) stamp() time.Time { return db.now().UTC().Truncate(time.Millisecond) }

// The helpers below run statements on the pool and report connection trouble as
// errUnavailable, so that every method of the store does.

func (db *DB) exec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error) {
	tag, err := db.pool.Exec(ctx, q, args...)
	return tag, mapErr(err)
}

func (db *DB) row(ctx context.Context, q string, args ...any) pgx.Row {
	return mappedRow{db.pool.QueryRow(ctx, q, args...)}
}

// query runs q and scans every row with scan.
func query[T any](ctx context.Context, x querier, scan func(pgx.Row) (T, error), q string, args ...any) ([]T, error) {
	rows, err := x.Query(ctx, q, args...)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, mapErr(err)
		}
		out = append(out, v)
	}
	return out, mapErr(rows.Err())
}

// orNil makes an empty list nil, as the lists of accounts, projects, channels,
// tokens, users and invites are in the embedded store.
func orNil[T any](v []T, err error) ([]T, error) {
	if len(v) == 0 {
		v = nil
	}
	return v, err
}

// inTx runs fn in a transaction of its own (management writes, not the hot path). A
// transaction chosen as a deadlock's victim was rolled back whole: it runs again.
func (db *DB) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, db.pool, fn)
		if c := pgCode(err); c != "40P01" && c != "40001" {
			break
		}
	}
	return mapErr(err)
}

type querier interface {
	Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, q string, args ...any) pgx.Row
	Exec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error)
}

type mappedRow struct{ pgx.Row }

func (r mappedRow) Scan(dest ...any) error { return mapErr(r.Row.Scan(dest...)) }

func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func notFound(err error, nf error) error {
	if noRows(err) {
		return nf
	}
	return err
}

// The optional features of a store that this one has.
var (
	_ tidings.Cluster         = (*DB)(nil)
	_ tidings.QueueWatcher    = (*DB)(nil)
	_ tidings.OutboxSignaller = (*DB)(nil)
)
