package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// ApplyInsight applies c inside the group-committed transaction.
func (db *DB) ApplyInsight(ctx context.Context, accountID int64, c *tidings.InsightChange) (*tidings.Insight, error) {
	res, err := db.submit(ctx, &writeJob{accountID: accountID, insight: c})
	if err != nil {
		return nil, err
	}
	return res.insight, nil
}

// numberPattern is tidings.ParseDecimal's syntax: what the database may do arithmetic on.
const numberPattern = `^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?$`

// sqlApplyInsight applies a change in one statement, atomic across instances: the row
// is created or locked by the upsert, and an increment is computed by PostgreSQL in
// exact numeric arithmetic on the value it holds ($9, the signed delta, is NULL for an
// update). A value that is not a number, or a result too long to keep, updates nothing
// and returns no row. The history point is written by the same statement.
const sqlApplyInsight = `WITH up AS (
	INSERT INTO insights AS i (project_id, title, value, prefix, suffix, icon, change, updated_at)
	VALUES ($1, $2, $3, coalesce($4, ''), coalesce($5, ''), coalesce($6, ''), $7, $8)
	ON CONFLICT (project_id, title) DO UPDATE SET
	  value = CASE WHEN $9::text IS NULL THEN excluded.value
	               WHEN i.value ~ '` + numberPattern + `' THEN (i.value::numeric + $9::text::numeric)::text
	               ELSE i.value END,
	  prefix = coalesce($4, i.prefix), suffix = coalesce($5, i.suffix), icon = coalesce($6, i.icon),
	  change = excluded.change, updated_at = excluded.updated_at
	WHERE $9::text IS NULL OR CASE WHEN i.value ~ '` + numberPattern + `'
	  THEN length((i.value::numeric + $9::text::numeric)::text) <= ` + "256" + ` ELSE false END
	RETURNING id, value, prefix, suffix, icon),
  point AS (INSERT INTO insight_points (insight_id, ts, value) SELECT id, $8, value FROM up)
SELECT value, prefix, suffix, icon FROM up`

func (b *batch) applyInsight(ctx context.Context, accountID int64, c *tidings.InsightChange) (*tidings.Insight, error) {
	p, err := b.project(ctx, accountID, c.Project)
	if err != nil {
		return nil, err
	}
	now := fromMS(b.now)
	// What the insight is when it is new: the domain's rules, as everywhere.
	fresh, err := c.Apply(nil, now)
	if err != nil {
		return nil, err
	}
	if err := roomForInsight(ctx, b.tx, p, c.Title); err != nil {
		return nil, err
	}
	var delta *string
	if c.Change == tidings.ChangeIncrement || c.Change == tidings.ChangeDecrement {
		d := fresh.Value // 0 + the signed change
		delta = &d
	}
	next := &tidings.Insight{Project: p.Name, Title: c.Title, Change: c.Change, UpdatedAt: now}
	err = b.tx.QueryRow(ctx, sqlApplyInsight, p.ID, c.Title, fresh.Value, c.Prefix, c.Suffix, c.Icon, c.Change, b.now, delta).
		Scan(&next.Value, &next.Prefix, &next.Suffix, &next.Icon)
	if noRows(err) {
		// Nothing changed; the row is locked by this transaction, so what it holds now
		// is what the statement saw. The domain says what is wrong with it.
		cur, err := findInsightTx(ctx, b.tx, p, c.Title)
		if err != nil {
			return nil, err
		}
		if _, err := c.Apply(cur, now); err != nil {
			return nil, err
		}
		return nil, tidings.InsightNotNumeric(c.Title, cur.Value)
	}
	if err != nil {
		return nil, err
	}
	return next, nil
}

const insightColumns = `i.title, i.value, i.prefix, i.suffix, i.icon, i.change, i.updated_at`

func scanInsight(r pgx.Row, extra ...any) (*tidings.Insight, error) {
	in := &tidings.Insight{}
	var updated int64
	if err := r.Scan(append([]any{&in.Project, &in.Title, &in.Value, &in.Prefix, &in.Suffix, &in.Icon, &in.Change, &updated}, extra...)...); err != nil {
		return nil, err
	}
	in.UpdatedAt = fromMS(updated)
	return in, nil
}

func findInsightTx(ctx context.Context, q querier, p *tidings.Project, title string) (*tidings.Insight, error) {
	return scanInsight(q.QueryRow(ctx, `SELECT p.name, `+insightColumns+` FROM insights i JOIN projects p ON p.id = i.project_id
		WHERE i.project_id = $1 AND i.title = $2`, p.ID, title))
}

// findInsight returns one insight of the account (the relay's read).
func (db *DB) findInsight(ctx context.Context, accountID int64, project, title string) (*tidings.Insight, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	in, err := findInsightTx(ctx, db.pool, p, title)
	return in, mapErr(err)
}

// ListInsights returns the project's insights ordered by title.
func (db *DB) ListInsights(ctx context.Context, accountID int64, project string) ([]*tidings.Insight, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	return query(ctx, db.pool, scanInsightWithID, `SELECT p.name, `+insightColumns+`, i.id FROM insights i JOIN projects p ON p.id = i.project_id
		 WHERE i.project_id = $1 ORDER BY i.title COLLATE "C"`, p.ID)
}

// scanInsightWithID reads a row of (project name, insightColumns, id) with the
// insight's id as its creation order.
func scanInsightWithID(r pgx.Row) (*tidings.Insight, error) {
	var created int64
	in, err := scanInsight(r, &created)
	if in != nil {
		in.Created = created
	}
	return in, err
}

// InsightHistory returns up to limit most recent points of one insight, oldest first.
func (db *DB) InsightHistory(ctx context.Context, accountID int64, project, title string, limit int) ([]tidings.InsightPoint, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	var id int64
	err = db.row(ctx, `SELECT id FROM insights WHERE project_id = $1 AND title = $2`, p.ID, title).Scan(&id)
	if noRows(err) {
		return nil, tidings.InsightNotFound(project, title)
	}
	if err != nil {
		return nil, err
	}
	return query(ctx, db.pool, func(r pgx.Row) (tidings.InsightPoint, error) {
		var pt tidings.InsightPoint
		var ts int64
		err := r.Scan(&ts, &pt.Value)
		pt.Time = fromMS(ts)
		return pt, err
	}, `SELECT ts, value FROM (SELECT id, ts, value FROM insight_points WHERE insight_id = $1 ORDER BY ts DESC, id DESC LIMIT $2) x
		ORDER BY ts, id`, id, limit)
}

// DeleteInsight deletes an insight; its history goes with it (foreign key).
func (db *DB) DeleteInsight(ctx context.Context, accountID int64, project, title string) error {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return err
	}
	tag, err := db.exec(ctx, `DELETE FROM insights WHERE project_id = $1 AND title = $2`, p.ID, title)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.InsightNotFound(project, title)
	}
	return nil
}
