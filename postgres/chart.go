package postgres

import (
	"context"
	"errors"
	"github.com/jackc/pgx/v5/pgconn"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// The questions of charts and funnels (package charts): every event a feed search
// selects, and the hourly counts.

// ScanEvents calls fn with every event of the project that the feed lists for q, in
// no particular order, reading at most budget of them: one more means the question is
// over its budget (tidings.ErrScanBudget). Every condition of the feed is checked in
// the query, so that each row read is one of the answer's.
func (db *DB) ScanEvents(ctx context.Context, accountID int64, q tidings.EventQuery, budget int, fn func(*tidings.Event) error) error {
	if err := q.CheckUsers(); err != nil {
		return err
	}
	p, err := findProject(ctx, db.pool, accountID, q.Project)
	if err != nil {
		return err
	}
	var channelID int64
	if q.Channel != "" {
		if channelID, err = db.channelID(ctx, p, q.Channel); err != nil {
			return err
		}
	}
	if emptyPriority(q) {
		return nil // priority:>urgent: no event
	}
	sqlText, args := scanQuery(p.ID, channelID, q, max(budget, 0)+1)
	// The scan runs in a read-only transaction whose statements may take at most
	// scanTimeout: the planner, not the budget, decides how many rows it reads to
	// find the matching ones, and the timeout bounds that work. Its matches are
	// counted first: a question over its budget is refused before any is decoded.
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return mapErr(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = `+strconv.Itoa(int(scanTimeout/time.Millisecond))); err != nil {
		return mapErr(err)
	}
	var matches int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (`+sqlText+`) s`, args...).Scan(&matches); err != nil {
		return scanErr(err)
	}
	if matches > budget {
		return tidings.ErrScanBudget
	}
	rows, err := tx.Query(ctx, sqlText, args...)
	if err != nil {
		return scanErr(err)
	}
	defer rows.Close()
	scan, n := scanEvent(q.Project), 0
	for rows.Next() {
		if n++; n > budget {
			return tidings.ErrScanBudget
		}
		ev, err := scan(rows)
		if err != nil {
			return mapErr(err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	return scanErr(rows.Err())
}

// scanTimeout bounds each statement of a chart's scan (PostgreSQL's
// statement_timeout): one that runs longer is refused as too costly.
const scanTimeout = 5 * time.Second

// scanErr is a scan's error: its statement's timeout (query_canceled while ctx is
// still live) is the question's budget.
func scanErr(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "57014" {
		return tidings.ErrScanBudget
	}
	return mapErr(err)
}

// scanQuery builds ScanEvents' query: the feed's conditions (channel, event name and
// its words, tags as event_tags rows, users, time range, words as the search vector),
// no order, at most limit rows.
func scanQuery(project, channel int64, q tidings.EventQuery, limit int) (string, []any) {
	var sb strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	proj := arg(project)
	sb.WriteString(`SELECT ` + eventColumns + ` WHERE e.project_id = ` + proj)
	if channel != 0 {
		sb.WriteString(` AND e.channel_id = ` + arg(channel))
	}
	if q.Event != "" {
		sb.WriteString(` AND e.event = ` + arg(q.Event))
	}
	sb.WriteString(priorityRange("e.priority", q.MinPriority, q.MaxPriority))
	if len(q.Users) > 0 {
		users := slices.Compact(slices.Sorted(slices.Values(q.Users)))
		// <> '': the feed reads a journey from events_user, which holds no event without a user.
		sb.WriteString(` AND e.user_id = ANY(` + arg(users) + `::text[]) AND e.user_id <> ''`)
	}
	timeRange(&sb, "e", q.Since, q.Until, arg)
	for _, t := range q.Tags {
		sb.WriteString(` AND EXISTS (SELECT 1 FROM event_tags d WHERE d.event_id = e.id AND d.key = ` + arg(t.Key) +
			` AND d.value = ` + arg(t.Value) + ` AND d.project_id = ` + proj + `)`)
	}
	// An event name's words find a rare name among the project's events through the
	// search index; in one channel they would make the planner read the index's
	// (project-wide) matches rather than the channel's few events, so there the name
	// is only compared.
	terms := q.Terms
	if channel == 0 {
		terms = withNameWords(q.Terms, q.Event)
	}
	if len(terms) > 0 {
		sb.WriteString(` AND e.search @@ to_tsquery('simple', ` + arg(tsQuery(terms)) + `)`)
	}
	sb.WriteString(` LIMIT ` + arg(limit))
	return sb.String(), args
}

// CountHours returns the project's (or one channel's) event counts per channel and
// UTC hour in [from, to), from the hourly counts kept with every batch.
func (db *DB) CountHours(ctx context.Context, accountID int64, project, channel string, from, to time.Time) ([]tidings.HourCount, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	q := `SELECT c.name, n.hour, n.n FROM event_counts n JOIN channels c ON c.id = n.channel_id
		WHERE c.project_id = $1 AND n.hour >= $2 AND n.hour < $3 AND n.n > 0`
	args := []any{p.ID, ms(from), ms(to)}
	if channel != "" {
		id, err := db.channelID(ctx, p, channel)
		if err != nil {
			return nil, err
		}
		q += ` AND n.channel_id = $4`
		args = append(args, id)
	}
	return query(ctx, db.pool, func(r pgx.Row) (tidings.HourCount, error) {
		var h tidings.HourCount
		var hour int64
		err := r.Scan(&h.Channel, &hour, &h.N)
		h.Hour = fromMS(hour)
		return h, err
	}, q+` ORDER BY n.hour, c.name`, args...)
}

var _ tidings.ChartStore = (*DB)(nil)
