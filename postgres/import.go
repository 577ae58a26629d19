package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// loadOrder lists the tables in an order that satisfies their foreign keys.
var loadOrder = []string{"accounts", "users", "projects", "cards", "channels", "tokens", "events", "event_presses", "event_tags", "event_counts", "tag_counts",
	"insights", "insight_points", "people", "groups", "group_members", "sessions", "invites", "webhooks", "deliveries", "webhook_attempts",
	"push_subscriptions", "notify_prefs", "push_records", "settings", "idempotency_keys", "member_routes", "member_digests",
	"hooks", "hook_attempts"}

// Load copies every table of a dump (another store's, in the neutral shape) into this
// database, in one transaction, then checks that each table holds as many rows as the
// dump. It refuses a database that holds any account, user or event already.
func (db *DB) Load(ctx context.Context, d tidings.Dump) ([]tidings.TableCount, error) {
	var used bool
	if err := db.row(ctx, `SELECT EXISTS (SELECT 1 FROM accounts) OR EXISTS (SELECT 1 FROM users)
		OR EXISTS (SELECT 1 FROM events) OR EXISTS (SELECT 1 FROM settings)`).Scan(&used); err != nil {
		return nil, err
	}
	if used {
		return nil, fmt.Errorf("the target database holds data already: migrate-store copies into an empty database only")
	}
	var counts []tidings.TableCount
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		counts = counts[:0]
		for _, table := range loadOrder {
			n, err := loadTable(ctx, d, tx, table)
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
			counts = append(counts, tidings.TableCount{Table: table, Rows: n})
		}
		// The hourly counts of common tags are this store's own: made from the copy.
		if _, err := tx.Exec(ctx, sqlRollCommonTags, db.tagRollup); err != nil {
			return fmt.Errorf("hourly tag counts: %w", err)
		}
		// The users' activity minutes are this store's own too; page views are not
		// copied (each store keeps them in its own compact shape).
		if _, err := tx.Exec(ctx, sqlUserMinutesFromEvents); err != nil {
			return fmt.Errorf("user minutes: %w", err)
		}
		if _, err := tx.Exec(ctx, sqlSessionsFromMinutes); err != nil {
			return fmt.Errorf("user sessions: %w", err)
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

// loadTable copies one table: each column of the PostgreSQL table from the dump's
// column of that name, a serial column the dump lacks from its rowid, a column of
// this store only (search, tag_counts.rolled, people.sessions, made by Load) left to
// its default, and so are people.page_views (page views are not copied) and a setting
// the dump of an older store lacks (optionalColumns).
func loadTable(ctx context.Context, d tidings.Dump, tx pgx.Tx, table string) (int64, error) {
	type column struct {
		name, typ string
		serial    bool
	}
	cols, err := query(ctx, tx, func(r pgx.Row) (column, error) {
		var c column
		return c, r.Scan(&c.name, &c.typ, &c.serial)
	}, `SELECT column_name, data_type, coalesce(column_default LIKE 'nextval(%', false) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND column_name NOT IN ('search', 'rolled')
		  AND NOT (table_name = 'people' AND column_name IN ('page_views', 'sessions')) ORDER BY ordinal_position`, table)
	if err != nil {
		return 0, err
	}
	var data [][]any
	var from []int // for each column, the dump's column it takes (-1: none, its default)
	err = d.Rows(ctx, table, func(dcols []string, row []any) error {
		if from == nil {
			for _, c := range cols {
				i := slices.Index(dcols, c.name)
				if i < 0 && !optionalColumns[table+"."+c.name] {
					i = slices.Index(dcols, "rowid") // insight_points.id, webhooks.seq, push_subscriptions.seq
				}
				if i < 0 && !optionalColumns[table+"."+c.name] && !c.serial { // a serial column goes on from its sequence
					return fmt.Errorf("the dump has no column %s", c.name)
				}
				from = append(from, i)
			}
		}
		vals := make([]any, 0, len(cols))
		for i, c := range cols {
			if from[i] >= 0 {
				vals = append(vals, convert(row[from[i]], c.typ))
			}
		}
		data = append(data, vals)
		return nil
	})
	if err != nil {
		return 0, err
	}
	var names []string
	for i, c := range cols {
		if from == nil || from[i] >= 0 {
			names = append(names, c.name)
		}
	}
	return tx.CopyFrom(ctx, pgx.Identifier{table}, names, pgx.CopyFromRows(data))
}

// convert turns a neutral value into what the PostgreSQL column takes.
func convert(v any, typ string) any {
	switch x := v.(type) {
	case int64:
		if typ == "boolean" {
			return x != 0
		}
		if typ == "integer" {
			return int32(x)
		}
		if typ == "smallint" {
			return int16(x)
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

// optionalColumns (table.column) are settings a dump of an older store may lack: they
// keep their default (a project notifies everyone and never escalates, a channel
// follows its project, a webhook has no chat id or user key, an invitation no email).
var optionalColumns = map[string]bool{"projects.ignore_gpc": true,
	"projects.notify": true, "channels.notify": true, "webhooks.chat_id": true, "webhooks.user_key": true,
	"projects.escalate_after": true, "invites.email": true, "users.checklist_hidden_at": true}

// sqlUserMinutesFromEvents counts the users' events per minute (as migration 00017 did).
const sqlUserMinutesFromEvents = `INSERT INTO user_minutes (person_ref, minute, events, views)
	SELECT p.id, e.ts - e.ts % 60000, count(*), 0
	FROM events e JOIN people p ON p.project_id = e.project_id AND p.user_id = e.user_id
	WHERE e.user_id <> ''
	GROUP BY 1, 2`

// sqlSessionsFromMinutes counts every user's sessions from its minutes (as migration
// 00017 did).
const sqlSessionsFromMinutes = `UPDATE people p SET sessions = s.n
	FROM (SELECT person_ref, count(*) AS n FROM (SELECT person_ref,
	    minute - lag(minute) OVER (PARTITION BY person_ref ORDER BY minute) AS gap FROM user_minutes) m
	  WHERE gap IS NULL OR gap > ` + sessionGap + ` GROUP BY 1) s
	WHERE s.person_ref = p.id`

// sqlRollCommonTags rolls every tag of $1 events or more (as migration 00016 did):
// sets its flag and fills its hourly counts from its event_tags rows.
const sqlRollCommonTags = `WITH r AS (UPDATE tag_counts SET rolled = true WHERE n >= $1 AND NOT rolled RETURNING project_id, key, value)
	INSERT INTO tag_hours (project_id, key, value, hour, n)
	SELECT t.project_id, t.key, t.value, t.ts - t.ts % 3600000, count(*)
	FROM r JOIN event_tags t ON t.project_id = r.project_id AND t.key = r.key AND t.value = r.value
	GROUP BY 1, 2, 3, 4
	ON CONFLICT (project_id, key, value, hour) DO UPDATE SET n = excluded.n`

var _ tidings.Loader = (*DB)(nil)
