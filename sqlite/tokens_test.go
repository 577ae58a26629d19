package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/tidings-dev/tidings"
)

// Looking up made-up token IDs, as anybody on the internet may, keeps nothing in memory.
func TestUnknownTokensNotCached(t *testing.T) {
	t.Parallel()
	db, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 1000 {
		if _, err := db.FindToken(t.Context(), fmt.Sprint("made-up-", i)); tidings.ErrorCode(err) != tidings.ENotFound {
			t.Fatalf("unknown token: %v", err)
		}
	}
	if n := db.tokens.Len(); n != 0 {
		t.Fatalf("%d unknown tokens cached", n)
	}
}
