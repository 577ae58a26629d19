package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// CreateToken stores t, resolving its project and channel limits.
func (db *DB) CreateToken(ctx context.Context, t *tidings.Token) error {
	if err := t.Check(); err != nil {
		return err
	}
	var projectID, channelID sql.NullInt64
	if t.Project != "" {
		p, err := findProject(ctx, db.reads, t.AccountID, t.Project)
		if err != nil {
			return err
		}
		projectID = sql.NullInt64{Int64: p.ID, Valid: true}
		if t.Channel != "" {
			err := db.read.QueryRowContext(ctx, `SELECT id FROM channels WHERE project_id = ? AND name = ?`,
				p.ID, t.Channel).Scan(&channelID)
			if errors.Is(err, sql.ErrNoRows) {
				return tidings.ChannelNotFound(t.Project, t.Channel)
			}
			if err != nil {
				return err
			}
		}
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = db.now().UTC()
	}
	_, err := db.write.ExecContext(ctx,
		`INSERT INTO tokens (id, account_id, name, hash, access, project_id, channel_id, roles, created_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.AccountID, t.Name, t.Hash, t.Access, projectID, channelID, strings.Join(t.Roles, ","), ms(t.CreatedAt))
	return err
}

const tokenColumns = `t.id, t.account_id, t.name, t.hash, t.access, coalesce(p.name, ''), coalesce(c.name, ''),
	t.roles, t.created_at, t.last_used_at, t.revoked_at
	FROM tokens t LEFT JOIN projects p ON p.id = t.project_id LEFT JOIN channels c ON c.id = t.channel_id`

type scanner interface{ Scan(dest ...any) error }

func scanToken(s scanner) (*tidings.Token, error) {
	t := &tidings.Token{}
	var roles string
	var created int64
	var used, revoked sql.NullInt64
	if err := s.Scan(&t.ID, &t.AccountID, &t.Name, &t.Hash, &t.Access, &t.Project, &t.Channel,
		&roles, &created, &used, &revoked); err != nil {
		return nil, err
	}
	t.Roles = strings.Split(roles, ",")
	t.CreatedAt, t.LastUsedAt, t.RevokedAt = fromMS(created), fromNullMS(used), fromNullMS(revoked)
	return t, nil
}

// sqlFindToken runs on every API request, prepared on the read pool.
const sqlFindToken = `SELECT ` + tokenColumns + ` WHERE t.id = ?`

// FindToken returns the token with the given ID. A token read less than a second ago
// comes from memory; a revocation clears that memory, in this process at once and in
// the others sharing the folder on their next request (the token mark), so it counts
// from the next request everywhere.
func (db *DB) FindToken(ctx context.Context, id string) (*tidings.Token, error) {
	db.checkTokensChanged()
	t, gen := db.tokens.Get(id)
	if t != nil {
		return t, nil
	}
	t, err := scanToken(db.reads.QueryRowContext(ctx, sqlFindToken, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.UnknownToken(id)
	}
	if err != nil {
		return nil, err
	}
	db.tokens.Put(t, gen)
	return t, nil
}

// ActiveTokens returns those of ids that name a token not revoked, from the read pool.
func (db *DB) ActiveTokens(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM tokens WHERE revoked_at IS NULL AND id IN (?`+
		strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ListTokens returns the account's tokens, oldest first.
func (db *DB) ListTokens(ctx context.Context, accountID int64) ([]*tidings.Token, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+tokenColumns+` WHERE t.account_id = ? ORDER BY t.created_at, t.id`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*tidings.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeToken marks the account's token revoked.
func (db *DB) RevokeToken(ctx context.Context, accountID int64, id string, at time.Time) error {
	res, err := db.write.ExecContext(ctx,
		`UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? AND account_id = ?`, ms(at), id, accountID)
	db.tokensInvalidated()
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tidings.TokenNotFound(id)
	}
	return nil
}

// TouchTokens records last-used times, never moving one backwards.
func (db *DB) TouchTokens(ctx context.Context, lastUsed map[string]time.Time) error {
	if len(lastUsed) == 0 {
		return nil
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for id, at := range lastUsed {
		if _, err := tx.ExecContext(ctx,
			`UPDATE tokens SET last_used_at = max(coalesce(last_used_at, 0), ?) WHERE id = ?`, ms(at), id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// tokensInvalidated clears this process's token cache and tells the others sharing the
// data folder to clear theirs, after a write that may have made a token invalid.
func (db *DB) tokensInvalidated() {
	db.tokens.Clear()
	db.tokensChanged.Bump()
}

// checkTokensChanged clears the token cache if a process changed tokens.
func (db *DB) checkTokensChanged() {
	if v := db.tokensChanged.Value(); db.tokensSeen.Swap(v) != v {
		db.tokens.Clear()
	}
}
