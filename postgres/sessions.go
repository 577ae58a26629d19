package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

const userColumns = `u.id, u.account_id, u.email, u.password_hash, u.role, u.created_at`

func scanUser(r pgx.Row, extra ...any) (*tidings.User, error) {
	u := &tidings.User{}
	var created int64
	if err := r.Scan(append([]any{&u.ID, &u.AccountID, &u.Email, &u.PasswordHash, &u.Role, &created}, extra...)...); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMS(created)
	return u, nil
}

// CreateSession stores s, and drops sessions that have expired meanwhile.
func (db *DB) CreateSession(ctx context.Context, s *tidings.Session) error {
	if _, err := db.exec(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, ms(s.CreatedAt)); err != nil {
		return err
	}
	_, err := db.exec(ctx, `INSERT INTO sessions (hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		s.Hash, s.UserID, ms(s.CreatedAt), ms(s.ExpiresAt))
	return err
}

// FindSession returns the unexpired session with that hash, its user and account. It
// reads the row every time: a sign-out on any instance counts at once on all.
func (db *DB) FindSession(ctx context.Context, hash []byte, now time.Time) (*tidings.Session, *tidings.User, *tidings.Account, error) {
	s := &tidings.Session{Hash: hash}
	a := &tidings.Account{}
	var created, expires, accountCreated int64
	u, err := scanUser(db.row(ctx,
		`SELECT `+userColumns+`, s.user_id, s.created_at, s.expires_at, a.id, a.name, a.created_at
		 FROM sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
		 WHERE s.hash = $1 AND s.expires_at > $2`, hash, ms(now)), &s.UserID, &created, &expires, &a.ID, &a.Name, &accountCreated)
	if err != nil {
		return nil, nil, nil, notFound(err, tidings.ErrNoSuchSession)
	}
	s.CreatedAt, s.ExpiresAt, a.CreatedAt = fromMS(created), fromMS(expires), fromMS(accountCreated)
	return s, u, a, nil
}

// DeleteSession signs one session out.
func (db *DB) DeleteSession(ctx context.Context, hash []byte) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		var account int64
		err := tx.QueryRow(ctx, `DELETE FROM sessions s USING users u WHERE s.hash = $1 AND u.id = s.user_id
			RETURNING u.account_id`, hash).Scan(&account)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		return db.sessionsEnded(ctx, tx, sessionEnd{Account: account, Hash: hash})
	})
}

// inviteRole is the role an invite grants: member unless it says owner.
func inviteRole(r string) string {
	if r == tidings.UserOwner {
		return r
	}
	return tidings.UserMember
}

// CreateInvite stores inv.
func (db *DB) CreateInvite(ctx context.Context, inv *tidings.Invite) error {
	_, err := db.exec(ctx,
		`INSERT INTO invites (hash, account_id, created_by, created_at, expires_at, role, user_id, email) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		inv.Hash, inv.AccountID, inv.CreatedBy, ms(inv.CreatedAt), ms(inv.ExpiresAt), inviteRole(inv.Role), nullID(inv.ResetUser), inv.Email)
	return err
}

func findInvite(ctx context.Context, q querier, hash []byte, now time.Time, lock string) (*tidings.Invite, error) {
	inv := &tidings.Invite{Hash: hash}
	var created, expires int64
	err := q.QueryRow(ctx,
		`SELECT i.account_id, a.name, i.created_by, i.created_at, i.expires_at, i.role, coalesce(i.user_id, 0), coalesce(u.email, ''), i.email
		 FROM invites i JOIN accounts a ON a.id = i.account_id LEFT JOIN users u ON u.id = i.user_id
		 WHERE i.hash = $1 AND i.used_at IS NULL AND i.expires_at > $2
		   AND EXISTS (SELECT 1 FROM users c WHERE c.id = i.created_by AND c.account_id = i.account_id)`+lock,
		hash, ms(now)).Scan(&inv.AccountID, &inv.AccountName, &inv.CreatedBy, &created, &expires, &inv.Role, &inv.ResetUser, &inv.ResetEmail, &inv.Email)
	if err != nil {
		return nil, notFound(mapErr(err), tidings.ErrInviteUnusable)
	}
	inv.CreatedAt, inv.ExpiresAt = fromMS(created), fromMS(expires)
	return inv, nil
}

// ListInvites returns the account's pending invitations and reset links, newest first.
func (db *DB) ListInvites(ctx context.Context, accountID int64, now time.Time) ([]*tidings.Invite, error) {
	return orNil(query(ctx, db.pool, func(r pgx.Row) (*tidings.Invite, error) {
		inv := &tidings.Invite{AccountID: accountID}
		var created, expires int64
		err := r.Scan(&inv.Hash, &inv.CreatedBy, &created, &expires, &inv.Role, &inv.ResetUser, &inv.ResetEmail, &inv.Email)
		inv.ID, inv.CreatedAt, inv.ExpiresAt = tidings.InviteID(inv.Hash), fromMS(created), fromMS(expires)
		return inv, err
	}, `SELECT i.hash, i.created_by, i.created_at, i.expires_at, i.role, coalesce(i.user_id, 0), coalesce(u.email, ''), i.email
		FROM invites i LEFT JOIN users u ON u.id = i.user_id
		WHERE i.account_id = $1 AND i.used_at IS NULL AND i.expires_at > $2 ORDER BY i.created_at DESC`, accountID, ms(now)))
}

// RevokeInvite deletes a pending invite of the account.
func (db *DB) RevokeInvite(ctx context.Context, accountID int64, id string) error {
	prefix, err := hex.DecodeString(id)
	if err != nil || len(prefix) != 8 {
		return tidings.ErrNoSuchInvitation
	}
	tag, err := db.exec(ctx, `DELETE FROM invites WHERE account_id = $1 AND used_at IS NULL AND substring(hash FROM 1 FOR 8) = $2`,
		accountID, prefix)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.ErrNoSuchInvitation
	}
	return nil
}

// FindInvite returns the unused, unexpired invite with that hash.
func (db *DB) FindInvite(ctx context.Context, hash []byte, now time.Time) (*tidings.Invite, error) {
	return findInvite(ctx, db.pool, hash, now, "")
}

// AcceptInvite uses the invite and creates u as a member, in one transaction. The
// invite's row is locked first: of two instances accepting it at once, one wins.
func (db *DB) AcceptInvite(ctx context.Context, hash []byte, u *tidings.User, now time.Time) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		inv, err := findInvite(ctx, tx, hash, now, " FOR UPDATE OF i")
		if err != nil {
			return err
		}
		if inv.ResetUser != 0 {
			return tidings.ErrInviteUnusable
		}
		if _, err := tx.Exec(ctx, `UPDATE invites SET used_at = $1 WHERE hash = $2`, ms(now), hash); err != nil {
			return err
		}
		u.AccountID, u.Role, u.CreatedAt = inv.AccountID, inviteRole(inv.Role), now.UTC().Truncate(time.Millisecond)
		err = tx.QueryRow(ctx,
			`INSERT INTO users (account_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			u.AccountID, u.Email, u.PasswordHash, u.Role, ms(u.CreatedAt)).Scan(&u.ID)
		if isUnique(err) {
			return tidings.EmailTaken(u.Email)
		}
		return err
	})
}

// FindUser returns the account's user.
func (db *DB) FindUser(ctx context.Context, accountID, userID int64) (*tidings.User, error) {
	u, err := scanUser(db.row(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1 AND u.account_id = $2`, userID, accountID))
	if err != nil {
		return nil, notFound(err, tidings.ErrNoSuchMember)
	}
	return u, nil
}

// ListUsers returns the account's users, oldest first.
func (db *DB) ListUsers(ctx context.Context, accountID int64) ([]*tidings.User, error) {
	return orNil(query(ctx, db.pool, func(r pgx.Row) (*tidings.User, error) { return scanUser(r) },
		`SELECT `+userColumns+` FROM users u WHERE u.account_id = $1 ORDER BY u.id`, accountID))
}

// DeleteUser removes the account's user; their sessions, and the invitations and reset
// links they made that are still pending, go with them.
func (db *DB) DeleteUser(ctx context.Context, accountID, userID int64) error {
	gone := false
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM users WHERE id = $1 AND account_id = $2`, userID, accountID)
		if err != nil {
			return err
		}
		gone = tag.RowsAffected() == 0
		if gone {
			return nil
		}
		if _, err = tx.Exec(ctx, `DELETE FROM invites WHERE created_by = $1 AND account_id = $2 AND used_at IS NULL`, userID, accountID); err != nil {
			return err
		}
		return db.sessionsEnded(ctx, tx, sessionEnd{Account: accountID, User: userID})
	})
	if err != nil {
		return err
	}
	if gone {
		return tidings.ErrNoSuchMember
	}
	return nil
}

// SetPassword replaces the password hash and ends the user's other sessions.
func (db *DB) SetPassword(ctx context.Context, userID int64, hash string, keep []byte) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		var account int64
		err := tx.QueryRow(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2 RETURNING account_id`, hash, userID).Scan(&account)
		if errors.Is(err, pgx.ErrNoRows) {
			return tidings.ErrNoSuchUser
		}
		if err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1 AND hash IS DISTINCT FROM $2`, userID, keep); err != nil {
			return err
		}
		return db.sessionsEnded(ctx, tx, sessionEnd{Account: account, User: userID, Keep: keep})
	})
}

// CountUsers returns how many users exist.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := db.row(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, err
}

// SetFlash keeps a sealed flash for the session's next page, replacing one not taken.
func (db *DB) SetFlash(ctx context.Context, hash, flash []byte) error {
	tag, err := db.exec(ctx, `UPDATE sessions SET flash = $1 WHERE hash = $2`, flash, hash)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.ErrNoSuchSession
	}
	return nil
}

// TakeFlash returns the session's flash and clears it; nil when there is none. Of two
// requests taking it at once, one gets it.
func (db *DB) TakeFlash(ctx context.Context, hash []byte) ([]byte, error) {
	var flash []byte
	err := db.row(ctx, `UPDATE sessions s SET flash = NULL FROM (SELECT hash, flash FROM sessions WHERE hash = $1 FOR UPDATE) old
		WHERE s.hash = old.hash RETURNING old.flash`, hash).Scan(&flash)
	if noRows(err) {
		return nil, nil
	}
	return flash, err
}

// nullID is id for a nullable reference column: NULL for 0.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// UseReset uses a password reset link: the user's new password, their sessions gone.
// The link's row is locked first: of two instances using it at once, one wins.
func (db *DB) UseReset(ctx context.Context, hash []byte, passwordHash string, now time.Time) (*tidings.User, error) {
	var u *tidings.User
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		inv, err := findInvite(ctx, tx, hash, now, " FOR UPDATE OF i")
		if err == nil && inv.ResetUser == 0 {
			err = tidings.ErrResetUnusable
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE invites SET used_at = $1 WHERE hash = $2`, ms(now), hash); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2`, passwordHash, inv.ResetUser); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1`, inv.ResetUser); err != nil {
			return err
		}
		if err := db.sessionsEnded(ctx, tx, sessionEnd{Account: inv.AccountID, User: inv.ResetUser}); err != nil {
			return err
		}
		u, err = scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1`, inv.ResetUser))
		return err
	})
	return u, err
}
