package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/tidings-dev/tidings"
)

// The Pages view (PageStats), answered from the daily counts only.

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

// PageStats answers the Pages view from the daily counts.
func (db *DB) PageStats(ctx context.Context, accountID int64, q tidings.PageStatsQuery) (*tidings.PageStats, error) {
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
	if st.TopPages, st.TopEntries, err = topPaths(ctx, tx, p.ID, from, to); err != nil {
		return nil, err
	}
	st.TopReferrers, err = topCounts(ctx, tx, topQuery("page_referrer_days", "host", "entries"), p.ID, from, to, p.ID, tidings.TopPagesShown)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// sqlPathTotals sums each path's views and entries over a range of days.
const sqlPathTotals = `SELECT t.text, s.views, s.entries FROM (SELECT path, sum(views) AS views, sum(entries) AS entries
	FROM page_path_days WHERE project_id = ? AND day >= ? AND day < ? GROUP BY path) s JOIN page_texts t ON t.id = s.path AND t.project_id = ?`

// topPaths is the most viewed paths and entry pages of a range, from one pass over
// its daily counts of paths.
func topPaths(ctx context.Context, tx *sql.Tx, project, from, to int64) (pages, entries []tidings.PageCount, err error) {
	rows, err := tx.QueryContext(ctx, sqlPathTotals, project, from, to, project)
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
// table's primary key (project_id, day, …) and sorts only the texts they name.
func topQuery(table, ref, count string) string {
	return `SELECT t.text, s.n FROM (SELECT ` + ref + ` AS ref, sum(` + count + `) AS n FROM ` + table + `
		WHERE project_id = ? AND day >= ? AND day < ? GROUP BY 1) s JOIN page_texts t ON t.id = s.ref AND t.project_id = ?
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
