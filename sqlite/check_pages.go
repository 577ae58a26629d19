package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidings-dev/tidings"
)

// The checks of what is derived from page views and of the users' activity minutes
// (pageviews.go): each count is counted again from page_views (and the events) and
// compared both ways, so that a wrong, missing or surplus row is named.

// kindCheck is a check whose query returns one row per inconsistency: kind, where,
// expected, found.
func kindCheck(kind, query string) storeCheck {
	return storeCheck{kind, func(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
		rows, err := tx.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var kind, where, expected, found sql.NullString
			if err := rows.Scan(&kind, &where, &expected, &found); err != nil {
				return err
			}
			r.Add(tidings.Inconsistency{Kind: kind.String, Where: where.String, Expected: expected.String, Found: found.String})
		}
		return rows.Err()
	}}
}

// countsCheck compares a table of counts (have) with the same counts grouped from their
// source (want, a query of the same key and count columns): a row in one and not the
// other, or with other counts, is an inconsistency of kind.
func countsCheck(kind, want, have string, keys, counts []string) storeCheck {
	var on, diff, where, wv, hv string
	for i, k := range keys {
		if i > 0 {
			on += " AND "
			where += " || ' ' || "
		}
		on += "h." + k + " = w." + k
		where += "'" + k + " ' || coalesce(w." + k + ", h." + k + ")"
	}
	for i, c := range counts {
		if i > 0 {
			wv += " || ' ' || "
			hv += " || ' ' || "
		}
		diff += " OR h." + c + " != w." + c
		wv += "'" + c + " ' || w." + c
		hv += "'" + c + " ' || h." + c
	}
	return kindCheck(kind, `WITH w AS (`+want+`)
		SELECT '`+kind+`', `+where+`, CASE WHEN w.`+keys[0]+` IS NULL THEN 'no row' ELSE `+wv+` END,
			CASE WHEN h.`+keys[0]+` IS NULL THEN 'no row' ELSE `+hv+` END
		FROM w FULL JOIN `+have+` h ON `+on+`
		WHERE w.`+keys[0]+` IS NULL OR h.`+keys[0]+` IS NULL`+diff)
}

// pageChecks are the checks of page views' derived rows.
func pageChecks() []storeCheck {
	return []storeCheck{
		{"user_minute", checkUserMinutes},
		{"person.sessions", checkSessions},
		// A user's page views, and its first and last seen around them; a view of a
		// user of another project would be listed among that user's.
		kindCheck("person.page_views", `SELECT CASE WHEN u.page_views != coalesce(v.n, 0) THEN 'person.page_views' ELSE 'user_seen' END,
			'project ' || u.project_id || ' user ' || u.user_id,
			CASE WHEN u.page_views != coalesce(v.n, 0) THEN coalesce(v.n, 0) ELSE 'first seen <= ' || v.first || ', last seen >= ' || v.last END,
			CASE WHEN u.page_views != coalesce(v.n, 0) THEN u.page_views ELSE 'first seen ' || u.first_seen || ', last seen ' || u.last_seen END
		FROM people u LEFT JOIN (SELECT person_ref, count(*) AS n, min(ts) AS first, max(ts) AS last FROM page_views GROUP BY person_ref) v
			ON v.person_ref = u.id
		WHERE u.page_views != coalesce(v.n, 0) OR v.first < u.first_seen OR v.last > u.last_seen
		UNION ALL
		SELECT 'person.page_views', 'page view ' || v.id, 'a user of project ' || v.project_id, coalesce('a user of project ' || u.project_id, 'no user')
		FROM page_views v LEFT JOIN people u ON u.id = v.person_ref WHERE u.project_id IS NOT v.project_id`),
		// A view's texts are entries of its project's dictionary.
		kindCheck("page_view.text", `SELECT 'page_view.text', 'page view ' || v.id, 'texts of project ' || v.project_id,
			'path ' || coalesce(p.project_id, 'none') || ', title ' || coalesce(t.project_id, 'none') || ', referrer ' || coalesce(r.project_id, 'none')
		FROM page_views v LEFT JOIN page_texts p ON p.id = v.path LEFT JOIN page_texts t ON t.id = v.title LEFT JOIN page_texts r ON r.id = v.referrer
		WHERE p.project_id IS NOT v.project_id OR (v.title != 0 AND t.project_id IS NOT v.project_id)
			OR (v.referrer != 0 AND r.project_id IS NOT v.project_id)`),
		countsCheck("page_day", `SELECT project_id, ts / 86400000 AS day, count(*) AS views, sum(entry) AS entries,
			count(DISTINCT person_ref) AS users FROM page_views GROUP BY 1, 2`, "page_days",
			[]string{"project_id", "day"}, []string{"views", "entries", "users"}),
		countsCheck("page_user_day", `SELECT project_id, ts / 86400000 AS day, person_ref, count(*) AS views FROM page_views GROUP BY 1, 2, 3`,
			"page_user_days", []string{"project_id", "day", "person_ref"}, []string{"views"}),
		countsCheck("page_path_day", `SELECT project_id, ts / 86400000 AS day, path, count(*) AS views, sum(entry) AS entries
			FROM page_views GROUP BY 1, 2, 3`, "page_path_days", []string{"project_id", "day", "path"}, []string{"views", "entries"}),
		countsCheck("page_person_path", `SELECT person_ref, path, count(*) AS views FROM page_views GROUP BY 1, 2`,
			"page_person_paths", []string{"person_ref", "path"}, []string{"views"}),
		{"page_referrer_day", checkReferrerDays},
	}
}

// checkUserMinutes counts each user's activity per minute again, from its events and
// page views, against user_minutes.
func checkUserMinutes(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	rows, err := tx.QueryContext(ctx, `WITH w AS (SELECT ref, minute, sum(ev) AS events, sum(vw) AS views FROM (
			SELECT u.id AS ref, e.ts / 60000 AS minute, 1 AS ev, 0 AS vw FROM events e
				JOIN people u ON u.project_id = e.project_id AND u.user_id = e.user_id WHERE e.user_id != ''
			UNION ALL SELECT person_ref, ts / 60000, 0, 1 FROM page_views)
		GROUP BY 1, 2)
		SELECT coalesce(w.ref, h.person_ref), coalesce(w.minute, h.minute), w.ref IS NOT NULL, coalesce(w.events, 0), coalesce(w.views, 0),
			h.person_ref IS NOT NULL, coalesce(h.events, 0), coalesce(h.views, 0)
		FROM w FULL JOIN user_minutes h ON h.person_ref = w.ref AND h.minute = w.minute
		WHERE w.ref IS NULL OR h.person_ref IS NULL OR h.events != w.events OR h.views != w.views`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ref, minute, wantEvents, wantViews, events, views int64
		var want, have bool
		if err := rows.Scan(&ref, &minute, &want, &wantEvents, &wantViews, &have, &events, &views); err != nil {
			return err
		}
		where := fmt.Sprintf("user %d minute %d", ref, minute)
		expected, found := fmt.Sprintf("events %d views %d", wantEvents, wantViews), fmt.Sprintf("events %d views %d", events, views)
		switch {
		case !have:
			r.Add(tidings.Inconsistency{Kind: "user_minute.missing", Where: where, Expected: expected, Found: "no row"})
		case events <= 0 && views <= 0:
			r.Add(tidings.Inconsistency{Kind: "user_minute.zero", Where: where, Expected: "no row", Found: found})
		case !want:
			r.Add(tidings.Inconsistency{Kind: "user_minute", Where: where, Expected: "no row", Found: found})
		default:
			r.Add(tidings.Inconsistency{Kind: "user_minute", Where: where, Expected: expected, Found: found})
		}
	}
	return rows.Err()
}

// checkReferrerDays counts each day's entries per referrer host again (the host is
// tidings.ReferrerHost of the referrer, computed here as AddPageViews did).
func checkReferrerDays(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	type key struct {
		project, day int64
		host         string
	}
	want := map[key]int64{}
	rows, err := tx.QueryContext(ctx, `SELECT v.project_id, v.ts / 86400000, coalesce(t.text, ''), count(*) FROM page_views v
		LEFT JOIN page_texts t ON t.id = v.referrer WHERE v.entry AND v.referrer != 0 GROUP BY 1, 2, v.referrer`)
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
			want[k] += n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = tx.QueryContext(ctx, `SELECT h.project_id, h.day, coalesce(t.text, '#' || h.host), h.entries FROM page_referrer_days h
		LEFT JOIN page_texts t ON t.id = h.host AND t.project_id = h.project_id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k key
		var n int64
		if err := rows.Scan(&k.project, &k.day, &k.host, &n); err != nil {
			return err
		}
		where := fmt.Sprintf("project %d day %d host %s", k.project, k.day, k.host)
		w, ok := want[k]
		delete(want, k)
		switch {
		case !ok:
			r.Add(tidings.Inconsistency{Kind: "page_referrer_day", Where: where, Expected: "no row", Found: fmt.Sprint(n)})
		case w != n:
			r.Add(tidings.Inconsistency{Kind: "page_referrer_day", Where: where, Expected: fmt.Sprint(w), Found: fmt.Sprint(n)})
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for k, w := range want {
		r.Add(tidings.Inconsistency{Kind: "page_referrer_day", Where: fmt.Sprintf("project %d day %d host %s", k.project, k.day, k.host),
			Expected: fmt.Sprint(w), Found: "no row"})
	}
	return nil
}

// checkSessions counts each user's sessions again from its activity minutes, in the
// primary key's order (tidings.CountSessions' rule), against people.sessions.
func checkSessions(ctx context.Context, tx *sql.Tx, r *tidings.CheckReport) error {
	counted := map[int64]int64{}
	rows, err := tx.QueryContext(ctx, `SELECT person_ref, minute FROM user_minutes ORDER BY person_ref, minute`)
	if err != nil {
		return err
	}
	var ref, minute, last int64 // people ids start at 1: ref 0 is before the first
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p, &minute); err != nil {
			rows.Close()
			return err
		}
		if p != ref || minute-last > tidings.SessionGapMinutes {
			counted[p]++
		}
		ref, last = p, minute
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = tx.QueryContext(ctx, `SELECT id, project_id, user_id, sessions FROM people`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, project, sessions int64
		var user string
		if err := rows.Scan(&id, &project, &user, &sessions); err != nil {
			return err
		}
		if n := counted[id]; n != sessions {
			r.Add(tidings.Inconsistency{Kind: "person.sessions", Where: fmt.Sprintf("project %d user %s", project, user),
				Expected: fmt.Sprint(n), Found: fmt.Sprint(sessions)})
		}
	}
	return rows.Err()
}
