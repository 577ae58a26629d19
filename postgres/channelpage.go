package postgres

import (
	"context"

	"github.com/tidings-dev/tidings"
)

// PageChannels returns one page of the project's channels, by name.
func (db *DB) PageChannels(ctx context.Context, accountID int64, q tidings.ChannelQuery) (*tidings.ChannelPage, error) {
	p, err := findProject(ctx, db.pool, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	// strpos, not LIKE: a search is plain text, whatever it holds.
	list, err := query(ctx, db.pool, channelScanner(p), `SELECT id, name, created_at FROM channels WHERE project_id = $1 AND strpos(name, $2) > 0 AND name COLLATE "C" > $3::text
		ORDER BY name COLLATE "C" LIMIT $4`, p.ID, q.Search, q.After, q.Limit+1)
	if err != nil {
		return nil, err
	}
	// A first page that holds them all has counted them (the sidebar's, on every page).
	total := len(list)
	if q.After != "" || total > q.Limit {
		if err := db.row(ctx, `SELECT count(*) FROM channels WHERE project_id = $1 AND strpos(name, $2) > 0`,
			p.ID, q.Search).Scan(&total); err != nil {
			return nil, err
		}
	}
	return tidings.NewChannelPage(q, list, total), nil
}
