package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// sqlActualMinutes is every user's activity per minute, from its events and page views.
const sqlActualMinutes = `ev AS (SELECT p.id AS r, e.ts - e.ts % 60000 AS m, count(*) AS n
	  FROM events e JOIN people p ON p.project_id = e.project_id AND p.user_id = e.user_id WHERE e.user_id <> '' GROUP BY 1, 2),
	pv AS (SELECT person_ref AS r, ts - ts % 60000 AS m, count(*) AS n FROM page_views GROUP BY 1, 2),
	actual AS (SELECT coalesce(ev.r, pv.r) AS r, coalesce(ev.m, pv.m) AS m, coalesce(ev.n, 0) AS events, coalesce(pv.n, 0) AS views
	  FROM ev FULL JOIN pv ON ev.r = pv.r AND ev.m = pv.m)`

// pageChecks are the checks of the page views' counts and the users' minutes.
var pageChecks = []pgCheck{
	// A user's page views, and its first and last seen around them (user_seen, as for
	// its events); a view of a user of another project would be listed among its views.
	{kind: "person.page_views", run: kindRows(`SELECT CASE WHEN p.page_views <> coalesce(v.n, 0) THEN 'person.page_views' ELSE 'user_seen' END,
			'project ' || p.project_id || ' user ' || p.user_id,
			CASE WHEN p.page_views <> coalesce(v.n, 0) THEN coalesce(v.n, 0)::text ELSE 'first seen <= ' || v.first || ', last seen >= ' || v.last END,
			CASE WHEN p.page_views <> coalesce(v.n, 0) THEN p.page_views::text ELSE 'first seen ' || p.first_seen || ', last seen ' || p.last_seen END
		FROM people p LEFT JOIN (SELECT person_ref, count(*) AS n, min(ts) AS first, max(ts) AS last FROM page_views GROUP BY 1) v
		  ON v.person_ref = p.id
		WHERE p.page_views <> coalesce(v.n, 0) OR v.first < p.first_seen OR v.last > p.last_seen
		UNION ALL
		SELECT 'person.page_views', 'page view ' || v.id, 'a user of project ' || v.project_id, 'a user of project ' || p.project_id
		FROM page_views v JOIN people p ON p.id = v.person_ref WHERE p.project_id <> v.project_id`)},
	// A user's sessions, kept as its minutes change (sessions_count.go), counted again
	// from all its minutes.
	{kind: "person.sessions", query: `WITH s AS (SELECT person_ref, count(*) AS n FROM (SELECT person_ref,
			  minute - lag(minute) OVER (PARTITION BY person_ref ORDER BY minute) AS gap FROM user_minutes) m
			WHERE gap IS NULL OR gap > ` + sessionGap + ` GROUP BY 1)
		SELECT 'project ' || p.project_id || ' user ' || p.user_id, coalesce(s.n, 0)::text, p.sessions::text
		FROM people p LEFT JOIN s ON s.person_ref = p.id WHERE coalesce(s.n, 0) <> p.sessions`},
	// A view's texts are of its project's dictionary.
	{kind: "page_view.text", query: `SELECT 'page view ' || v.id, 'texts of project ' || v.project_id,
			'path ' || coalesce(tp.project_id::text, 'none') || ', title ' || coalesce(tt.project_id::text, 'none')
			|| ', referrer ' || coalesce(tr.project_id::text, 'none')
		FROM page_views v LEFT JOIN page_texts tp ON tp.id = v.path LEFT JOIN page_texts tt ON tt.id = v.title
		  LEFT JOIN page_texts tr ON tr.id = v.referrer
		WHERE tp.project_id IS DISTINCT FROM v.project_id OR (v.title <> 0 AND tt.project_id IS DISTINCT FROM v.project_id)
		  OR (v.referrer <> 0 AND tr.project_id IS DISTINCT FROM v.project_id)`},
	// A row of a minute: its counts are its user's events and views in it.
	{kind: "user_minute", query: `WITH ` + sqlActualMinutes + `
		SELECT 'user ' || u.person_ref || ' minute ' || u.minute,
			coalesce(a.events || ' events, ' || a.views || ' views', 'no row'), u.events || ' events, ' || u.views || ' views'
		FROM user_minutes u LEFT JOIN actual a ON a.r = u.person_ref AND a.m = u.minute
		WHERE u.events + u.views > 0 AND (a.r IS NULL OR a.events <> u.events OR a.views <> u.views)`},
	// With every row right, the rows count every activity when their totals do; only
	// when they do not are the minutes without a row looked for.
	{kind: "user_minute.missing", query: `WITH totals AS (SELECT
			(SELECT coalesce(sum(events), 0) FROM user_minutes) AS events, (SELECT count(*) FROM events WHERE user_id <> '') AS want_events,
			(SELECT coalesce(sum(views), 0) FROM user_minutes) AS views, (SELECT count(*) FROM page_views) AS want_views),
		` + sqlActualMinutes + `
		SELECT 'user ' || a.r || ' minute ' || a.m, a.events || ' events, ' || a.views || ' views', 'no row'
		FROM totals, actual a
		WHERE (totals.events <> totals.want_events OR totals.views <> totals.want_views)
		  AND NOT EXISTS (SELECT 1 FROM user_minutes u WHERE u.person_ref = a.r AND u.minute = a.m)`},
	{kind: "user_minute.zero", query: `SELECT 'user ' || person_ref || ' minute ' || minute, 'no row', events || ' events, ' || views || ' views'
		FROM user_minutes WHERE events + views <= 0`},
	{kind: "page_day", query: `WITH actual AS (SELECT project_id, ts - ts % 86400000 AS day, count(*) AS views,
			count(*) FILTER (WHERE entry) AS entries, count(DISTINCT person_ref) AS users FROM page_views GROUP BY 1, 2)
		SELECT 'project ' || coalesce(a.project_id, d.project_id) || ' day ' || coalesce(a.day, d.day),
			coalesce(a.views || ' views, ' || a.entries || ' entries, ' || a.users || ' users', 'no row'),
			coalesce(d.views || ' views, ' || d.entries || ' entries, ' || d.users || ' users', 'no row')
		FROM actual a FULL JOIN page_days d ON d.project_id = a.project_id AND d.day = a.day
		WHERE a.views IS DISTINCT FROM d.views OR a.entries IS DISTINCT FROM d.entries OR a.users IS DISTINCT FROM d.users`},
	{kind: "page_user_day", query: `WITH actual AS (SELECT project_id, ts - ts % 86400000 AS day, person_ref, count(*) AS views
			FROM page_views GROUP BY 1, 2, 3)
		SELECT 'project ' || coalesce(a.project_id, d.project_id) || ' day ' || coalesce(a.day, d.day) || ' user ' || coalesce(a.person_ref, d.person_ref),
			coalesce(a.views::text, 'no row'), coalesce(d.views::text, 'no row')
		FROM actual a FULL JOIN page_user_days d ON d.project_id = a.project_id AND d.day = a.day AND d.person_ref = a.person_ref
		WHERE a.views IS DISTINCT FROM d.views`},
	{kind: "page_path_day", query: `WITH actual AS (SELECT project_id, ts - ts % 86400000 AS day, path, count(*) AS views,
			count(*) FILTER (WHERE entry) AS entries FROM page_views GROUP BY 1, 2, 3)
		SELECT 'project ' || coalesce(a.project_id, d.project_id) || ' day ' || coalesce(a.day, d.day) || ' path ' || coalesce(a.path, d.path),
			coalesce(a.views || ' views, ' || a.entries || ' entries', 'no row'), coalesce(d.views || ' views, ' || d.entries || ' entries', 'no row')
		FROM actual a FULL JOIN page_path_days d ON d.project_id = a.project_id AND d.day = a.day AND d.path = a.path
		WHERE a.views IS DISTINCT FROM d.views OR a.entries IS DISTINCT FROM d.entries`},
	{kind: "page_path_month", query: `WITH actual AS (SELECT project_id,
			(extract(epoch FROM date_trunc('month', to_timestamp(ts / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint AS month, path,
			count(*) AS views, count(*) FILTER (WHERE entry) AS entries FROM page_views GROUP BY 1, 2, 3)
		SELECT 'project ' || coalesce(a.project_id, d.project_id) || ' month ' || coalesce(a.month, d.month) || ' path ' || coalesce(a.path, d.path),
			coalesce(a.views || ' views, ' || a.entries || ' entries', 'no row'), coalesce(d.views || ' views, ' || d.entries || ' entries', 'no row')
		FROM actual a FULL JOIN page_path_months d ON d.project_id = a.project_id AND d.month = a.month AND d.path = a.path
		WHERE a.views IS DISTINCT FROM d.views OR a.entries IS DISTINCT FROM d.entries`},
	{kind: "page_person_path", query: `WITH actual AS (SELECT person_ref, path, count(*) AS views FROM page_views GROUP BY 1, 2)
		SELECT 'user ' || coalesce(a.person_ref, d.person_ref) || ' path ' || coalesce(a.path, d.path),
			coalesce(a.views::text, 'no row'), coalesce(d.views::text, 'no row')
		FROM actual a FULL JOIN page_person_paths d ON d.person_ref = a.person_ref AND d.path = a.path
		WHERE a.views IS DISTINCT FROM d.views`},
	{kind: "page_referrer_day", run: checkReferrerDays},
}

// kindRows is a check whose query returns one row per inconsistency: kind, where,
// expected, found.
func kindRows(query string) func(ctx context.Context, db *DB, tx pgx.Tx, r *tidings.CheckReport) error {
	return func(ctx context.Context, db *DB, tx pgx.Tx, r *tidings.CheckReport) error {
		rows, err := tx.Query(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var kind, where, expected, found *string
			if err := rows.Scan(&kind, &where, &expected, &found); err != nil {
				return err
			}
			r.Add(tidings.Inconsistency{Kind: deref(kind), Where: deref(where), Expected: deref(expected), Found: deref(found)})
		}
		return rows.Err()
	}
}

// checkReferrerDays compares the entries per referrer host and day with the views: a
// referrer's host is Go's (tidings.ReferrerHost), so the entries are read per
// referrer, day and project, and summed per host here.
func checkReferrerDays(ctx context.Context, db *DB, tx pgx.Tx, r *tidings.CheckReport) error {
	type key struct {
		project, day int64
		host         string
	}
	actual := map[key]int64{}
	rows, err := tx.Query(ctx, `SELECT v.project_id, v.ts - v.ts % 86400000, t.text, count(*) FROM page_views v
		JOIN page_texts t ON t.id = v.referrer WHERE v.entry GROUP BY 1, 2, 3`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k key
		var ref string
		var n int64
		if err := rows.Scan(&k.project, &k.day, &ref, &n); err != nil {
			rows.Close()
			return err
		}
		if k.host = tidings.ReferrerHost(ref); k.host != "" {
			actual[k] += n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	add := func(k key, expected, found string) {
		r.Add(tidings.Inconsistency{Kind: "page_referrer_day", Where: fmt.Sprintf("project %d day %d host %s", k.project, k.day, k.host),
			Expected: expected, Found: found})
	}
	rows, err = tx.Query(ctx, `SELECT d.project_id, d.day, coalesce(t.text, '(text ' || d.host || ' missing)'), d.entries
		FROM page_referrer_days d LEFT JOIN page_texts t ON t.id = d.host AND t.project_id = d.project_id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var k key
		var n int64
		if err := rows.Scan(&k.project, &k.day, &k.host, &n); err != nil {
			rows.Close()
			return err
		}
		want, ok := actual[k]
		delete(actual, k)
		switch {
		case !ok:
			add(k, "no row", fmt.Sprint(n))
		case want != n:
			add(k, fmt.Sprint(want), fmt.Sprint(n))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for k, n := range actual {
		add(k, fmt.Sprint(n), "no row")
	}
	return nil
}
