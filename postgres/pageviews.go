package postgres

import (
	"cmp"
	"context"
	"slices"
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
	// The top pages and entry pages from one pass over the paths' counts: of the whole
	// months in the range [m1, m2) from their months' rows, of the other days from theirs.
	m1, m2 := monthOf(lo), monthOf(hi)
	if m1 < lo {
		m1 = nextMonth(m1)
	}
	if m2 <= m1 {
		m1, m2 = hi, hi // no whole month: days only
	}
	batch.Queue(`WITH c AS MATERIALIZED (SELECT path AS k, sum(views) AS v, sum(entries) AS e FROM (
		    SELECT path, views, entries FROM page_path_days WHERE project_id = $1 AND day >= $2 AND day < $5
		    UNION ALL SELECT path, views, entries FROM page_path_days WHERE project_id = $1 AND day >= $6 AND day < $3
		    UNION ALL SELECT path, views, entries FROM page_path_months WHERE project_id = $1 AND month >= $5 AND month < $6) x
		  GROUP BY 1)
		SELECT 0, * FROM `+topOf("c", "v", "$4")+` x UNION ALL SELECT 1, * FROM `+topOf("c", "e", "$4")+` y`,
		p.ID, lo, hi, tidings.TopPagesShown, m1, m2)
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
	st.TopPages, st.TopEntries, st.TopReferrers = []tidings.PageCount{}, []tidings.PageCount{}, []tidings.PageCount{}
	for _, lists := range [][]*[]tidings.PageCount{{&st.TopPages, &st.TopEntries}, {&st.TopReferrers}} {
		rows, err := res.Query()
		if err != nil {
			return nil, mapErr(err)
		}
		for rows.Next() {
			var c tidings.PageCount
			list := 0
			dest := []any{&c.Value, &c.Views}
			if len(lists) > 1 {
				dest = append([]any{&list}, dest...)
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, mapErr(err)
			}
			*lists[list] = append(*lists[list], c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, mapErr(err)
		}
	}
	// Each list came in its order; the union of two need not keep it.
	for _, top := range []*[]tidings.PageCount{&st.TopPages, &st.TopEntries} {
		slices.SortFunc(*top, func(a, b tidings.PageCount) int {
			return cmp.Or(cmp.Compare(b.Views, a.Views), strings.Compare(a.Value, b.Value))
		})
	}
	return st, mapErr(res.Close())
}

// topOf is a top list of a CTE of counts (k, a page_texts id, and column n), as a
// subquery (text, n): like topSQL's.
func topOf(cte, n, limit string) string {
	return `(SELECT t.text, c.` + n + ` AS n FROM ` + cte + ` c JOIN page_texts t ON t.id = c.k
		WHERE c.` + n + ` > 0 AND c.` + n + ` >= coalesce((SELECT ` + n + ` FROM ` + cte + ` ORDER BY ` + n + ` DESC OFFSET ` + limit + ` - 1 LIMIT 1), 0)
		ORDER BY c.` + n + ` DESC, t.text COLLATE "C" LIMIT ` + limit + `)`
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

// UserActivity returns a user's sessions (people.sessions, sessions_count.go), activity
// by day since since (from the minute of since on), and most viewed pages: from its
// minutes and its views per path.
func (db *DB) UserActivity(ctx context.Context, accountID int64, project, userID string, since time.Time) (*tidings.Activity, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	var ref, sessions int64
	if err := db.row(ctx, `SELECT id, sessions FROM people WHERE project_id = $1 AND user_id = $2`, p.ID, userID).Scan(&ref, &sessions); err != nil {
		return nil, notFound(err, tidings.PersonNotFound(project, userID))
	}
	from := ms(since)
	from -= from % 60_000
	batch := &pgx.Batch{}
	batch.Queue(`SELECT minute - minute % 86400000, sum(events), sum(views) FROM user_minutes
		WHERE person_ref = $1 AND minute >= $2 GROUP BY 1 ORDER BY 1`, ref, from)
	batch.Queue(topSQL(`SELECT path AS k, views AS n FROM page_person_paths WHERE person_ref = $1`, "$2"), ref, tidings.TopPagesShown)
	res := db.pool.SendBatch(ctx, batch)
	defer res.Close()
	a := &tidings.Activity{Sessions: sessions, Days: []tidings.ActivityDay{}, TopPages: []tidings.PageCount{}}
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

// SetIgnoreGPC sets whether the project records visitors whose browser signals Global
// Privacy Control.
func (db *DB) SetIgnoreGPC(ctx context.Context, accountID int64, project string, ignore bool) error {
	return db.setProject(ctx, accountID, project, "ignore_gpc", ignore)
}
