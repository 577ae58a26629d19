package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/tidings-dev/tidings"
)

var _ tidings.HookStore = (*DB)(nil)

// Inbound hooks (issue 40): rows of hooks, found by their account and public id or,
// for POST /hooks/{id}, by their path's hash; their delivery logs are rows of
// hook_attempts, the latest tidings.MaxHookAttempts of each. Both go with their
// account, project and channel (foreign keys); every read joins the project and
// channel so that a hook names them as they are.

const hookColumns = `h.id, h.path_hash, h.account_id, p.name, c.name, h.source, h.name, h.secret, h.user_id_from, h.template, h.created_at
	FROM hooks h JOIN projects p ON p.id = h.project_id AND p.account_id = h.account_id
	JOIN channels c ON c.id = h.channel_id AND c.project_id = h.project_id`

func scanHook(s scanner) (*tidings.Hook, error) {
	h := &tidings.Hook{}
	var template sql.NullString
	var created int64
	if err := s.Scan(&h.ID, &h.PathHash, &h.AccountID, &h.Project, &h.Channel, &h.Source, &h.Name, &h.Secret, &h.UserIDFrom,
		&template, &created); err != nil {
		return nil, err
	}
	if template.Valid {
		t, err := decodeHookTemplate(template.String)
		if err != nil {
			return nil, err
		}
		h.Template = t
	}
	h.CreatedAt = fromMS(created)
	return h, nil
}

// encodeHookTemplate keeps a json hook's template as a JSON object of the contract's
// field names (HookTemplate.Fields), an empty field left out; nil is NULL.
func encodeHookTemplate(t *tidings.HookTemplate) (any, error) {
	if t == nil {
		return nil, nil
	}
	m := map[string]string{}
	for _, f := range t.Fields() {
		if f.Text != "" {
			m[f.Name] = f.Text
		}
	}
	b, err := json.Marshal(m)
	return string(b), err
}

func decodeHookTemplate(s string) (*tidings.HookTemplate, error) {
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return &tidings.HookTemplate{Event: m["event"], Description: m["description"], Icon: m["icon"], Tags: m["tags"],
		UserID: m["user_id"], Notify: m["notify"]}, nil
}

// hookNotFound is the error for an id that names no hook of the account (another
// account's included: its hooks are not this one's to know of).
func hookNotFound(id string) error {
	return tidings.Errorf(tidings.ENotFound, "no hook %q in this account", id)
}

func (db *DB) queryHooks(ctx context.Context, where string, args ...any) ([]*tidings.Hook, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+hookColumns+` WHERE `+where+` ORDER BY h.created_at, h.rowid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.Hook{}
	for rows.Next() {
		h, err := scanHook(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// CreateHook stores h in its account's project and channel, with ID HookID(PathHash).
// The count against MaxHooksPerAccount and the insert are one transaction.
func (db *DB) CreateHook(ctx context.Context, h *tidings.Hook) error {
	template, err := encodeHookTemplate(h.Template)
	if err != nil {
		return err
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var projectID, channelID int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE account_id = ? AND name = ?`, h.AccountID, h.Project).Scan(&projectID)
	if errors.Is(err, sql.ErrNoRows) {
		return tidings.ProjectNotFound(h.Project)
	}
	if err != nil {
		return err
	}
	err = tx.QueryRowContext(ctx, `SELECT id FROM channels WHERE project_id = ? AND name = ?`, projectID, h.Channel).Scan(&channelID)
	if errors.Is(err, sql.ErrNoRows) {
		return tidings.ChannelNotFound(h.Project, h.Channel)
	}
	if err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM hooks WHERE account_id = ?`, h.AccountID).Scan(&n); err != nil {
		return err
	}
	if n >= tidings.MaxHooksPerAccount {
		return tidings.Errorf(tidings.ELimitReached,
			"the account has %d hooks, the most it may: delete one you no longer use", tidings.MaxHooksPerAccount)
	}
	h.ID = tidings.HookID(h.PathHash)
	if h.CreatedAt.IsZero() {
		h.CreatedAt = db.stamp()
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO hooks (id, path_hash, account_id, project_id, channel_id, source, name, secret,
			user_id_from, template, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		h.ID, h.PathHash, h.AccountID, projectID, channelID, h.Source, h.Name, h.Secret, h.UserIDFrom, template, ms(h.CreatedAt)); err != nil {
		if isUnique(err) {
			return tidings.Errorf(tidings.EConflict, "a hook with this path exists already")
		}
		return err
	}
	return tx.Commit()
}

// ListHooks returns the account's hooks, oldest first.
func (db *DB) ListHooks(ctx context.Context, accountID int64) ([]*tidings.Hook, error) {
	return db.queryHooks(ctx, `h.account_id = ?`, accountID)
}

// FindHook returns one of the account's hooks by its public id.
func (db *DB) FindHook(ctx context.Context, accountID int64, id string) (*tidings.Hook, error) {
	hs, err := db.queryHooks(ctx, `h.account_id = ? AND h.id = ?`, accountID, id)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, hookNotFound(id)
	}
	return hs[0], nil
}

// FindHookByPath returns the hook whose path secret hashes to pathHash.
func (db *DB) FindHookByPath(ctx context.Context, pathHash []byte) (*tidings.Hook, error) {
	if len(pathHash) == 0 {
		return nil, tidings.Errorf(tidings.ENotFound, "no such hook")
	}
	hs, err := db.queryHooks(ctx, `h.path_hash = ?`, pathHash)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, tidings.Errorf(tidings.ENotFound, "no such hook")
	}
	return hs[0], nil
}

// DeleteHook deletes one of the account's hooks; its log goes with it (foreign key).
func (db *DB) DeleteHook(ctx context.Context, accountID int64, id string) error {
	res, err := db.write.ExecContext(ctx, `DELETE FROM hooks WHERE account_id = ? AND id = ?`, accountID, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return hookNotFound(id)
	}
	return nil
}

// RecordHookAttempt keeps the attempt in the log of the account's hook a.HookID and
// drops those beyond the latest MaxHookAttempts. An attempt of a hook deleted meanwhile
// (or of no hook of the account) is not kept, and is no error: the delivery was
// answered already.
func (db *DB) RecordHookAttempt(ctx context.Context, accountID int64, a *tidings.HookAttempt) error {
	at := a.At
	if at.IsZero() {
		at = db.stamp()
	}
	return db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO hook_attempts (hook_id, account_id, delivery_id, status, events, error, at)
			SELECT id, account_id, ?, ?, ?, ?, ? FROM hooks WHERE id = ? AND account_id = ?`,
			a.DeliveryID, a.Status, a.Events, a.Error, ms(at), a.HookID, accountID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM hook_attempts WHERE hook_id = ?1 AND id NOT IN
			(SELECT id FROM hook_attempts WHERE hook_id = ?1 ORDER BY id DESC LIMIT ?2)`, a.HookID, tidings.MaxHookAttempts)
		return err
	})
}

// ListHookAttempts returns the log of the account's hook, newest first; ENotFound for
// an id that names no hook of the account.
func (db *DB) ListHookAttempts(ctx context.Context, accountID int64, hookID string) ([]*tidings.HookAttempt, error) {
	var exists bool
	if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM hooks WHERE id = ? AND account_id = ?)`,
		hookID, accountID).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, hookNotFound(hookID)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT hook_id, delivery_id, status, events, error, at FROM hook_attempts
		WHERE hook_id = ? AND account_id = ? ORDER BY id DESC LIMIT ?`, hookID, accountID, tidings.MaxHookAttempts)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.HookAttempt{}
	for rows.Next() {
		a := &tidings.HookAttempt{}
		var at int64
		if err := rows.Scan(&a.HookID, &a.DeliveryID, &a.Status, &a.Events, &a.Error, &at); err != nil {
			return nil, err
		}
		a.At = fromMS(at)
		out = append(out, a)
	}
	return out, rows.Err()
}
