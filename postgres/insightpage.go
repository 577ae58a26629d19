package postgres

import (
	"context"

	"github.com/tidings-dev/tidings"
)

// PageInsights returns one page of the project's insights.
func (db *DB) PageInsights(ctx context.Context, accountID int64, q tidings.InsightQuery) (*tidings.InsightPage, error) {
	p, err := findProject(ctx, db.pool, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	after, err := tidings.InsightCursor(q)
	if err != nil {
		return nil, err
	}
	// Titles compare by bytes, as on SQLite, whatever the database's collation.
	where, order := `i.title COLLATE "C" > $2::text`, `i.title COLLATE "C"`
	if q.ByCreation {
		where, order = `i.id > $2::bigint`, `i.id`
	}
	list, err := query(ctx, db.pool, scanInsightWithID, `SELECT p.name, `+insightColumns+`, i.id FROM insights i JOIN projects p ON p.id = i.project_id
		 WHERE i.project_id = $1 AND `+where+` ORDER BY `+order+` LIMIT $3`, p.ID, after, q.Limit+1)
	if err != nil {
		return nil, err
	}
	return tidings.NewInsightPage(q, list), nil
}
