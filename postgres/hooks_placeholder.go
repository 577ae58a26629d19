package postgres

import (
	"context"

	"github.com/tidings-dev/tidings"
)

// Placeholders until the store keeps inbound hooks (issue 40); the store's helper
// replaces this file with hooks.go.

var errHooksPending = tidings.Errorf(tidings.EInternal, "hooks: not in this store yet")

func (db *DB) CreateHook(ctx context.Context, h *tidings.Hook) error { return errHooksPending }

func (db *DB) ListHooks(ctx context.Context, accountID int64) ([]*tidings.Hook, error) {
	return nil, nil
}

func (db *DB) FindHook(ctx context.Context, accountID int64, id string) (*tidings.Hook, error) {
	return nil, errHooksPending
}

func (db *DB) FindHookByPath(ctx context.Context, pathHash []byte) (*tidings.Hook, error) {
	return nil, tidings.Errorf(tidings.ENotFound, "no such hook")
}

func (db *DB) DeleteHook(ctx context.Context, accountID int64, id string) error {
	return errHooksPending
}

func (db *DB) RecordHookAttempt(ctx context.Context, accountID int64, a *tidings.HookAttempt) error {
	return errHooksPending
}

func (db *DB) ListHookAttempts(ctx context.Context, accountID int64, hookID string) ([]*tidings.HookAttempt, error) {
	return nil, nil
}
