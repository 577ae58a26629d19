package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tidings-dev/tidings"
)

// CreateAccount creates an account.
func (db *DB) CreateAccount(ctx context.Context, name string) (*tidings.Account, error) {
	if err := tidings.ValidateName("account", name); err != nil {
		return nil, err
	}
	a := &tidings.Account{Name: name, CreatedAt: db.stamp()}
	err := db.write.QueryRowContext(ctx,
		`INSERT INTO accounts (name, created_at) VALUES (?, ?) RETURNING id`, name, ms(a.CreatedAt)).Scan(&a.ID)
	if isUnique(err) {
		return nil, tidings.AccountExists(name)
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// FindAccount returns the account with the given name.
func (db *DB) FindAccount(ctx context.Context, name string) (*tidings.Account, error) {
	a := &tidings.Account{}
	var created int64
	err := db.read.QueryRowContext(ctx, `SELECT id, name, created_at FROM accounts WHERE name = ?`, name).
		Scan(&a.ID, &a.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.AccountNotFound(name)
	}
	if err != nil {
		return nil, err
	}
	a.CreatedAt = fromMS(created)
	return a, nil
}

// ListAccounts returns every account, oldest first.
func (db *DB) ListAccounts(ctx context.Context) ([]*tidings.Account, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, created_at FROM accounts ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*tidings.Account
	for rows.Next() {
		a := &tidings.Account{}
		var created int64
		if err := rows.Scan(&a.ID, &a.Name, &created); err != nil {
			return nil, err
		}
		a.CreatedAt = fromMS(created)
		out = append(out, a)
	}
	return out, rows.Err()
}

// CreateUser stores u.
func (db *DB) CreateUser(ctx context.Context, u *tidings.User) error {
	if u.CreatedAt.IsZero() {
		u.CreatedAt = db.now().UTC()
	}
	err := db.write.QueryRowContext(ctx,
		`INSERT INTO users (account_id, email, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		u.AccountID, u.Email, u.PasswordHash, u.Role, ms(u.CreatedAt)).Scan(&u.ID)
	if isUnique(err) {
		return tidings.EmailTaken(u.Email)
	}
	return err
}

// FindUserByEmail returns the user with that email (compared case-insensitively).
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*tidings.User, error) {
	u := &tidings.User{}
	var created int64
	err := db.read.QueryRowContext(ctx,
		`SELECT id, account_id, email, password_hash, role, created_at FROM users WHERE email = ?`, email).
		Scan(&u.ID, &u.AccountID, &u.Email, &u.PasswordHash, &u.Role, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.UserNotFound(email)
	}
	if err != nil {
		return nil, err
	}
	u.CreatedAt = fromMS(created)
	return u, nil
}
