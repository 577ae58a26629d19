package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

// Check verifies every derived structure against the events, in one read transaction
// (one snapshot of the WAL): it takes no lock that a writer waits for.
func (db *DB) Check(ctx context.Context) (*tidings.CheckReport, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a deferred BEGIN: a snapshot, no write lock
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	r := &tidings.CheckReport{}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&r.Events); err != nil {
		return nil, err
	}
	for _, c := range sqliteChecks {
		r.Checks = append(r.Checks, c.kind)
		if err := c.run(ctx, tx, r); err != nil {
			return nil, fmt.Errorf("check %s: %w", c.kind, err)
		}
	}
	return r, nil
}

type storeCheck struct {
	kind string
	run  func(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error
}

// sqlCheck is a check whose query returns one row per inconsistency: where, expected, found.
func sqlCheck(kind, query string) storeCheck {
	return storeCheck{kind, func(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
		return eachRow(ctx, tx, query, func(where, expected, found string) {
			r.Add(tidings.Inconsistency{Kind: kind, Where: where, Expected: expected, Found: found})
		})
	}}
}

func eachRow(ctx context.Context, tx *sql.Tx, query string, fn func(where, expected, found string)) error {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var where, expected, found sql.NullString
		if err := rows.Scan(&where, &expected, &found); err != nil {
			return err
		}
		fn(where.String, expected.String, found.String)
	}
	return rows.Err()
}

// tagValueMatches is true when json_each's row j holds the tag value g.value as the
// dictionary keeps it (a string as is, a number as its literal, a boolean as its word).
const tagValueMatches = `(j.type = 'text' AND j.value = g.value
	OR j.type IN ('integer', 'real') AND CAST(g.value AS REAL) = j.value
	OR j.type IN ('true', 'false') AND j.type = g.value)`

var sqliteChecks = []storeCheck{
	sqlCheck("tag_index.orphan", `SELECT 'tag ' || t.tag_id || ' seq ' || t.seq, 'an event', 'none'
		FROM event_tags t WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = t.seq)`),
	sqlCheck("tag_index.tenant", `SELECT 'tag ' || t.tag_id || ' seq ' || t.seq, 'project ' || g.project_id, 'project ' || e.project_id
		FROM event_tags t JOIN tags g ON g.id = t.tag_id JOIN events e ON e.seq = t.seq WHERE e.project_id != g.project_id`),
	sqlCheck("tag_index.row", `SELECT 'tag ' || t.tag_id || ' seq ' || t.seq,
		'ts ' || e.ts || ' channel ' || e.channel_id, 'ts ' || t.ts || ' channel ' || t.channel_id
		FROM event_tags t JOIN events e ON e.seq = t.seq WHERE e.ts != t.ts OR e.channel_id != t.channel_id`),
	sqlCheck("tag_index.tag", `SELECT 'tag ' || t.tag_id || ' seq ' || t.seq, g.key || ':' || g.value, e.tags
		FROM event_tags t JOIN tags g ON g.id = t.tag_id JOIN events e ON e.seq = t.seq
		WHERE e.project_id = g.project_id AND NOT EXISTS (SELECT 1 FROM json_each(e.tags) j WHERE j.key = g.key AND `+tagValueMatches+`)`),
	// With every row above right, rows and events' tags match one to one when their
	// numbers do, project by project; missingTagRows names the events when they do not.
	{"tag_index.missing", checkTagRowCounts},
	sqlCheck("tag_count", `SELECT 'tag ' || id || ' (' || key || ':' || value || ')', rows, count
		FROM (SELECT g.id, g.key, g.value, g.count, (SELECT count(*) FROM event_tags t WHERE t.tag_id = g.id) AS rows FROM tags g)
		WHERE count != rows`),
	sqlCheck("search.orphan", `SELECT 'seq ' || d.id, 'an event', 'none'
		FROM events_fts_docsize d WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = d.id)`),
	sqlCheck("search.missing", `SELECT 'seq ' || e.seq || ' project ' || e.project_id, 'a row of the full-text index', 'none'
		FROM events e WHERE e.seq > (SELECT coalesce(max(next_seq), 0) FROM search_backfill)
		AND NOT EXISTS (SELECT 1 FROM events_fts_docsize d WHERE d.id = e.seq)`),
	{"search.scope", checkSearchScopes},
	sqlCheck("hour_count", `WITH actual AS (SELECT channel_id, ts - ts % 3600000 AS hour, count(*) AS n FROM events GROUP BY 1, 2)
		SELECT 'channel ' || coalesce(a.channel_id, c.channel_id) || ' hour ' || coalesce(a.hour, c.hour), coalesce(a.n, 0), coalesce(c.n, 0)
		FROM actual a FULL JOIN event_counts c ON c.channel_id = a.channel_id AND c.hour = a.hour
		WHERE coalesce(a.n, 0) != coalesce(c.n, 0)`),
	sqlCheck("user_count", `WITH actual AS (SELECT project_id, user_id, count(*) AS n, min(created_at) AS first, max(created_at) AS last
			FROM events WHERE user_id != '' GROUP BY 1, 2)
		SELECT 'project ' || coalesce(a.project_id, p.project_id) || ' user ' || coalesce(a.user_id, p.user_id), coalesce(a.n, 0), coalesce(p.events, 'no row')
		FROM actual a FULL JOIN people p ON p.project_id = a.project_id AND p.user_id = a.user_id
		WHERE coalesce(a.n, 0) != coalesce(p.events, -1)`),
	sqlCheck("user_seen", `SELECT 'project ' || p.project_id || ' user ' || p.user_id,
		'first seen <= ' || a.first || ', last seen >= ' || a.last, 'first seen ' || p.first_seen || ', last seen ' || p.last_seen
		FROM people p JOIN (SELECT project_id, user_id, min(created_at) AS first, max(created_at) AS last
			FROM events WHERE user_id != '' GROUP BY 1, 2) a ON a.project_id = p.project_id AND a.user_id = p.user_id
		WHERE p.first_seen > a.first OR p.last_seen < a.last OR p.first_seen > p.last_seen`),
	sqlCheck("insight_history", `SELECT 'insight ' || i.id || ' (' || i.title || ')', i.value, coalesce(
			(SELECT value FROM insight_points WHERE insight_id = i.id ORDER BY rowid DESC LIMIT 1), 'no point')
		FROM insights i WHERE i.value IS NOT (SELECT value FROM insight_points WHERE insight_id = i.id ORDER BY rowid DESC LIMIT 1)`),
	sqlCheck("outbox.tenant", `SELECT 'delivery ' || d.id || ' event ' || d.event_id, 'account ' || d.account_id, 'account ' || p.account_id
		FROM deliveries d JOIN events e ON e.id = unhex(replace(d.event_id, '-', '')) JOIN projects p ON p.id = e.project_id
		WHERE d.event_id != '' AND p.account_id != d.account_id`),
	sqlCheck("event.channel", `SELECT 'seq ' || e.seq, 'channel of project ' || e.project_id, 'channel ' || e.channel_id || ' of project ' || coalesce(c.project_id, 'none')
		FROM events e LEFT JOIN channels c ON c.id = e.channel_id WHERE c.project_id IS NOT e.project_id`),
	sqlCheck("event.seq", `SELECT 'events', 'highest seq <= ' || s.last, 'highest seq ' || (SELECT max(seq) FROM events)
		FROM event_seq s WHERE (SELECT max(seq) FROM events) > s.last`),
}

// checkTagRowCounts compares, per project, the tag index's rows with the tags its
// events carry, and names the events whose rows are missing where they differ.
func checkTagRowCounts(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	type count struct{ project, rows, want int64 }
	rows, err := tx.QueryContext(ctx, `SELECT p.id,
		(SELECT count(*) FROM event_tags t WHERE t.tag_id IN (SELECT id FROM tags WHERE project_id = p.id)),
		(SELECT coalesce(sum((SELECT count(*) FROM json_each(e.tags))), 0) FROM events e WHERE e.project_id = p.id)
		FROM projects p`)
	if err != nil {
		return err
	}
	var off []count
	for rows.Next() {
		var c count
		if err := rows.Scan(&c.project, &c.rows, &c.want); err != nil {
			rows.Close()
			return err
		}
		if c.rows != c.want {
			off = append(off, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range off {
		if c.rows > c.want {
			// Surplus rows are named by the row checks above.
			r.Add(tidings.Inconsistency{Kind: "tag_index.missing", Where: fmt.Sprintf("project %d", c.project),
				Expected: fmt.Sprintf("%d rows", c.want), Found: fmt.Sprintf("%d rows", c.rows)})
			continue
		}
		if err := missingTagRows(ctx, tx, c.project, r); err != nil {
			return err
		}
	}
	return nil
}

// missingTagRows names the project's events that lack a row of the tag index.
func missingTagRows(ctx context.Context, tx *sql.Tx, project int64, r *tidings.CheckReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT e.seq, e.id, e.ts, e.tags FROM events e WHERE e.project_id = ? AND e.tags != '{}'`, project)
	if err != nil {
		return err
	}
	type ev struct {
		seq, ts int64
		id      []byte
		tags    tidings.Tags
	}
	var evs []ev
	for rows.Next() {
		var e ev
		var tags string
		if err := rows.Scan(&e.seq, &e.id, &e.ts, &tags); err != nil {
			rows.Close()
			return err
		}
		if err := json.Unmarshal([]byte(tags), &e.tags); err != nil {
			rows.Close()
			return err
		}
		evs = append(evs, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, e := range evs {
		for _, t := range e.tags {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM event_tags WHERE ts = ? AND seq = ?
				AND tag_id = (SELECT id FROM tags WHERE project_id = ? AND key = ? AND value = ?)`,
				e.ts, e.seq, project, t.Key, t.Value).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				r.Add(tidings.Inconsistency{Kind: "tag_index.missing",
					Where:    fmt.Sprintf("project %d event %s (seq %d)", project, uuid.UUID(e.id), e.seq),
					Expected: "a row for " + t.Key + ":" + t.Value, Found: "none"})
			}
		}
	}
	return nil
}

// checkSearchScopes checks, project by project, that the full-text rows carrying a
// project's scope token are those of its events: none of another project, as many as
// it has indexed events.
func checkSearchScopes(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	var projects []int64
	rows, err := tx.QueryContext(ctx, `SELECT id FROM projects ORDER BY id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		projects = append(projects, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var backfill int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(next_seq), 0) FROM search_backfill`).Scan(&backfill); err != nil {
		return err
	}
	for _, p := range projects {
		scope := fmt.Sprintf(`scope:"p%d"`, p)
		err := eachRow(ctx, tx, `SELECT 'seq ' || s.rowid, 'an event of project `+fmt.Sprint(p)+`',
			coalesce('an event of project ' || e.project_id, 'no event')
			FROM events_fts s LEFT JOIN events e ON e.seq = s.rowid
			WHERE events_fts MATCH '`+scope+`' AND e.project_id IS NOT `+fmt.Sprint(p),
			func(where, expected, found string) {
				r.Add(tidings.Inconsistency{Kind: "search.scope", Where: where, Expected: expected, Found: found})
			})
		if err != nil {
			return err
		}
		var indexed, want int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events_fts WHERE events_fts MATCH ?`, scope).Scan(&indexed); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE project_id = ? AND seq > ?`, p, backfill).Scan(&want); err != nil {
			return err
		}
		if indexed < want {
			r.Add(tidings.Inconsistency{Kind: "search.scope", Where: fmt.Sprintf("project %d", p),
				Expected: fmt.Sprintf("at least %d rows with its scope", want), Found: fmt.Sprint(indexed)})
		}
	}
	return nil
}
