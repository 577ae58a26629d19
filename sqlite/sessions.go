package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

const userColumns = `u.id, u.account_id, u.email, u.password_hash, u.role, u.created_at`

func scanUser(s scanner, extra ...any) (*tidings.User, error) {
	u := &tidings.User{}
	var created int64
	if err := s.Scan(append([]any{&u.ID, &u.AccountID, &u.Email, &u.PasswordHash, &u.Role, &created}, extra...)...); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMS(created)
	return u, nil
}

// CreateSession stores s, and drops sessions that have expired meanwhile: sign-ins
// are rare enough to carry that cleaning.
func (db *DB) CreateSession(ctx context.Context, s *tidings.Session) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, ms(s.CreatedAt)); err != nil {
		return err
	}
	_, err := db.write.ExecContext(ctx, `INSERT INTO sessions (hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		s.Hash, s.UserID, ms(s.CreatedAt), ms(s.ExpiresAt))
	return err
}

// FindSession returns the unexpired session with that hash, its user and account.
func (db *DB) FindSession(ctx context.Context, hash []byte, now time.Time) (*tidings.Session, *tidings.User, *tidings.Account, error) {
	s := &tidings.Session{Hash: hash}
	a := &tidings.Account{}
	var created, expires, accountCreated int64
	u, err := scanUser(db.read.QueryRowContext(ctx,
		`SELECT `+userColumns+`, s.user_id, s.created_at, s.expires_at, a.id, a.name, a.created_at
		 FROM sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
		 WHERE s.hash = ? AND s.expires_at > ?`, hash, ms(now)), &s.UserID, &created, &expires, &a.ID, &a.Name, &accountCreated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil, tidings.ErrNoSuchSession
	}
	if err != nil {
		return nil, nil, nil, err
	}
	s.CreatedAt, s.ExpiresAt, a.CreatedAt = fromMS(created), fromMS(expires), fromMS(accountCreated)
	return s, u, a, nil
}

// DeleteSession signs one session out.
func (db *DB) DeleteSession(ctx context.Context, hash []byte) error {
	_, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
	return err
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
	_, err := db.write.ExecContext(ctx,
		`INSERT INTO invites (hash, account_id, created_by, created_at, expires_at, role, user_id, email) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		inv.Hash, inv.AccountID, inv.CreatedBy, ms(inv.CreatedAt), ms(inv.ExpiresAt), inviteRole(inv.Role), nullID(inv.ResetUser), inv.Email)
	return err
}

func findInvite(ctx context.Context, q querier, hash []byte, now time.Time) (*tidings.Invite, error) {
	inv := &tidings.Invite{Hash: hash}
	var created, expires int64
	err := q.QueryRowContext(ctx,
		`SELECT i.account_id, a.name, i.created_by, i.created_at, i.expires_at, i.role, coalesce(i.user_id, 0), coalesce(u.email, ''), i.email
		 FROM invites i JOIN accounts a ON a.id = i.account_id LEFT JOIN users u ON u.id = i.user_id
		 WHERE i.hash = ? AND i.used_at IS NULL AND i.expires_at > ?
		   AND EXISTS (SELECT 1 FROM users c WHERE c.id = i.created_by AND c.account_id = i.account_id)`,
		hash, ms(now)).Scan(&inv.AccountID, &inv.AccountName, &inv.CreatedBy, &created, &expires, &inv.Role, &inv.ResetUser, &inv.ResetEmail, &inv.Email)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.ErrInviteUnusable
	}
	if err != nil {
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt = fromMS(created), fromMS(expires)
	return inv, nil
}

// ListInvites returns the account's pending invitations and reset links, newest first.
func (db *DB) ListInvites(ctx context.Context, accountID int64, now time.Time) ([]*tidings.Invite, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT i.hash, i.created_by, i.created_at, i.expires_at, i.role, coalesce(i.user_id, 0), coalesce(u.email, ''), i.email
		 FROM invites i LEFT JOIN users u ON u.id = i.user_id
		 WHERE i.account_id = ? AND i.used_at IS NULL AND i.expires_at > ? ORDER BY i.created_at DESC`, accountID, ms(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*tidings.Invite
	for rows.Next() {
		inv := &tidings.Invite{AccountID: accountID}
		var created, expires int64
		if err := rows.Scan(&inv.Hash, &inv.CreatedBy, &created, &expires, &inv.Role, &inv.ResetUser, &inv.ResetEmail, &inv.Email); err != nil {
			return nil, err
		}
		inv.ID, inv.CreatedAt, inv.ExpiresAt = tidings.InviteID(inv.Hash), fromMS(created), fromMS(expires)
		out = append(out, inv)
	}
	return out, rows.Err()
}

// RevokeInvite deletes a pending invite of the account.
func (db *DB) RevokeInvite(ctx context.Context, accountID int64, id string) error {
	prefix, err := hex.DecodeString(id)
	if err != nil || len(prefix) != 8 {
		return tidings.ErrNoSuchInvitation
	}
	res, err := db.write.ExecContext(ctx, `DELETE FROM invites WHERE account_id = ? AND used_at IS NULL AND substr(hash, 1, 8) = ?`,
		accountID, prefix)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tidings.ErrNoSuchInvitation
	}
	return nil
}

// FindInvite returns the unused, unexpired invite with that hash.
func (db *DB) FindInvite(ctx context.Context, hash []byte, now time.Time) (*tidings.Invite, error) {
	return findInvite(ctx, db.read, hash, now)
}

// AcceptInvite uses the invite and creates u as a member, in one transaction.
func (db *DB) AcceptInvite(ctx context.Context, hash []byte, u *tidings.User, now time.Time) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	inv, err := findInvite(ctx, tx, hash, now)
	if err != nil {
		return err
	}
	if inv.ResetUser != 0 {
		return tidings.ErrInviteUnusable
	}
	if _, err := tx.ExecContext(ctx, `UPDATE invites SET used_at = ? WHERE hash = ?`, ms(now), hash); err != nil {
		return err
	}
	u.AccountID, u.Role, u.CreatedAt = inv.AccountID, inviteRole(inv.Role), now.UTC().Truncate(time.Millisecond)
	err = tx.QueryRowContext(ctx,
		`INSERT INTO users (account_id, email, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		u.AccountID, u.Email, u.PasswordHash, u.Role, ms(u.CreatedAt)).Scan(&u.ID)
	if isUnique(err) {
		return tidings.EmailTaken(u.Email)
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// FindUser returns the account's user.
func (db *DB) FindUser(ctx context.Context, accountID, userID int64) (*tidings.User, error) {
	u, err := scanUser(db.read.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = ? AND u.account_id = ?`,
		userID, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.ErrNoSuchMember
	}
	return u, err
}

// ListUsers returns the account's users, oldest first.
func (db *DB) ListUsers(ctx context.Context, accountID int64) ([]*tidings.User, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+userColumns+` FROM users u WHERE u.account_id = ? ORDER BY u.id`, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*tidings.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// DeleteUser removes the account's user; their sessions, and the invitations and reset
// links they made that are still pending, go with them.
func (db *DB) DeleteUser(ctx context.Context, accountID, userID int64) error {
	gone := false
	err := db.inBatch(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ? AND account_id = ?`, userID, accountID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			gone = true
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM invites WHERE created_by = ? AND account_id = ? AND used_at IS NULL`, userID, accountID)
		return err
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
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tidings.ErrNoSuchUser
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND hash IS NOT ?`, userID, keep); err != nil {
		return err
	}
	return tx.Commit()
}

// CountUsers returns how many users exist.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, err
}

// SetFlash keeps a sealed flash for the session's next page, replacing one not taken.
func (db *DB) SetFlash(ctx context.Context, hash, flash []byte) error {
	res, err := db.write.ExecContext(ctx, `UPDATE sessions SET flash = ? WHERE hash = ?`, flash, hash)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tidings.ErrNoSuchSession
	}
	return nil
}

// TakeFlash returns the session's flash and clears it; nil when there is none.
func (db *DB) TakeFlash(ctx context.Context, hash []byte) ([]byte, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var flash []byte
	err = tx.QueryRowContext(ctx, `SELECT flash FROM sessions WHERE hash = ?`, hash).Scan(&flash)
	if errors.Is(err, sql.ErrNoRows) || err == nil && flash == nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET flash = NULL WHERE hash = ?`, hash); err != nil {
		return nil, err
	}
	return flash, tx.Commit()
}

// nullID is id for a nullable reference column: NULL for 0.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// UseReset uses a password reset link: the user's new password, their sessions gone.
func (db *DB) UseReset(ctx context.Context, hash []byte, passwordHash string, now time.Time) (*tidings.User, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	inv, err := findInvite(ctx, tx, hash, now)
	if err == nil && inv.ResetUser == 0 {
		err = tidings.ErrResetUnusable
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE invites SET used_at = ? WHERE hash = ?`, ms(now), hash); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, passwordHash, inv.ResetUser); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, inv.ResetUser); err != nil {
		return nil, err
	}
	u, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = ?`, inv.ResetUser))
	if err != nil {
		return nil, err
	}
	return u, tx.Commit()
}
