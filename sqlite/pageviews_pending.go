package sqlite

// TEMPORARY (this session only, replaced by the page view store before anything
// lands): PageStore's methods, so that every package builds while the store is written.

import (
	"context"
	"time"

	"github.com/tidings-dev/tidings"
)

var errPagesPending = tidings.Errorf(tidings.EUnavailable, "page views are not stored yet")

func (db *DB) AddPageViews(ctx context.Context, accountID int64, c *tidings.NewPageViews) error {
	return errPagesPending
}

func (db *DB) ListPageViews(ctx context.Context, accountID int64, q tidings.PageViewQuery) (*tidings.PageViewPage, error) {
	return nil, errPagesPending
}

func (db *DB) PageStats(ctx context.Context, accountID int64, q tidings.PageStatsQuery) (*tidings.PageStats, error) {
	return nil, errPagesPending
}

func (db *DB) UserActivity(ctx context.Context, accountID int64, project, userID string, since time.Time) (*tidings.Activity, error) {
	return nil, errPagesPending
}

func (db *DB) SetIgnoreGPC(ctx context.Context, accountID int64, project string, ignore bool) error {
	return errPagesPending
}
