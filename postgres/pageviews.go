package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// ListPageViews returns a project's page views (or a user's), newest first, from the
// index of the project's or the user's views: the walk stops at the page's end.
func (db *DB) ListPageViews(ctx context.Context, accountID int64, q tidings.PageViewQuery) (*tidings.PageViewPage, error) {
	p, err := findProject(ctx, db.pool, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = tidings.DefaultPageViews
	case limit > tidings.MaxPageViewsRead:
		limit = tidings.MaxPageViewsRead
	}
	var before *viewCursor
	if q.Before != "" {
		c, ok := parseViewCursor(q.Before)
		if !ok {
			var pr tidings.Problems
			pr.Add("before", "cursor", "is not a cursor of this list")
			return nil, pr.Err()
		}
		before = &c
	}
	var sb strings.Builder
	args := []any{}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	sb.WriteString(`SELECT u.user_id, v.ts, v.id, coalesce(tp.text, ''), coalesce(tt.text, ''), coalesce(tr.text, ''), v.entry
		FROM page_views v JOIN people u ON u.id = v.person_ref
		LEFT JOIN page_texts tp ON tp.id = v.path LEFT JOIN page_texts tt ON tt.id = v.title LEFT JOIN page_texts tr ON tr.id = v.referrer
		WHERE `)
	if q.UserID != "" {
		var ref int64
		err := db.row(ctx, `SELECT id FROM people WHERE project_id = $1 AND user_id = $2`, p.ID, q.UserID).Scan(&ref)
		if noRows(err) {
			return &tidings.PageViewPage{Views: []tidings.PageView{}}, nil
		}
		if err != nil {
			return nil, err
		}
		// The user's own index (page_views_person); the user is of the project.
		sb.WriteString(`v.person_ref = ` + arg(ref))
	} else {
		sb.WriteString(`v.project_id = ` + arg(p.ID))
	}
	if !q.Since.IsZero() {
		sb.WriteString(` AND v.ts >= ` + arg(ms(q.Since)))
	}
	if !q.Until.IsZero() {
		sb.WriteString(` AND v.ts < ` + arg(ms(q.Until)))
	}
	if before != nil {
		sb.WriteString(` AND (v.ts, v.id) < (` + arg(before.ts) + `, ` + arg(before.id) + `)`)
	}
	sb.WriteString(` ORDER BY v.ts DESC, v.id DESC LIMIT ` + arg(limit+1))
	var cursors []viewCursor
	views, err := query(ctx, db.pool, func(r pgx.Row) (tidings.PageView, error) {
		var v tidings.PageView
		var c viewCursor
		err := r.Scan(&v.UserID, &c.ts, &c.id, &v.Path, &v.Title, &v.Referrer, &v.Entry)
		v.Timestamp = fromMS(c.ts)
		cursors = append(cursors, c)
		return v, err
	}, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	page := &tidings.PageViewPage{Views: views}
	if len(views) > limit {
		page.Views = views[:limit]
		page.Next = cursors[limit-1].String()
	}
	return page, nil
}

// viewCursor is where a page of views ends: its last view's time and id.
type viewCursor struct{ ts, id int64 }

func (c viewCursor) String() string {
	return strconv.FormatInt(c.ts, 36) + "." + strconv.FormatInt(c.id, 36)
}

func parseViewCursor(s string) (viewCursor, bool) {
	a, b, ok := strings.Cut(s, ".")
	if !ok {
		return viewCursor{}, false
	}
	ts, err1 := strconv.ParseInt(a, 36, 64)
	id, err2 := strconv.ParseInt(b, 36, 64)
	return viewCursor{ts, id}, err1 == nil && err2 == nil && ts >= 0 && id > 0
}

// PageStats answers the Pages view of whole UTC days from the daily counts: a few rows
// a day, whatever the number of views.
func (db *DB) PageStats(ctx context.Context, accountID int64, q tidings.PageStatsQuery) (*tidings.PageStats, error) {
	p, err := findProject(ctx, db.pool, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	lo, hi := floorDay(ms(q.From)), floorDay(ms(q.To)+dayMS-1)
	if hi <= lo || (hi-lo)/dayMS > tidings.MaxPageStatsDays {
		var pr tidings.Problems
		pr.Add("to", "range", "must be after from, at most %d days", tidings.MaxPageStatsDays)
		return nil, pr.Err()
	}
	batch := &pgx.Batch{}
	batch.Queue(`SELECT day, views, entries, users FROM page_days WHERE project_id = $1 AND day >= $2 AND day < $3 ORDER BY day`, p.ID, lo, hi)
	batch.Queue(topSQL(`SELECT path AS k, sum(views) AS n FROM page_path_days WHERE project_id = $1 AND day >= $2 AND day < $3 GROUP BY 1`, "$4"),
		p.ID, lo, hi, tidings.TopPagesShown)
	batch.Queue(topSQL(`SELECT path AS k, sum(entries) AS n FROM page_path_days WHERE project_id = $1 AND day >= $2 AND day < $3 AND entries > 0 GROUP BY 1`, "$4"),
		p.ID, lo, hi, tidings.TopPagesShown)
	batch.Queue(topSQL(`SELECT host AS k, sum(entries) AS n FROM page_referrer_days WHERE project_id = $1 AND day >= $2 AND day < $3 GROUP BY 1`, "$4"),
		p.ID, lo, hi, tidings.TopPagesShown)
	res := db.pool.SendBatch(ctx, batch)
	defer res.Close()
	st := &tidings.PageStats{}
	counted := map[int64]tidings.PageDay{}
	rows, err := res.Query()
	if err != nil {
		return nil, mapErr(err)
	}
	for rows.Next() {
		var day, views, entries, users int64
		if err := rows.Scan(&day, &views, &entries, &users); err != nil {
			rows.Close()
			return nil, mapErr(err)
		}
		counted[day] = tidings.PageDay{Day: fromMS(day), Views: views, Users: users}
		st.Views += views
		st.Entries += entries
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	for day := lo; day < hi; day += dayMS {
		d, ok := counted[day]
		if !ok {
			d = tidings.PageDay{Day: fromMS(day)}
		}
		st.Days = append(st.Days, d)
	}
	for _, top := range []*[]tidings.PageCount{&st.TopPages, &st.TopEntries, &st.TopReferrers} {
		rows, err := res.Query()
		if err != nil {
			return nil, mapErr(err)
		}
		*top = []tidings.PageCount{}
		for rows.Next() {
			var c tidings.PageCount
			if err := rows.Scan(&c.Value, &c.Views); err != nil {
				rows.Close()
				return nil, mapErr(err)
			}
			*top = append(*top, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, mapErr(err)
		}
	}
	return st, mapErr(res.Close())
}

// topSQL is a top list: of counts (k, a page_texts id, and n, one row per k), the
// limit (a parameter) largest, ties by their text in byte order. Only the counts as
// large as the limit-th are looked up by text, not every one of a range's thousands
// of paths.
func topSQL(counts, limit string) string {
	return `WITH c AS (` + counts + `),
		cut AS (SELECT n FROM c ORDER BY n DESC OFFSET ` + limit + ` - 1 LIMIT 1)
		SELECT t.text, c.n FROM c JOIN page_texts t ON t.id = c.k
		WHERE c.n > 0 AND c.n >= coalesce((SELECT n FROM cut), 0)
		ORDER BY c.n DESC, t.text COLLATE "C" LIMIT ` + limit
}

// floorDay is the start of the UTC day of t (unix ms).
func floorDay(t int64) int64 {
	r := t % dayMS
	if r < 0 {
		r += dayMS
	}
	return t - r
}

// sqlSessions counts a user's sessions ($1 its row id): its activity minutes, in
// order (the primary key's), each one after a gap of more than $2 ms a new session.
const sqlSessions = `SELECT count(*) FROM (SELECT minute - lag(minute) OVER (ORDER BY minute) AS gap
	FROM user_minutes WHERE person_ref = $1) m WHERE gap IS NULL OR gap > $2`

const sessionGapMS = tidings.SessionGapMinutes * 60_000

// UserActivity returns a user's sessions, activity by day since since (from the
// minute of since on), and most viewed pages: from its minutes and its views per path.
func (db *DB) UserActivity(ctx context.Context, accountID int64, project, userID string, since time.Time) (*tidings.Activity, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	var ref int64
	if err := db.row(ctx, `SELECT id FROM people WHERE project_id = $1 AND user_id = $2`, p.ID, userID).Scan(&ref); err != nil {
		return nil, notFound(err, tidings.PersonNotFound(project, userID))
	}
	from := ms(since)
	from -= from % 60_000
	batch := &pgx.Batch{}
	batch.Queue(sqlSessions, ref, sessionGapMS)
	batch.Queue(`SELECT minute - minute % 86400000, sum(events), sum(views) FROM user_minutes
		WHERE person_ref = $1 AND minute >= $2 GROUP BY 1 ORDER BY 1`, ref, from)
	batch.Queue(topSQL(`SELECT path AS k, views AS n FROM page_person_paths WHERE person_ref = $1`, "$2"), ref, tidings.TopPagesShown)
	res := db.pool.SendBatch(ctx, batch)
	defer res.Close()
	a := &tidings.Activity{Days: []tidings.ActivityDay{}, TopPages: []tidings.PageCount{}}
	if err := res.QueryRow().Scan(&a.Sessions); err != nil {
		return nil, mapErr(err)
	}
	rows, err := res.Query()
	if err != nil {
		return nil, mapErr(err)
	}
	for rows.Next() {
		var d tidings.ActivityDay
		var day int64
		if err := rows.Scan(&day, &d.Events, &d.Views); err != nil {
			rows.Close()
			return nil, mapErr(err)
		}
		d.Day = fromMS(day)
		a.Days = append(a.Days, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	if rows, err = res.Query(); err != nil {
		return nil, mapErr(err)
	}
	for rows.Next() {
		var c tidings.PageCount
		if err := rows.Scan(&c.Value, &c.Views); err != nil {
			rows.Close()
			return nil, mapErr(err)
		}
		a.TopPages = append(a.TopPages, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	return a, mapErr(res.Close())
}

// sessions counts a user's sessions (its row id).
func sessions(ctx context.Context, q querier, ref int64) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, sqlSessions, ref, sessionGapMS).Scan(&n)
	return n, mapErr(err)
}

// SetIgnoreGPC sets whether the project records visitors whose browser signals Global
// Privacy Control.
func (db *DB) SetIgnoreGPC(ctx context.Context, accountID int64, project string, ignore bool) error {
	return db.setProject(ctx, accountID, project, "ignore_gpc", ignore)
}
