package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/tidings-dev/tidings"
)

// The Pages view (PageStats), answered from the daily counts and the paths' monthly
// ones, never from the views.

// statsDays is the query's range in unix days, or EValidation.
func statsDays(q tidings.PageStatsQuery) (from, to int64, err error) {
	from, to = floorDiv(ms(q.From), msPerDay), floorDiv(ms(q.To), msPerDay)
	if to <= from || to-from > tidings.MaxPageStatsDays {
		var p tidings.Problems
		p.Add("to", "range", "must be 1 to %d days after from", tidings.MaxPageStatsDays)
		return 0, 0, p.Err()
	}
	return from, to, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// PageStats answers the Pages view from the daily counts, and its top pages and entry
// pages from the paths' months it covers whole with the days of the others (pathSpans).
func (db *DB) PageStats(ctx context.Context, accountID int64, q tidings.PageStatsQuery) (*tidings.PageStats, error) {
	return db.pageStats(ctx, accountID, q, pathSpans)
}

// pageStats is PageStats with the paths' totals summed from the spans split makes of
// its range (a benchmark compares pathSpans with the range's days alone).
func (db *DB) pageStats(ctx context.Context, accountID int64, q tidings.PageStatsQuery, split func(from, to int64) []pathSpan) (*tidings.PageStats, error) {
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	from, to, err := statsDays(q)
	if err != nil {
		return nil, err
	}
	// One read transaction: the days and the lists are of the same views.
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	st := &tidings.PageStats{Days: make([]tidings.PageDay, 0, to-from)}
	for d := from; d < to; d++ {
		st.Days = append(st.Days, tidings.PageDay{Day: fromMS(d * msPerDay)})
	}
	rows, err := tx.QueryContext(ctx, `SELECT day, views, entries, users FROM page_days WHERE project_id = ? AND day >= ? AND day < ?`, p.ID, from, to)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var day, views, entries, users int64
		if err := rows.Scan(&day, &views, &entries, &users); err != nil {
			rows.Close()
			return nil, err
		}
		st.Days[day-from].Views, st.Days[day-from].Users = views, users
		st.Views += views
		st.Entries += entries
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if st.Views == 0 {
		st.TopPages, st.TopEntries, st.TopReferrers = []tidings.PageCount{}, []tidings.PageCount{}, []tidings.PageCount{}
		return st, nil
	}
	if st.TopPages, st.TopEntries, err = topPaths(ctx, tx, p.ID, split(from, to)); err != nil {
		return nil, err
	}
	// Referrer hosts are few a day: their days are summed.
	st.TopReferrers, err = topCounts(ctx, tx, topQuery("page_referrer_days", "host", "entries"), p.ID, from, to, p.ID, tidings.TopPagesShown)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// pathSpan is a part of a range's paths' totals: the rows of page_path_days (or of
// page_path_months) of the days (the months' first days) in [from, to), added, or taken
// away when sub.
type pathSpan struct {
	months, sub bool
	from, to    int64
}

// monthRowsCost is what reading a month's rows of paths costs in days' rows: a month
// holds each of its days' paths once, and the paths seen on only some of its days.
const monthRowsCost = 2

// pathSpans splits a range of days [from, to) into what its paths' totals are summed
// from: the months it covers whole from page_path_months; a month it covers in part
// from the days it covers, or, when the month's other days are fewer, from the month
// less those days (rows of a month are the sums of its days' rows). A year of 2,000
// paths a day is so about 12 months' and 30 days' rows rather than 366 days'.
func pathSpans(from, to int64) []pathSpan {
	var spans []pathSpan
	add := func(s pathSpan) { // one span of a kind's adjacent ones, in one reading of its rows
		if s.from >= s.to {
			return
		}
		for i, o := range spans {
			if o.months == s.months && o.sub == s.sub && o.to == s.from {
				spans[i].to = s.to
				return
			}
		}
		spans = append(spans, s)
	}
	for m := monthOf(from); m < to; {
		next := monthOf(m + 31)
		a, b := max(from, m), min(to, next)
		switch {
		case a == m && b == next:
			add(pathSpan{months: true, from: m, to: next})
		case (a-m)+(next-b)+monthRowsCost < b-a:
			add(pathSpan{months: true, from: m, to: next})
			add(pathSpan{sub: true, from: m, to: a})
			add(pathSpan{sub: true, from: b, to: next})
		default:
			add(pathSpan{from: a, to: b})
		}
		m = next
	}
	return spans
}

// pathTotalsQuery sums each path's views and entries over spans: their rows read by
// the tables' primary keys (project_id, day or month, path), added or taken away, and
// grouped by path; a path whose views sum to 0 (all of them on days taken away) is
// not of the range.
func pathTotalsQuery(project int64, spans []pathSpan) (string, []any) {
	var q strings.Builder
	args := make([]any, 0, 3*len(spans)+1)
	q.WriteString(`SELECT t.text, s.views, s.entries FROM (SELECT path, sum(v) AS views, sum(e) AS entries FROM (`)
	for i, s := range spans {
		if i > 0 {
			q.WriteString(` UNION ALL `)
		}
		counts, table, unit := `views AS v, entries AS e`, `page_path_days`, `day`
		if s.sub {
			counts = `-views AS v, -entries AS e`
		}
		if s.months {
			table, unit = `page_path_months`, `month`
		}
		q.WriteString(`SELECT path, ` + counts + ` FROM ` + table + ` WHERE project_id = ? AND ` + unit + ` >= ? AND ` + unit + ` < ?`)
		args = append(args, project, s.from, s.to)
	}
	// CROSS JOIN: each path's text found by its id, not the project's texts (their
	// titles and referrers too) read for the paths.
	q.WriteString(`) GROUP BY path HAVING sum(v) > 0) s CROSS JOIN page_texts t ON t.id = s.path AND t.project_id = ?`)
	return q.String(), append(args, project)
}

// topPaths is the most viewed paths and entry pages of a range, from one pass over
// the rows of its spans of paths' counts.
func topPaths(ctx context.Context, tx *sql.Tx, project int64, spans []pathSpan) (pages, entries []tidings.PageCount, err error) {
	query, args := pathTotalsQuery(project, spans)
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var all, entered []tidings.PageCount
	for rows.Next() {
		var path string
		var v, e int64
		if err := rows.Scan(&path, &v, &e); err != nil {
			return nil, nil, err
		}
		all = append(all, tidings.PageCount{Value: path, Views: v})
		if e > 0 {
			entered = append(entered, tidings.PageCount{Value: path, Views: e})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return topOf(all), topOf(entered), nil
}

// topOf is the TopPagesShown largest counts, ties by value.
func topOf(counts []tidings.PageCount) []tidings.PageCount {
	slices.SortFunc(counts, func(a, b tidings.PageCount) int {
		return cmp.Or(cmp.Compare(b.Views, a.Views), strings.Compare(a.Value, b.Value))
	})
	return append([]tidings.PageCount{}, counts[:min(len(counts), tidings.TopPagesShown)]...)
}

// topQuery sums a daily table's count over a range of days per text (a path or a
// host), largest first, ties by text. It reads the project's rows of those days by the
// table's primary key (project_id, day, …) and sorts only the texts they name, each
// found by its id.
func topQuery(table, ref, count string) string {
	return `SELECT t.text, s.n FROM (SELECT ` + ref + ` AS ref, sum(` + count + `) AS n FROM ` + table + `
		WHERE project_id = ? AND day >= ? AND day < ? GROUP BY 1) s CROSS JOIN page_texts t ON t.id = s.ref AND t.project_id = ?
		WHERE s.n > 0 ORDER BY s.n DESC, t.text LIMIT ?`
}

func topCounts(ctx context.Context, r reader, query string, args ...any) ([]tidings.PageCount, error) {
	rows, err := r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []tidings.PageCount{}
	for rows.Next() {
		var c tidings.PageCount
		if err := rows.Scan(&c.Value, &c.Views); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
