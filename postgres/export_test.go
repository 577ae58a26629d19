package postgres

import (
	"context"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jackc/pgx/v5"
)

// SetTextBudget sets how many events' search vectors db's check compares before it
// samples them (searchTextBudget).
func SetTextBudget(db *DB, n float64) { db.textBudget = n }

// SetTagRollup sets how many events a tag of db must have had for its hourly counts
// to be kept (tidings.TagRollup).
func SetTagRollup(db *DB, n int64) { db.tagRollup = n }

// QueryRowForTest runs a query on db's pool: a test's look at the tables.
func QueryRowForTest(db *DB, q string, args ...any) pgx.Row {
	return db.pool.QueryRow(context.Background(), q, args...)
}

// QueryStringsForTest runs a query of one text column on db's pool.
func QueryStringsForTest(db *DB, q string, args ...any) ([]string, error) {
	return query(context.Background(), db.pool, func(r pgx.Row) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, q, args...)
}

// ExecForTest runs a statement on db's pool: a test's or benchmark's own rows.
func ExecForTest(db *DB, q string, args ...any) (pgconn.CommandTag, error) {
	return db.pool.Exec(context.Background(), q, args...)
}

// MemDump is a dump held in memory (tidings.Dump): a test's source for Load, its
// columns and rows free to change.
type MemDump struct{ Tables map[string]*MemTable }

// MemTable is one table of a MemDump.
type MemTable struct {
	Columns []string
	Rows    [][]any
}

func (d *MemDump) Rows(ctx context.Context, table string, fn func(columns []string, row []any) error) error {
	t := d.Tables[table]
	if t == nil {
		return nil
	}
	for _, r := range t.Rows {
		if err := fn(t.Columns, r); err != nil {
			return err
		}
	}
	return nil
}

func (d *MemDump) Close() error { return nil }

// DropColumn removes a column from every row of the table: a dump of an older store.
func (t *MemTable) DropColumn(name string) {
	i := slices.Index(t.Columns, name)
	if i < 0 {
		return
	}
	t.Columns = slices.Delete(slices.Clone(t.Columns), i, i+1)
	for j, r := range t.Rows {
		t.Rows[j] = slices.Delete(slices.Clone(r), i, i+1)
	}
}

// DumpForTest reads every table Load copies, but for the columns of this store only
// (search), into memory: this store in the neutral shape.
func DumpForTest(ctx context.Context, db *DB) (*MemDump, error) {
	d := &MemDump{Tables: map[string]*MemTable{}}
	for _, table := range loadOrder {
		cols, err := query(ctx, db.pool, func(r pgx.Row) (string, error) {
			var c string
			return c, r.Scan(&c)
		}, `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()
			AND table_name = $1 AND column_name <> 'search' ORDER BY ordinal_position`, table)
		if err != nil {
			return nil, err
		}
		quoted := make([]string, len(cols))
		for i, c := range cols {
			quoted[i] = pgx.Identifier{c}.Sanitize()
		}
		rows, err := query(ctx, db.pool, func(r pgx.Row) ([]any, error) {
			return r.(pgx.Rows).Values()
		}, `SELECT `+strings.Join(quoted, ", ")+` FROM `+table)
		if err != nil {
			return nil, err
		}
		d.Tables[table] = &MemTable{Columns: cols, Rows: rows}
	}
	return d, nil
}
