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

func (b *batch) applyInsight(ctx context.Context, accountID int64, c *tidings.InsightChange) (*tidings.Insight, error) {
	p, err := b.project(ctx, accountID, c.Project)
	if err != nil {
		return nil, err
	}
	var current *tidings.Insight
	cur := tidings.Insight{Project: p.Name}
	var updated int64
	err = b.queryRow(ctx, sqlFindInsight, p.ID, c.Title).
		Scan(&cur.Title, &cur.Value, &cur.Prefix, &cur.Suffix, &cur.Icon, &cur.Change, &updated)
	if err == nil {
		cur.UpdatedAt = fromMS(updated)
		current = &cur
	} else if err = nullIfNoRows(err); err != nil {
		return nil, err
	}
	next, err := c.Apply(current, b.now)
	if err != nil {
		return nil, err
	}
	var id int64
	if err := b.queryRow(ctx, sqlUpsertInsight, p.ID, next.Title, next.Value, next.Prefix, next.Suffix, next.Icon,
		next.Change, ms(b.now)).Scan(&id); err != nil {
		return nil, err
	}
	if err := b.exec(ctx, sqlInsertPoint, id, ms(b.now), next.Value); err != nil {
		return nil, err
	}
	return next, nil
}

// ListInsights returns the project's insights ordered by title.
func (db *DB) ListInsights(ctx context.Context, accountID int64, project string) ([]*tidings.Insight, error) {
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx,
		`SELECT title, value, prefix, suffix, icon, change, updated_at, id FROM insights WHERE project_id = ? ORDER BY title`, p.ID)
	if err != nil {
		return nil, err
	}
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
	p, err := findProject(ctx, db.read, accountID, project)
	if err != nil {
		return nil, err
	}
	var id int64
	err = db.read.QueryRowContext(ctx, `SELECT id FROM insights WHERE project_id = ? AND title = ?`, p.ID, title).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.Errorf(tidings.ENotFound, "no insight %q in project %q", title, project)
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
	p, err := findProject(ctx, db.read, accountID, project)
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
		return tidings.Errorf(tidings.ENotFound, "no insight %q in project %q", title, project)
	}
	return nil
}
