package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidings-dev/tidings"
)

// uuidText is SQL for a 16-byte UUID column as its text form.
func uuidText(col string) string {
	h := `lower(hex(` + col + `))`
	return `substr(` + h + `, 1, 8) || '-' || substr(` + h + `, 9, 4) || '-' || substr(` + h + `, 13, 4) || '-' || substr(` +
		h + `, 17, 4) || '-' || substr(` + h + `, 21)`
}

// neutralShapes read the tables whose shape here differs from the neutral one (this
// store's lean schema: events keyed by seq with a 16-byte ID, tags in a dictionary).
var neutralShapes = map[string]string{
	"events": `SELECT ` + uuidText("id") + ` AS id, project_id, channel_id, event, description, icon, notify, tags,
		parser, user_id, ts, created_at, priority, url, actions, thread_key, ack_by, ack_at FROM events ORDER BY seq`,
	// Presses name their event by its text ID, as deliveries do.
	"event_presses": `SELECT id, account_id, ` + uuidText("event_id") + ` AS event_id, action_id, label, by, via, at,
		rowid AS rowid FROM event_presses ORDER BY rowid`,
	"event_tags": `SELECT ` + uuidText("e.id") + ` AS event_id, g.key AS key, g.value AS value,
		e.project_id AS project_id, e.channel_id AS channel_id, e.ts AS ts
		FROM event_tags t JOIN tags g ON g.id = t.tag_id JOIN events e ON e.seq = t.seq`,
	"tag_counts": `SELECT project_id, key, value, count AS n FROM tags WHERE count > 0`,
	// Page views' minutes and days are counted here in unix minutes and days; the
	// neutral shape (PostgreSQL's) names them by the unix ms of their start.
	"user_minutes":       `SELECT person_ref, minute * 60000 AS minute, events, views FROM user_minutes`,
	"page_days":          `SELECT project_id, day * 86400000 AS day, views, entries, users FROM page_days`,
	"page_user_days":     `SELECT project_id, day * 86400000 AS day, person_ref, views FROM page_user_days`,
	"page_path_days":     `SELECT project_id, day * 86400000 AS day, path, views, entries FROM page_path_days`,
	"page_referrer_days": `SELECT project_id, day * 86400000 AS day, host, entries FROM page_referrer_days`,
	"page_path_months":   `SELECT project_id, month * 86400000 AS month, path, views, entries FROM page_path_months`,
}

// dump is one read transaction: every table read from the same snapshot.
type dump struct{ tx *sql.Tx }

// Dump opens a snapshot of the store in the neutral shape. Stop the server first:
// what it accepts after the snapshot would stay behind.
func (db *DB) Dump(ctx context.Context) (tidings.Dump, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return &dump{tx: tx}, nil
}

func (d *dump) Close() error { return d.tx.Rollback() }

func (d *dump) Rows(ctx context.Context, table string, fn func(columns []string, row []any) error) error {
	q, ok := neutralShapes[table]
	if !ok {
		var exists, withoutRowid bool
		if err := d.tx.QueryRowContext(ctx, `SELECT count(*) > 0, coalesce(max(sql LIKE '%WITHOUT ROWID%'), 0)
			FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&exists, &withoutRowid); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("the store has no table %s", table)
		}
		if withoutRowid {
			q = `SELECT * FROM "` + table + `"`
		} else {
			q = `SELECT *, rowid AS rowid FROM "` + table + `" ORDER BY rowid`
		}
	}
	rows, err := d.tx.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := fn(cols, vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

var _ tidings.Dumper = (*DB)(nil)
