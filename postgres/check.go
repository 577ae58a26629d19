package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// Check verifies every derived structure against the events. It takes no lock that a
// writer waits for.
//
// The full-text vector is a column of the event's own row, so it cannot name another
// event; the checks are that every event past the backfill's watermark has one, and
// that each is made of its event's text (check_search.go).
func (db *DB) Check(ctx context.Context) (*tidings.CheckReport, error) {
	var events int64
	if err := db.row(ctx, `SELECT count(*) FROM events`).Scan(&events); err != nil {
		return nil, err
	}
	// Side by side, each in a read-only, repeatable-read transaction of its own: one
	// snapshot, within which what it compares is read.
	kinds := make([]string, len(pgChecks))
	for i, c := range pgChecks {
		kinds[i] = c.kind
	}
	r, err := tidings.RunChecks(ctx, kinds, 4, func(ctx context.Context, i int, r *tidings.CheckReport) error {
		return db.runCheck(ctx, pgChecks[i], r)
	})
	if err != nil {
		return nil, err
	}
	r.Events = events
	return r, nil
}

func (db *DB) runCheck(ctx context.Context, c pgCheck, r *tidings.CheckReport) error {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return mapErr(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if c.run != nil {
		return c.run(ctx, db, tx, r)
	}
	return eachRow(ctx, tx, c.query, func(where, expected, found string) {
		r.Add(tidings.Inconsistency{Kind: c.kind, Where: where, Expected: expected, Found: found})
	})
}

// eachRow runs a query that returns one row per inconsistency: where, expected, found.
func eachRow(ctx context.Context, tx pgx.Tx, query string, fn func(where, expected, found string), args ...any) error {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var where, expected, found *string
		if err := rows.Scan(&where, &expected, &found); err != nil {
			return err
		}
		fn(deref(where), deref(expected), deref(found))
	}
	return rows.Err()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// pgCheck is a query that returns one row per inconsistency: where, expected, found
// (as text); or, for a check that is more than a query, run.
type pgCheck struct {
	kind, query string
	run         func(ctx context.Context, db *DB, tx pgx.Tx, r *tidings.CheckReport) error
}

// pgChecks are the checks, the longest first (they run four at a time); the page
// views' are in check_pages.go.
var pgChecks = append([]pgCheck{
	{kind: "search.text", run: checkSearchText},
	// One pass over the tag index checks each row against its event: that it exists
	// (orphan), is of the row's project (tenant), has its time and channel (row), and
	// carries the tag; json (not jsonb) keeps a number's text as sent, as the row does.
	{kind: "tag_index", query: `SELECT 'event ' || t.event_id || ' key ' || t.key,
			CASE WHEN e.id IS NULL THEN 'an event'
			     WHEN e.project_id <> t.project_id THEN 'project ' || t.project_id
			     WHEN e.ts <> t.ts OR e.channel_id <> t.channel_id THEN 'ts ' || e.ts || ' channel ' || e.channel_id
			     ELSE t.key || ':' || t.value END,
			CASE WHEN e.id IS NULL THEN 'none'
			     WHEN e.project_id <> t.project_id THEN 'project ' || e.project_id
			     WHEN e.ts <> t.ts OR e.channel_id <> t.channel_id THEN 'ts ' || t.ts || ' channel ' || t.channel_id
			     ELSE e.tags END
		FROM event_tags t LEFT JOIN events e ON e.id = t.event_id
		WHERE e.id IS NULL OR e.project_id <> t.project_id OR e.ts <> t.ts OR e.channel_id <> t.channel_id
		   OR (e.tags::json ->> t.key) IS DISTINCT FROM t.value`},
	// With every row right, rows and events' tags match one to one when their numbers
	// do; only when they do not are the events missing rows looked for.
	{kind: "tag_index.missing", query: `WITH totals AS (SELECT (SELECT count(*) FROM event_tags) AS rows,
			(SELECT coalesce(sum((SELECT count(*) FROM json_object_keys(e.tags::json))), 0) FROM events e) AS want)
		SELECT 'project ' || e.project_id || ' event ' || e.id, 'a row for ' || j.key || ':' || j.value, 'none'
		FROM totals, events e CROSS JOIN LATERAL json_each_text(e.tags::json) j
		WHERE totals.rows <> totals.want AND NOT EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = e.id AND t.key = j.key)`},
	{kind: "tag_count", query: `WITH actual AS (SELECT project_id, key, value, count(*) AS n FROM event_tags GROUP BY 1, 2, 3)
		SELECT 'project ' || coalesce(a.project_id, c.project_id) || ' tag ' || coalesce(a.key, c.key) || ':' || coalesce(a.value, c.value),
			coalesce(a.n, 0)::text, coalesce(c.n, 0)::text
		FROM actual a FULL JOIN tag_counts c ON c.project_id = a.project_id AND c.key = a.key AND c.value = a.value
		WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)`},
	// The hourly counts of the rolled tags (tag_hours), each against its events per hour
	// (a row of 0 is deleted, never kept).
	{kind: "tag_hour", query: `WITH actual AS (SELECT t.project_id, t.key, t.value, t.ts - t.ts % 3600000 AS hour, count(*) AS n
			FROM event_tags t JOIN tag_counts c ON c.project_id = t.project_id AND c.key = t.key AND c.value = t.value
			WHERE c.rolled GROUP BY 1, 2, 3, 4),
		kept AS (SELECT h.* FROM tag_hours h JOIN tag_counts c ON c.project_id = h.project_id AND c.key = h.key AND c.value = h.value
			WHERE c.rolled)
		SELECT 'project ' || coalesce(a.project_id, h.project_id) || ' tag ' || coalesce(a.key, h.key) || ':' || coalesce(a.value, h.value)
			|| ' hour ' || coalesce(a.hour, h.hour),
			coalesce(a.n::text, 'no row'), coalesce(h.n::text, 'no row')
		FROM actual a FULL JOIN kept h ON h.project_id = a.project_id AND h.key = a.key AND h.value = a.value AND h.hour = a.hour
		WHERE a.n IS DISTINCT FROM h.n`},
	// A tag that is not rolled has no hourly counts: its events are read instead.
	{kind: "tag_hour.unrolled", query: `SELECT 'project ' || h.project_id || ' tag ' || h.key || ':' || h.value || ' hour ' || h.hour,
			'no row (the tag is not rolled)', 'a count of ' || h.n
		FROM tag_hours h LEFT JOIN tag_counts c ON c.project_id = h.project_id AND c.key = h.key AND c.value = h.value
		WHERE c.rolled IS NOT TRUE`},
	// A tag of tagRollup events or more is rolled (by the batch that took it there).
	{kind: "tag_hour.rolled", run: checkTagsRolled},
	{kind: "search.missing", query: `SELECT 'project ' || e.project_id || ' event ' || e.id, 'a search vector', 'none'
		FROM events e WHERE e.search IS NULL AND e.id >= (SELECT coalesce(max(next_id), '') FROM search_backfill)`},
	{kind: "hour_count", query: `WITH actual AS (SELECT channel_id, ts - ts % 3600000 AS hour, count(*) AS n FROM events GROUP BY 1, 2)
		SELECT 'channel ' || coalesce(a.channel_id, c.channel_id) || ' hour ' || coalesce(a.hour, c.hour),
			coalesce(a.n, 0)::text, coalesce(c.n, 0)::text
		FROM actual a FULL JOIN event_counts c ON c.channel_id = a.channel_id AND c.hour = a.hour
		WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)`},
	{kind: "user_count", query: `WITH actual AS (SELECT project_id, user_id, count(*) AS n FROM events WHERE user_id <> '' GROUP BY 1, 2)
		SELECT 'project ' || coalesce(a.project_id, p.project_id) || ' user ' || coalesce(a.user_id, p.user_id),
			coalesce(a.n, 0)::text, coalesce(p.events::text, 'no row')
		FROM actual a FULL JOIN people p ON p.project_id = a.project_id AND p.user_id = a.user_id
		WHERE coalesce(a.n, 0) <> coalesce(p.events, -1)`},
	{kind: "user_seen", query: `SELECT 'project ' || p.project_id || ' user ' || p.user_id,
			'first seen <= ' || a.first || ', last seen >= ' || a.last, 'first seen ' || p.first_seen || ', last seen ' || p.last_seen
		FROM people p JOIN (SELECT project_id, user_id, min(created_at) AS first, max(created_at) AS last
			FROM events WHERE user_id <> '' GROUP BY 1, 2) a ON a.project_id = p.project_id AND a.user_id = p.user_id
		WHERE p.first_seen > a.first OR p.last_seen < a.last OR p.first_seen > p.last_seen`},
	{kind: "insight_history", query: `SELECT 'insight ' || i.id || ' (' || i.title || ')', i.value, coalesce(l.value, 'no point')
		FROM insights i LEFT JOIN LATERAL (SELECT value FROM insight_points WHERE insight_id = i.id ORDER BY id DESC LIMIT 1) l ON true
		WHERE l.value IS DISTINCT FROM i.value`},
	// An event's jobs go with it (deleteEvents, sqlDropOrphanDeliveries), and a job
	// expanded after its event went adds nothing (ReplaceDelivery).
	{kind: "outbox.event", query: `SELECT 'delivery ' || d.id || ' (' || d.kind || ')', 'event ' || d.event_id, 'none'
		FROM deliveries d WHERE d.kind IN (` + eventDeliveryKinds + `) AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)`},
	// A user's groups are listed through the memberships: one naming a group of another
	// project would show it on the user's page.
	{kind: "groups.tenant", query: `SELECT 'group ' || g.id || ' (' || g.group_id || ') member ' || p.id || ' (' || p.user_id || ')',
			'project ' || g.project_id, 'project ' || p.project_id
		FROM group_members m JOIN groups g ON g.id = m.group_ref JOIN people p ON p.id = m.person_ref
		WHERE g.project_id <> p.project_id`},
	// A deletion removes the count of a tag it leaves without events: a row of 0 would
	// offer the tag as a filter of nothing.
	{kind: "tag_count.zero", query: `SELECT 'project ' || project_id || ' tag ' || key || ':' || value, 'no row', 'a count of ' || n
		FROM tag_counts WHERE n = 0`},
	{kind: "outbox.tenant", query: `SELECT 'delivery ' || d.id || ' event ' || d.event_id, 'account ' || d.account_id, 'account ' || p.account_id
		FROM deliveries d JOIN events e ON e.id = d.event_id JOIN projects p ON p.id = e.project_id
		WHERE d.event_id <> '' AND p.account_id <> d.account_id`},
	// A press is found by its account (FindPress): one naming another account's event
	// would show that event's action to the wrong account.
	{kind: "press.tenant", query: `SELECT 'press ' || x.id || ' event ' || x.event_id, 'account ' || p.account_id, 'account ' || x.account_id
		FROM event_presses x JOIN events e ON e.id = x.event_id JOIN projects p ON p.id = e.project_id
		WHERE p.account_id <> x.account_id`},
	// A member's routes and digests are read by account (AccountRoutes, ListDigests):
	// a row naming another account's user, project or channel would notify a stranger
	// or show one account's names to another.
	{kind: "route.tenant", query: `SELECT 'route of user ' || r.user_id || ' project ' || r.project_id || coalesce(' channel ' || r.channel_id, ''),
			'account ' || r.account_id || coalesce(', channel of project ' || r.project_id, ''),
			'user of account ' || u.account_id || ', project of account ' || p.account_id || coalesce(', channel of project ' || c.project_id, '')
		FROM member_routes r JOIN users u ON u.id = r.user_id JOIN projects p ON p.id = r.project_id
		LEFT JOIN channels c ON c.id = r.channel_id
		WHERE u.account_id <> r.account_id OR p.account_id <> r.account_id OR c.project_id <> r.project_id`},
	{kind: "digest.tenant", query: `SELECT 'digest of user ' || d.user_id || ' project ' || d.project_id, 'account ' || d.account_id,
			'user of account ' || u.account_id || ', project of account ' || p.account_id
		FROM member_digests d JOIN users u ON u.id = d.user_id JOIN projects p ON p.id = d.project_id
		WHERE u.account_id <> d.account_id OR p.account_id <> d.account_id`},
	// A hook is found by its path whatever its account, and its events are published
	// as its account's: a hook naming another account's project, or a channel of
	// another project, would write into a stranger's feed; an attempt of another
	// account would show one account's deliveries to another.
	{kind: "hook.tenant", query: `SELECT 'hook ' || h.id || ' project ' || h.project_id || ' channel ' || h.channel_id,
			'account ' || h.account_id || ', channel of project ' || h.project_id,
			'project of account ' || p.account_id || ', channel of project ' || c.project_id
		FROM hooks h JOIN projects p ON p.id = h.project_id JOIN channels c ON c.id = h.channel_id
		WHERE p.account_id <> h.account_id OR c.project_id <> h.project_id
		UNION ALL
		SELECT 'attempt ' || a.id || ' of hook ' || a.hook_id, 'account ' || h.account_id, 'account ' || a.account_id
		FROM hook_attempts a JOIN hooks h ON h.id = a.hook_id WHERE a.account_id <> h.account_id`},
	{kind: "event.channel", query: `SELECT 'event ' || e.id, 'channel of project ' || e.project_id, 'channel ' || e.channel_id || ' of project ' || coalesce(c.project_id::text, 'none')
		FROM events e LEFT JOIN channels c ON c.id = e.channel_id WHERE c.project_id IS DISTINCT FROM e.project_id`},
	// A key is claimed without its answer and given it before its write commits: an
	// empty answer committed would replay nothing.
	{kind: "idempotency.answer", query: `SELECT 'key ' || k.account_id || '/' || k.key, 'the answer of its write', 'none' FROM idempotency_keys k
		WHERE length(k.body) = 0`},
}, pageChecks...)

func checkTagsRolled(ctx context.Context, db *DB, tx pgx.Tx, r *tidings.CheckReport) error {
	return eachRow(ctx, tx, `SELECT 'project ' || project_id || ' tag ' || key || ':' || value, 'rolled (' || n || ' events)', 'not rolled'
		FROM tag_counts WHERE n >= $1 AND NOT rolled`, func(where, expected, found string) {
		r.Add(tidings.Inconsistency{Kind: "tag_hour.rolled", Where: where, Expected: expected, Found: found})
	}, db.tagRollup)
}
