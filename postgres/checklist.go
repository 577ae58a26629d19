package postgres

import (
	"context"
	"time"

	"github.com/tidings-dev/tidings"
)

// HideChecklist records when the account's user hid the getting-started checklist;
// the first time is kept.
func (db *DB) HideChecklist(ctx context.Context, accountID, userID int64, at time.Time) error {
	tag, err := db.exec(ctx, `UPDATE users SET checklist_hidden_at = CASE WHEN checklist_hidden_at = 0 THEN $1 ELSE checklist_hidden_at END
		WHERE id = $2 AND account_id = $3`, max(ms(at), 1), userID, accountID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.ErrNoSuchMember
	}
	return nil
}

// ChecklistHidden reports whether the account's user hid the checklist.
func (db *DB) ChecklistHidden(ctx context.Context, accountID, userID int64) (bool, error) {
	var at int64
	if err := db.row(ctx, `SELECT checklist_hidden_at FROM users WHERE id = $1 AND account_id = $2`, userID, accountID).Scan(&at); err != nil {
		return false, notFound(err, tidings.ErrNoSuchMember)
	}
	return at != 0, nil
}
