package sqlite

import (
	"context"
	"time"

	"github.com/tidings-dev/tidings"
)

// Placeholders until the store keeps members' routes and digests (issue 39); the
// store's helper replaces this file with routes.go.

var errRoutesPending = tidings.Errorf(tidings.EInternal, "routes: not in this store yet")

func (db *DB) SetRoutes(ctx context.Context, accountID, userID int64, project, channel string, r *tidings.Routes) error {
	return errRoutesPending
}

func (db *DB) AccountRoutes(ctx context.Context, accountID int64) ([]*tidings.MemberRoute, error) {
	return nil, nil
}

func (db *DB) SetDigest(ctx context.Context, accountID, userID int64, project, every string) error {
	return errRoutesPending
}

func (db *DB) MemberDigests(ctx context.Context, accountID, userID int64) (map[string]string, error) {
	return nil, nil
}

func (db *DB) ListDigests(ctx context.Context) ([]*tidings.DigestPref, error) { return nil, nil }

func (db *DB) ClaimDigest(ctx context.Context, p *tidings.DigestPref, periodEnd time.Time, job *tidings.Delivery) (bool, error) {
	return false, errRoutesPending
}

func (db *DB) DigestOf(ctx context.Context, accountID int64, project string, from, to time.Time) (*tidings.DigestContent, error) {
	return nil, errRoutesPending
}

func (db *DB) SetEscalation(ctx context.Context, accountID int64, project string, after time.Duration) error {
	return errRoutesPending
}
