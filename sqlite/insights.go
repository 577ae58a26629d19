package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tidings-dev/tidings"
)

// ApplyInsight applies c inside the group-committed transaction. The single writer
// (and, across processes, SQLite's write lock taken at BEGIN IMMEDIATE) makes the
// read-modify-write atomic.
func (db *DB) ApplyInsight(ctx context.Context, accountID int64, c *tidings.InsightChange) (*tidings.Insight, error) {
	res, err := db.submit(ctx, &writeJob{accountID: accountID, insight: c})
	if err != nil {
		return nil, err
	}
	return res.insight, nil
}

// pendingInsight is an insight as a batch's changes left it so far, with the history
// points those changes add. It is written once per batch (flushInsights).
type pendingInsight struct {
	projectID int64
	cur       *tidings.Insight
	points    []string
}

type insightKey struct {
	project int64
	title   string
}

// applyInsight applies c to the insight as the batch has it (read once per batch).
// Everything that can refuse the change — the project, a non-numeric value — is
// checked before anything is written, so a refused change needs no savepoint; the
// writes happen in flushInsights, one upsert per insight and one row per change.
func (b *batch) applyInsight(ctx context.Context, accountID int64, c *tidings.InsightChange) (*tidings.Insight, error) {
	p, err := b.project(ctx, accountID, c.Project)
	if err != nil {
		return nil, err
	}
	k := insightKey{p.ID, c.Title}
	pend := b.insights[k]
	if pend == nil {
		pend = &pendingInsight{projectID: p.ID}
		cur := tidings.Insight{Project: p.Name}
		var updated int64
		err = b.queryRow(ctx, sqlFindInsight, p.ID, c.Title).
			Scan(&cur.Title, &cur.Value, &cur.Prefix, &cur.Suffix, &cur.Icon, &cur.Change, &updated)
		if err == nil {
			cur.UpdatedAt = fromMS(updated)
			pend.cur = &cur
		} else if err = nullIfNoRows(err); err != nil {
			return nil, err
		}
	}
	isNew := pend.cur == nil
	if isNew {
		if err := b.roomForInsight(ctx, p, c.Title); err != nil {
			return nil, err
		}
	}
	next, err := c.Apply(pend.cur, b.now)
	if err != nil {
		return nil, err
	}
	if isNew {
		b.insightCounts[p.ID]++
	}
	if b.insights[k] == nil {
		b.insights[k] = pend
		b.insightOrder = append(b.insightOrder, pend)
	}
	pend.cur = next
	pend.points = append(pend.points, next.Value)
	out := *next
	return &out, nil
}

// roomForInsight refuses a new insight of a project that holds MaxInsightsPerProject:
// those written and those of the batch not yet written. The single writer makes the
// count and the insert one step.
func (b *batch) roomForInsight(ctx context.Context, p *tidings.Project, title string) error {
	n, ok := b.insightCounts[p.ID]
	if !ok {
		if err := b.queryRow(ctx, sqlCountInsights, p.ID).Scan(&n); err != nil {
			return err
		}
		b.insightCounts[p.ID] = n
	}
	if n >= tidings.MaxInsightsPerProject {
		return tidings.InsightLimitReached(p.Name, title, tidings.MaxInsightsPerProject)
	}
	return nil
}

// flushInsights writes the batch's insight changes: each insight once, in its last
// state, and a history point for every change.
func (b *batch) flushInsights(ctx context.Context) error {
	for _, pend := range b.insightOrder {
		next := pend.cur
		var id int64
		if err := b.queryRow(ctx, sqlUpsertInsight, pend.projectID, next.Title, next.Value, next.Prefix, next.Suffix, next.Icon,
			next.Change, ms(b.now)).Scan(&id); err != nil {
			return err
		}
		for _, v := range pend.points {
			if err := b.exec(ctx, sqlInsertPoint, id, ms(b.now), v); err != nil {
				return err
			}
		}
	}
	clear(b.insights)
	b.insightOrder = b.insightOrder[:0]
	// A job that runs next may delete insights: count again after it.
	clear(b.insightCounts)
	return nil
}

// ListInsights returns the project's insights ordered by title.
func (db *DB) ListInsights(ctx context.Context, accountID int64, project string) ([]*tidings.Insight, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx,
		`SELECT title, value, prefix, suffix, icon, change, updated_at, id FROM insights WHERE project_id = ? ORDER BY title`, p.ID)
	if err != nil {
		return nil, err
	}
	return scanInsights(rows, p)
}

// scanInsights reads rows of (title, value, prefix, suffix, icon, change, updated_at,
// id) as insights of the project p; none is an empty list.
func scanInsights(rows *sql.Rows, p *tidings.Project) ([]*tidings.Insight, error) {
	defer rows.Close()
	out := []*tidings.Insight{}
	for rows.Next() {
		in := &tidings.Insight{Project: p.Name}
		var updated int64
		if err := rows.Scan(&in.Title, &in.Value, &in.Prefix, &in.Suffix, &in.Icon, &in.Change, &updated, &in.Created); err != nil {
			return nil, err
		}
		in.UpdatedAt = fromMS(updated)
		out = append(out, in)
	}
	return out, rows.Err()
}

// InsightHistory returns up to limit most recent points of one insight, oldest first.
func (db *DB) InsightHistory(ctx context.Context, accountID int64, project, title string, limit int) ([]tidings.InsightPoint, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	var id int64
	err = db.read.QueryRowContext(ctx, `SELECT id FROM insights WHERE project_id = ? AND title = ?`, p.ID, title).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.InsightNotFound(project, title)
	}
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx,
		`SELECT ts, value FROM (SELECT rowid, ts, value FROM insight_points WHERE insight_id = ? ORDER BY ts DESC, rowid DESC LIMIT ?)
		 ORDER BY ts, rowid`, id, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []tidings.InsightPoint{}
	for rows.Next() {
		var ts int64
		var pt tidings.InsightPoint
		if err := rows.Scan(&ts, &pt.Value); err != nil {
			return nil, err
		}
		pt.Time = fromMS(ts)
		out = append(out, pt)
	}
	return out, rows.Err()
}

// DeleteInsight deletes an insight; its history goes with it (foreign key).
func (db *DB) DeleteInsight(ctx context.Context, accountID int64, project, title string) error {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return err
	}
	gone := false
	err = db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM insights WHERE project_id = ? AND title = ?`, p.ID, title)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		gone = n > 0
		return nil
	})
	if err != nil {
		return err
	}
	if !gone {
		return tidings.InsightNotFound(project, title)
	}
	return nil
}
