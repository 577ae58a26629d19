package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tidings-dev/tidings"
)

// HideChecklist records when the account's user hid the getting-started checklist;
// the first time is kept.
func (db *DB) HideChecklist(ctx context.Context, accountID, userID int64, at time.Time) error {
	res, err := db.write.ExecContext(ctx, `UPDATE users SET checklist_hidden_at = CASE WHEN checklist_hidden_at = 0 THEN ? ELSE checklist_hidden_at END
		WHERE id = ? AND account_id = ?`, max(ms(at), 1), userID, accountID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return tidings.ErrNoSuchMember
	}
	return nil
}

// ChecklistHidden reports whether the account's user hid the checklist.
func (db *DB) ChecklistHidden(ctx context.Context, accountID, userID int64) (bool, error) {
	var at int64
	err := db.read.QueryRowContext(ctx, `SELECT checklist_hidden_at FROM users WHERE id = ? AND account_id = ?`, userID, accountID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return false, tidings.ErrNoSuchMember
	}
	return at != 0, err
}
