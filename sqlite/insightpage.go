package sqlite

import (
	"context"

	"github.com/tidings-dev/tidings"
)

// PageInsights returns one page of the project's insights.
func (db *DB) PageInsights(ctx context.Context, accountID int64, q tidings.InsightQuery) (*tidings.InsightPage, error) {
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	after, err := tidings.InsightCursor(q)
	if err != nil {
		return nil, err
	}
	query := `SELECT title, value, prefix, suffix, icon, change, updated_at, id FROM insights
		WHERE project_id = ? AND title > ? ORDER BY title LIMIT ?`
	if q.ByCreation {
		query = `SELECT title, value, prefix, suffix, icon, change, updated_at, id FROM insights
			WHERE project_id = ? AND id > ? ORDER BY id LIMIT ?`
	}
	rows, err := db.read.QueryContext(ctx, query, p.ID, after, q.Limit+1)
	if err != nil {
		return nil, err
	}
	list, err := scanInsights(rows, p)
	if err != nil {
		return nil, err
	}
	return tidings.NewInsightPage(q, list), nil
}
