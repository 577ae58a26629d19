package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// CreateToken stores t, resolving its project and channel limits.
func (db *DB) CreateToken(ctx context.Context, t *tidings.Token) error {
	if err := t.Check(); err != nil {
		return err
	}
	var projectID, channelID *int64
	if t.Project != "" {
		p, err := findProject(ctx, db.pool, t.AccountID, t.Project)
		if err != nil {
			return err
		}
		projectID = &p.ID
		if t.Channel != "" {
			id, err := db.channelID(ctx, p, t.Channel)
			if err != nil {
				return err
			}
			channelID = &id
		}
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = db.now().UTC()
	}
	_, err := db.exec(ctx,
		`INSERT INTO tokens (id, account_id, name, hash, access, project_id, channel_id, roles, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		t.ID, t.AccountID, t.Name, t.Hash, t.Access, projectID, channelID, strings.Join(t.Roles, ","), ms(t.CreatedAt))
	return err
}

const tokenColumns = `t.id, t.account_id, t.name, t.hash, t.access, coalesce(p.name, ''), coalesce(c.name, ''),
	t.roles, t.created_at, t.last_used_at, t.revoked_at
	FROM tokens t LEFT JOIN projects p ON p.id = t.project_id LEFT JOIN channels c ON c.id = t.channel_id`

func scanToken(r pgx.Row) (*tidings.Token, error) {
	t := &tidings.Token{}
	var roles string
	var created int64
	var used, revoked *int64
	if err := r.Scan(&t.ID, &t.AccountID, &t.Name, &t.Hash, &t.Access, &t.Project, &t.Channel,
		&roles, &created, &used, &revoked); err != nil {
		return nil, err
	}
	t.Roles = strings.Split(roles, ",")
	t.CreatedAt, t.LastUsedAt, t.RevokedAt = fromMS(created), fromNullMS(used), fromNullMS(revoked)
	return t, nil
}

// FindToken returns the token with the given ID. A token read less than a second ago
// comes from memory; a revocation on this instance clears that memory, so it counts from
// the next request here, and within a second on the other instances.
func (db *DB) FindToken(ctx context.Context, id string) (*tidings.Token, error) {
	t, gen := db.tokens.Get(id)
	if t != nil {
		return t, nil
	}
	t, err := scanToken(db.row(ctx, `SELECT `+tokenColumns+` WHERE t.id = $1`, id))
	if err != nil {
		return nil, notFound(err, tidings.UnknownToken(id))
	}
	db.tokens.Put(t, gen)
	return t, nil
}

// ActiveTokens returns those of ids that name a token not revoked, never from the cache.
func (db *DB) ActiveTokens(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return orNil(query(ctx, db.pool, func(r pgx.Row) (string, error) {
		var id string
		err := r.Scan(&id)
		return id, err
	}, `SELECT id FROM tokens WHERE id = ANY($1) AND revoked_at IS NULL`, ids))
}

// ListTokens returns the account's tokens, oldest first.
func (db *DB) ListTokens(ctx context.Context, accountID int64) ([]*tidings.Token, error) {
	return orNil(query(ctx, db.pool, scanToken, `SELECT `+tokenColumns+` WHERE t.account_id = $1 ORDER BY t.created_at, t.id`, accountID))
}

// RevokeToken marks the account's token revoked.
func (db *DB) RevokeToken(ctx context.Context, accountID int64, id string, at time.Time) error {
	tag, err := db.exec(ctx,
		`UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2 AND account_id = $3`, ms(at), id, accountID)
	db.tokensInvalidated(ctx)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.TokenNotFound(id)
	}
	return nil
}

// TouchTokens records last-used times in one statement, never moving one backwards.
func (db *DB) TouchTokens(ctx context.Context, lastUsed map[string]time.Time) error {
	if len(lastUsed) == 0 {
		return nil
	}
	ids := make([]string, 0, len(lastUsed))
	ats := make([]int64, 0, len(lastUsed))
	for id, at := range lastUsed {
		ids = append(ids, id)
		ats = append(ats, ms(at))
	}
	_, err := db.exec(ctx, `UPDATE tokens t SET last_used_at = greatest(coalesce(t.last_used_at, 0), u.at)
		FROM unnest($1::text[], $2::bigint[]) AS u(id, at) WHERE t.id = u.id`, ids, ats)
	return err
}
