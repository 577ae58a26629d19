package postgres

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidings-dev/tidings"
)

// TestScanTimeoutIsTheBudget: a chart scan's statement stopped by its timeout
// (query_canceled) is a question over its budget, refused as too costly, not an
// unavailable store.
func TestScanTimeoutIsTheBudget(t *testing.T) {
	if err := scanErr(&pgconn.PgError{Code: "57014"}); !errors.Is(err, tidings.ErrScanBudget) {
		t.Fatalf("a statement timeout: %v", err)
	}
	if err := scanErr(&pgconn.PgError{Code: "42P01"}); errors.Is(err, tidings.ErrScanBudget) {
		t.Fatal("another error is taken for the budget")
	}
	if scanErr(nil) != nil {
		t.Fatal("no error is an error")
	}
}
