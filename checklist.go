package tidings

import (
	"context"
	"time"
)

// ChecklistStore remembers which members hid the dashboard's getting-started
// checklist: it is a person's choice, so it follows them to every browser.
type ChecklistStore interface {
	// HideChecklist records that the account's user hid the checklist at at (hiding
	// it again changes nothing). Errors: ENotFound (also for another account's user).
	HideChecklist(ctx context.Context, accountID, userID int64, at time.Time) error
	// ChecklistHidden reports whether the account's user hid the checklist.
	// Errors: ENotFound (also for another account's user).
	ChecklistHidden(ctx context.Context, accountID, userID int64) (bool, error)
}
