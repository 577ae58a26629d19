package sqlite

import (
	"context"

	"github.com/tidings-dev/tidings"
)

// PageChannels returns one page of the project's channels, by name.
func (db *DB) PageChannels(ctx context.Context, accountID int64, q tidings.ChannelQuery) (*tidings.ChannelPage, error) {
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	// instr, not LIKE: a search is plain text, whatever it holds.
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, created_at FROM channels
		WHERE project_id = ? AND instr(name, ?) > 0 AND name > ? ORDER BY name LIMIT ?`, p.ID, q.Search, q.After, q.Limit+1)
	if err != nil {
		return nil, err
	}
	list, err := scanChannels(rows, p)
	if err != nil {
		return nil, err
	}
	// A first page that holds them all has counted them (the sidebar's, on every page).
	total := len(list)
	if q.After != "" || total > q.Limit {
		if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM channels WHERE project_id = ? AND instr(name, ?) > 0`,
			p.ID, q.Search).Scan(&total); err != nil {
			return nil, err
		}
	}
	return tidings.NewChannelPage(q, list, total), nil
}
