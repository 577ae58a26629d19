package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// importOrder lists the tables in an order that satisfies their foreign keys.
var importOrder = []string{"accounts", "users", "projects", "channels", "tokens", "events", "event_tags", "event_counts", "tag_counts",
	"insights", "insight_points", "people", "groups", "group_members", "sessions", "invites", "webhooks", "deliveries", "webhook_attempts",
	"push_subscriptions", "notify_prefs", "push_records", "settings"}

// uuidText is SQL (SQLite) for a 16-byte UUID column as its text form.
func uuidText(col string) string {
	h := `lower(hex(` + col + `))`
	return `substr(` + h + `, 1, 8) || '-' || substr(` + h + `, 9, 4) || '-' || substr(` + h + `, 13, 4) || '-' || substr(` +
		h + `, 17, 4) || '-' || substr(` + h + `, 21)`
}

// sqliteShapes reads the tables whose SQLite shape differs from PostgreSQL's (the
// embedded store's lean schema: events keyed by seq with a 16-byte ID, tags in a
// dictionary) in PostgreSQL's shape.
var sqliteShapes = map[string]string{
	"events": `(SELECT ` + uuidText("id") + ` AS id, project_id, channel_id, event, description, icon, notify, tags,
		parser, user_id, ts, created_at, NULL AS search FROM events ORDER BY seq)`,
	"event_tags": `(SELECT ` + uuidText("e.id") + ` AS event_id, g.key AS key, g.value AS value,
		e.project_id AS project_id, e.channel_id AS channel_id, e.ts AS ts
		FROM event_tags t JOIN tags g ON g.id = t.tag_id JOIN events e ON e.seq = t.seq)`,
	"tag_counts": `(SELECT project_id, key, value, count AS n FROM tags WHERE count > 0)`,
}

// Source is the SQLite database to import, best a read transaction (*sql.Tx): one
// snapshot of every table.
type Source interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// TableCount is how many rows a table holds on both sides after an import.
type TableCount struct {
	Table string
	Rows  int64
}

// Import copies every table of an embedded store (src, the SQLite database of
// package sqlite, migrated to its latest version) into this database, in one
// transaction, then checks that each table holds as many rows as its source. It
// refuses a database that holds any account, user or event already.
func (db *DB) Import(ctx context.Context, src Source) ([]TableCount, error) {
	var used bool
	if err := db.row(ctx, `SELECT EXISTS (SELECT 1 FROM accounts) OR EXISTS (SELECT 1 FROM users)
		OR EXISTS (SELECT 1 FROM events) OR EXISTS (SELECT 1 FROM settings)`).Scan(&used); err != nil {
		return nil, err
	}
	if used {
		return nil, fmt.Errorf("the target database holds data already: migrate-store copies into an empty database only")
	}
	var counts []TableCount
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		for _, table := range importOrder {
			n, err := copyTable(ctx, src, tx, table)
			if err != nil {
				return fmt.Errorf("copy %s: %w", table, err)
			}
			var got int64
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&got); err != nil {
				return err
			}
			if got != n {
				return fmt.Errorf("%s: %d rows read, %d stored", table, n, got)
			}
			counts = append(counts, TableCount{table, n})
		}
		// The copied events have no search index yet: the next Open makes it.
		if _, err := tx.Exec(ctx, `UPDATE search_backfill SET next_id = 'g'`); err != nil {
			return err
		}
		// Serial columns go on after the highest copied value.
		_, err := tx.Exec(ctx, `DO $$ DECLARE r record; BEGIN
			FOR r IN SELECT table_name, column_name FROM information_schema.columns
			  WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%' LOOP
			  EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, %L), coalesce(max(%I), 0) + 1, false) FROM %I',
			    r.table_name, r.column_name, r.column_name, r.table_name);
			END LOOP; END $$`)
		return err
	})
	return counts, err
}

// copyTable copies one table: the columns of the PostgreSQL table, read from the
// SQLite one (whose rowid stands in for the serial columns it lacks), in rowid order.
func copyTable(ctx context.Context, src Source, tx pgx.Tx, table string) (int64, error) {
	type column struct{ name, typ string }
	cols, err := query(ctx, tx, func(r pgx.Row) (column, error) {
		var c column
		return c, r.Scan(&c.name, &c.typ)
	}, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return 0, err
	}
	from, shaped := sqliteShapes[table]
	var srcCols []string
	if shaped {
		for _, c := range cols {
			srcCols = append(srcCols, c.name)
		}
	} else if srcCols, err = sqliteColumns(ctx, src, table); err != nil {
		return 0, err
	}
	var sel, names []string
	for _, c := range cols {
		names = append(names, c.name)
		if slices.Contains(srcCols, c.name) {
			sel = append(sel, `"`+c.name+`"`)
		} else {
			sel = append(sel, `rowid`) // insight_points.id, webhooks.seq, push_subscriptions.seq
		}
	}
	order := ""
	if !shaped {
		from = table
		var withoutRowid bool
		if err := src.QueryRowContext(ctx, `SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE type = 'table' AND name = ?`, table).
			Scan(&withoutRowid); err != nil {
			return 0, err
		}
		if !withoutRowid {
			order = ` ORDER BY rowid`
		}
	}
	rows, err := src.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+from+` AS `+table+order)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var data [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		for i, c := range cols {
			vals[i] = convert(vals[i], c.typ)
		}
		data = append(data, vals)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return tx.CopyFrom(ctx, pgx.Identifier{table}, names, pgx.CopyFromRows(data))
}

// convert turns a value SQLite returned into what the PostgreSQL column takes.
func convert(v any, typ string) any {
	switch x := v.(type) {
	case int64:
		if typ == "boolean" {
			return x != 0
		}
		if typ == "integer" {
			return int32(x)
		}
	case []byte:
		if typ == "text" {
			return string(x)
		}
	case string:
		if typ == "bytea" {
			return []byte(x)
		}
	}
	return v
}

func sqliteColumns(ctx context.Context, src Source, table string) ([]string, error) {
	rows, err := src.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the source has no table %s: is it a Tidings data folder?", table)
	}
	return out, rows.Err()
}
