package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/google/uuid"

	"github.com/tidings-dev/tidings"
)

// Check verifies every derived structure against the events. It takes no lock that a
// writer waits for: each check reads one snapshot of the WAL.
func (db *DB) Check(ctx context.Context) (*tidings.CheckReport, error) {
	var events int64
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&events); err != nil {
		return nil, err
	}
	// Side by side on the read pool's connections, each in a read transaction of its
	// own: one snapshot, within which what it compares is read.
	kinds := make([]string, len(sqliteChecks))
	for i, c := range sqliteChecks {
		kinds[i] = c.kind
	}
	r, err := tidings.RunChecks(ctx, kinds, min(runtime.GOMAXPROCS(0), 4), func(ctx context.Context, i int, r *tidings.CheckReport) error {
		return db.runCheck(ctx, sqliteChecks[i], r)
	})
	if err != nil {
		return nil, err
	}
	r.Events = events
	return r, nil
}

// runCheck runs one check in a read transaction of its own connection. The check reads
// indexes at random: the connection maps the file and keeps more pages than a reader
// does, and gives them back after.
func (db *DB) runCheck(ctx context.Context, c storeCheck, r *tidings.CheckReport) error {
	conn, err := db.read.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA mmap_size = 4294967296; PRAGMA cache_size = -131072`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA mmap_size = 0; PRAGMA cache_size = -2000`)
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a deferred BEGIN: a snapshot, no write lock
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return c.run(ctx, tx, r)
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
	// One pass over the tag index checks each row against its event: that it exists
	// (orphan), is of the tag's project (tenant), has the row's time and channel (row),
	// and carries the tag (tag).
	{"tag_index", checkTagRows},
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
	// One grouping of the events checks both a user's count and first/last seen.
	{"user_count", func(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
		rows, err := tx.QueryContext(ctx, `WITH actual AS (SELECT project_id, user_id, count(*) AS n, min(created_at) AS first, max(created_at) AS last
				FROM events WHERE user_id != '' GROUP BY 1, 2)
			SELECT coalesce(a.project_id, p.project_id), coalesce(a.user_id, p.user_id), coalesce(a.n, 0), p.events IS NULL,
				coalesce(p.events, 0), coalesce(a.first, 0), coalesce(a.last, 0), coalesce(p.first_seen, 0), coalesce(p.last_seen, 0)
			FROM actual a FULL JOIN people p ON p.project_id = a.project_id AND p.user_id = a.user_id
			WHERE coalesce(a.n, 0) != coalesce(p.events, -1) OR a.n IS NOT NULL AND (p.first_seen > a.first OR p.last_seen < a.last)
			   OR p.first_seen > p.last_seen`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var project, n, events, first, last, firstSeen, lastSeen int64
			var user string
			var noRow bool
			if err := rows.Scan(&project, &user, &n, &noRow, &events, &first, &last, &firstSeen, &lastSeen); err != nil {
				return err
			}
			where := fmt.Sprintf("project %d user %s", project, user)
			switch {
			case noRow:
				r.Add(tidings.Inconsistency{Kind: "user_count", Where: where, Expected: fmt.Sprint(n), Found: "no row"})
			case n != events:
				r.Add(tidings.Inconsistency{Kind: "user_count", Where: where, Expected: fmt.Sprint(n), Found: fmt.Sprint(events)})
			default:
				r.Add(tidings.Inconsistency{Kind: "user_seen", Where: where,
					Expected: fmt.Sprintf("first seen <= %d, last seen >= %d", first, last), Found: fmt.Sprintf("first seen %d, last seen %d", firstSeen, lastSeen)})
			}
		}
		return rows.Err()
	}},
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

func checkTagRows(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	// A tag's value as the event holds it: one lookup by key (keys follow the naming
	// rule, so quoting them in the path is safe), compared the way the dictionary keeps
	// it (a number as its literal, a boolean as its word).
	rows, err := tx.QueryContext(ctx, `SELECT * FROM (SELECT t.tag_id, t.seq, t.ts, t.channel_id, g.project_id, g.key, g.value,
			e.seq IS NULL AS orphan, coalesce(e.project_id, 0) AS ep, coalesce(e.ts, 0) AS ets, coalesce(e.channel_id, 0) AS ec,
			coalesce(e.tags, '') AS tags,
			CASE json_type(e.tags, '$."' || g.key || '"')
			  WHEN 'text' THEN json_extract(e.tags, '$."' || g.key || '"') IS NOT g.value
			  WHEN 'integer' THEN CAST(g.value AS REAL) != json_extract(e.tags, '$."' || g.key || '"')
			  WHEN 'real' THEN CAST(g.value AS REAL) != json_extract(e.tags, '$."' || g.key || '"')
			  WHEN 'true' THEN g.value != 'true'
			  WHEN 'false' THEN g.value != 'false'
			  ELSE e.seq IS NOT NULL END AS wrong
		FROM event_tags t JOIN tags g ON g.id = t.tag_id LEFT JOIN events e ON e.seq = t.seq)
		WHERE orphan OR ep != project_id OR ets != ts OR ec != channel_id OR wrong`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var tag, seq, ts, channel, project, eProject, eTS, eChannel int64
		var key, value, tags string
		var orphan, wrongTag bool
		if err := rows.Scan(&tag, &seq, &ts, &channel, &project, &key, &value, &orphan, &eProject, &eTS, &eChannel, &tags, &wrongTag); err != nil {
			return err
		}
		where := fmt.Sprintf("tag %d seq %d", tag, seq)
		switch {
		case orphan:
			r.Add(tidings.Inconsistency{Kind: "tag_index.orphan", Where: where, Expected: "an event", Found: "none"})
		case eProject != project:
			r.Add(tidings.Inconsistency{Kind: "tag_index.tenant", Where: where, Expected: fmt.Sprintf("project %d", project), Found: fmt.Sprintf("project %d", eProject)})
		default:
			if eTS != ts || eChannel != channel {
				r.Add(tidings.Inconsistency{Kind: "tag_index.row", Where: where,
					Expected: fmt.Sprintf("ts %d channel %d", eTS, eChannel), Found: fmt.Sprintf("ts %d channel %d", ts, channel)})
			}
			if wrongTag {
				r.Add(tidings.Inconsistency{Kind: "tag_index.tag", Where: where, Expected: key + ":" + value, Found: tags})
			}
		}
	}
	return rows.Err()
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
