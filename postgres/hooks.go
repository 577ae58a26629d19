package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// Inbound hooks (issue 40). A hook names its project and channel by id: deleting
// either deletes the hook with its log (ON DELETE CASCADE), and a renamed project or
// channel keeps its hooks. The path's secret is never kept, only its hash. Every read
// joins the project and channel of the hook's own account (a row damaged otherwise,
// which hook.tenant names, is not found), as the embedded store does.

const hookColumns = `h.id, h.path_hash, h.account_id, p.name, c.name, h.source, h.name, h.secret, h.user_id_from, h.template, h.created_at
	FROM hooks h JOIN projects p ON p.id = h.project_id AND p.account_id = h.account_id
	JOIN channels c ON c.id = h.channel_id AND c.project_id = h.project_id`

func scanHook(r pgx.Row) (*tidings.Hook, error) {
	h := &tidings.Hook{}
	var template *string
	var created int64
	if err := r.Scan(&h.ID, &h.PathHash, &h.AccountID, &h.Project, &h.Channel, &h.Source, &h.Name, &h.Secret,
		&h.UserIDFrom, &template, &created); err != nil {
		return nil, err
	}
	h.CreatedAt = fromMS(created)
	if template != nil {
		t, err := decodeHookTemplate(*template)
		if err != nil {
			return nil, err
		}
		h.Template = t
	}
	return h, nil
}

// hookTemplate is a HookTemplate as the template column keeps it: its fields by the
// contract's names, an empty one left out (the embedded store keeps the same).
type hookTemplate struct {
	Event       string `json:"event,omitempty"`
	Description string `json:"description,omitempty"`
	Icon        string `json:"icon,omitempty"`
	Tags        string `json:"tags,omitempty"`
	UserID      string `json:"user_id,omitempty"`
	Notify      string `json:"notify,omitempty"`
}

// encodeHookTemplate returns t as the template column keeps it; nil for none.
func encodeHookTemplate(t *tidings.HookTemplate) (*string, error) {
	if t == nil {
		return nil, nil
	}
	b, err := json.Marshal(hookTemplate(*t))
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

func decodeHookTemplate(s string) (*tidings.HookTemplate, error) {
	var t hookTemplate
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return nil, tidings.Errorf(tidings.EInternal, "a hook's template does not decode: %v", err)
	}
	ht := tidings.HookTemplate(t)
	return &ht, nil
}

func hookNotFound(id string) error {
	return tidings.Errorf(tidings.ENotFound, "no hook %q in this account", id)
}

func (db *DB) queryHooks(ctx context.Context, where string, args ...any) ([]*tidings.Hook, error) {
	return query(ctx, db.pool, scanHook, `SELECT `+hookColumns+` WHERE `+where+` ORDER BY h.created_at, h.seq`, args...)
}

// CreateHook stores h in the account's project and channel, with ID HookID(PathHash).
// The account's row is locked (FOR NO KEY UPDATE, which inserting rows that name the
// account does not wait for) while its hooks are counted: MaxHooksPerAccount holds
// across instances and the CLI. The project's and channel's rows are held (FOR KEY
// SHARE) until the hook is in: a deletion of either waits, then takes the hook along.
func (db *DB) CreateHook(ctx context.Context, h *tidings.Hook) error {
	template, err := encodeHookTemplate(h.Template)
	if err != nil {
		return err
	}
	if len(h.PathHash) == 0 {
		return tidings.Errorf(tidings.EValidation, "a hook needs its path's hash")
	}
	id := tidings.HookID(h.PathHash)
	created := h.CreatedAt.UTC().Truncate(time.Millisecond)
	if h.CreatedAt.IsZero() {
		created = db.stamp()
	}
	err = db.inTx(ctx, func(tx pgx.Tx) error {
		var one, n int
		err := tx.QueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, h.AccountID).Scan(&one)
		if noRows(err) {
			return tidings.Errorf(tidings.ENotFound, "no account %d", h.AccountID)
		}
		if err != nil {
			return err
		}
		pid, cid, err := projectChannel(ctx, tx, h.AccountID, h.Project, h.Channel)
		if err != nil {
			return err
		}
		if cid == nil {
			return tidings.ChannelNotFound(h.Project, h.Channel)
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM hooks WHERE account_id = $1`, h.AccountID).Scan(&n); err != nil {
			return err
		}
		if n >= tidings.MaxHooksPerAccount {
			return tidings.Errorf(tidings.ELimitReached,
				"the account has %d hooks, the most an account may have: delete hooks you no longer use (Settings → Hooks, or `tidings hook delete HOOK_ID`)",
				tidings.MaxHooksPerAccount)
		}
		_, err = tx.Exec(ctx, `INSERT INTO hooks (id, path_hash, account_id, project_id, channel_id, source, name, secret, user_id_from, template, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			id, h.PathHash, h.AccountID, pid, *cid, h.Source, h.Name, h.Secret, h.UserIDFrom, template, ms(created))
		if isUnique(err) {
			return tidings.Errorf(tidings.EConflict, "a hook with this path exists already")
		}
		return err
	})
	if err != nil {
		return err
	}
	h.ID, h.CreatedAt = id, created
	return nil
}

// ListHooks returns the account's hooks, oldest first (an empty list, not nil, for
// none).
func (db *DB) ListHooks(ctx context.Context, accountID int64) ([]*tidings.Hook, error) {
	return db.queryHooks(ctx, `h.account_id = $1`, accountID)
}

// FindHook returns one of the account's hooks by its ID.
func (db *DB) FindHook(ctx context.Context, accountID int64, id string) (*tidings.Hook, error) {
	hs, err := db.queryHooks(ctx, `h.account_id = $1 AND h.id = $2`, accountID, id)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, hookNotFound(id)
	}
	return hs[0], nil
}

// FindHookByPath returns the hook whose path's secret hashes to pathHash, whatever its
// account (POST /hooks/{id}: the path is the credential).
func (db *DB) FindHookByPath(ctx context.Context, pathHash []byte) (*tidings.Hook, error) {
	if len(pathHash) == 0 {
		return nil, tidings.Errorf(tidings.ENotFound, "no such hook")
	}
	hs, err := db.queryHooks(ctx, `h.path_hash = $1`, pathHash)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, tidings.Errorf(tidings.ENotFound, "no such hook")
	}
	return hs[0], nil
}

// DeleteHook deletes one of the account's hooks with its log (ON DELETE CASCADE).
func (db *DB) DeleteHook(ctx context.Context, accountID int64, id string) error {
	tag, err := db.exec(ctx, `DELETE FROM hooks WHERE account_id = $1 AND id = $2`, accountID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return hookNotFound(id)
	}
	return nil
}

// RecordHookAttempt keeps a delivery in the hook's log and drops those beyond the
// latest MaxHookAttempts. A hook deleted meanwhile, or not of the account, keeps
// nothing (and no error spoils the batch the attempt is written in).
func (db *DB) RecordHookAttempt(ctx context.Context, accountID int64, a *tidings.HookAttempt) error {
	at := a.At
	if at.IsZero() {
		at = db.stamp()
	}
	return db.inBatch(ctx, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO hook_attempts (hook_id, account_id, delivery_id, status, events, error, at)
			SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM hooks WHERE id = $1 AND account_id = $2)`,
			a.HookID, accountID, a.DeliveryID, a.Status, a.Events, a.Error, ms(at))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM hook_attempts WHERE hook_id = $1 AND id NOT IN
			(SELECT id FROM hook_attempts WHERE hook_id = $1 ORDER BY id DESC LIMIT $2)`, a.HookID, tidings.MaxHookAttempts)
		return err
	})
}

// ListHookAttempts returns the log of one of the account's hooks, newest first (an
// empty list, not nil, for none); ENotFound for an id that names no hook of the
// account.
func (db *DB) ListHookAttempts(ctx context.Context, accountID int64, hookID string) ([]*tidings.HookAttempt, error) {
	var exists bool
	if err := db.row(ctx, `SELECT EXISTS (SELECT 1 FROM hooks WHERE id = $1 AND account_id = $2)`, hookID, accountID).Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, hookNotFound(hookID)
	}
	return query(ctx, db.pool, func(r pgx.Row) (*tidings.HookAttempt, error) {
		a := &tidings.HookAttempt{}
		var at int64
		err := r.Scan(&a.HookID, &a.DeliveryID, &a.Status, &a.Events, &a.Error, &at)
		a.At = fromMS(at)
		return a, err
	}, `SELECT a.hook_id, a.delivery_id, a.status, a.events, a.error, a.at
		FROM hook_attempts a JOIN hooks h ON h.id = a.hook_id
		WHERE h.account_id = $1 AND a.account_id = $1 AND a.hook_id = $2 ORDER BY a.id DESC LIMIT $3`,
		accountID, hookID, tidings.MaxHookAttempts)
}

var _ tidings.HookStore = (*DB)(nil)
