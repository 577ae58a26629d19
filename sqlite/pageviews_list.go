package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/tidings-dev/tidings"
)

// A project's or a user's page views, newest first (ListPageViews).

// viewCursor is a page's cursor: the last view's time and id, base 36.
func viewCursor(ts, id int64) string {
	return strconv.FormatInt(ts, 36) + "." + strconv.FormatInt(id, 36)
}

func parseViewCursor(s string) (ts, id int64, err error) {
	a, b, ok := strings.Cut(s, ".")
	if ok {
		ts, err = strconv.ParseInt(a, 36, 64)
		if err == nil {
			id, err = strconv.ParseInt(b, 36, 64)
		}
	}
	if !ok || err != nil || ts < 0 || id < 0 || strings.HasPrefix(a, "+") || strings.HasPrefix(b, "+") {
		var p tidings.Problems
		p.Add("before", "cursor", "is not a cursor of a page of views")
		return 0, 0, p.Err()
	}
	return ts, id, nil
}

// viewFilter is what a page of views asks: the project's or one user's (person != 0).
type viewFilter struct {
	project, person int64
	since, until    int64     // unix ms, 0: no bound
	before          *[2]int64 // the cursor's ts and id
	limit           int
}

// viewsQuery reads a page of views (one more, to know whether another page follows)
// by the project's index (project_id, ts, id) or the user's (person_ref, ts, id), from
// where the page starts.
func viewsQuery(f viewFilter) (string, []any) {
	var sb strings.Builder
	sb.WriteString(`SELECT v.id, v.ts, u.user_id, pt.text, coalesce(tt.text, ''), coalesce(rt.text, ''), v.entry
		FROM page_views v JOIN people u ON u.id = v.person_ref AND u.project_id = v.project_id
		JOIN page_texts pt ON pt.id = v.path LEFT JOIN page_texts tt ON tt.id = v.title LEFT JOIN page_texts rt ON rt.id = v.referrer
		WHERE `)
	var args []any
	if f.person != 0 {
		sb.WriteString(`v.person_ref = ? AND v.project_id = ?`)
		args = append(args, f.person, f.project)
	} else {
		sb.WriteString(`v.project_id = ?`)
		args = append(args, f.project)
	}
	if f.since != 0 {
		sb.WriteString(` AND v.ts >= ?`)
		args = append(args, f.since)
	}
	if f.until != 0 {
		sb.WriteString(` AND v.ts < ?`)
		args = append(args, f.until)
	}
	if f.before != nil {
		sb.WriteString(` AND (v.ts, v.id) < (?, ?)`)
		args = append(args, f.before[0], f.before[1])
	}
	sb.WriteString(` ORDER BY v.ts DESC, v.id DESC LIMIT ?`)
	return sb.String(), append(args, f.limit+1)
}

// ListPageViews returns page views newest first, by the project's index of views or
// the user's.
func (db *DB) ListPageViews(ctx context.Context, accountID int64, q tidings.PageViewQuery) (*tidings.PageViewPage, error) {
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = tidings.DefaultPageViews
	}
	limit = min(limit, tidings.MaxPageViewsRead)
	page := &tidings.PageViewPage{Views: []tidings.PageView{}}
	f := viewFilter{project: p.ID, limit: limit}
	if q.UserID != "" {
		err := db.read.QueryRowContext(ctx, `SELECT id FROM people WHERE project_id = ? AND user_id = ?`, p.ID, q.UserID).Scan(&f.person)
		if errors.Is(err, sql.ErrNoRows) {
			return page, nil
		}
		if err != nil {
			return nil, err
		}
	}
	if !q.Since.IsZero() {
		f.since = ms(q.Since)
	}
	if !q.Until.IsZero() {
		f.until = ms(q.Until)
	}
	if q.Before != "" {
		ts, id, err := parseViewCursor(q.Before)
		if err != nil {
			return nil, err
		}
		f.before = &[2]int64{ts, id}
	}
	query, args := viewsQuery(f)
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lastID, lastTS int64
	for rows.Next() {
		if len(page.Views) == limit {
			page.Next = viewCursor(lastTS, lastID)
			break
		}
		var v tidings.PageView
		if err := rows.Scan(&lastID, &lastTS, &v.UserID, &v.Path, &v.Title, &v.Referrer, &v.Entry); err != nil {
			return nil, err
		}
		v.Timestamp = fromMS(lastTS)
		page.Views = append(page.Views, v)
	}
	return page, rows.Err()
}
