package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

// Placeholders until the store of issue 38 lands (the sqlite store helper replaces this file).

var errIntentTODO = errors.New("not yet in this store")

func (db *DB) AcknowledgeEvent(ctx context.Context, accountID int64, eventID, by string, at time.Time) (*tidings.Event, bool, error) {
	return nil, false, errIntentTODO
}

func (db *DB) PressAction(ctx context.Context, p *tidings.ActionPress) (*tidings.Event, error) {
	return nil, errIntentTODO
}

func (db *DB) ListPresses(ctx context.Context, accountID int64, eventID string) ([]*tidings.ActionPress, error) {
	return nil, errIntentTODO
}

func (db *DB) FindPress(ctx context.Context, accountID int64, id string) (*tidings.ActionPress, error) {
	return nil, errIntentTODO
}

func (db *DB) Versions(ctx context.Context, accountID int64, project string, t tidings.Thread, limit int) ([]*tidings.Event, int, error) {
	return nil, 0, errIntentTODO
}

func (db *DB) SetRepeatUrgent(ctx context.Context, accountID int64, project string, every time.Duration, times int) error {
	return errIntentTODO
}
