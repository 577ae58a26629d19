package sqlite

import (
	"context"
	"testing"

	"github.com/tidings-dev/tidings"
)

// BenchmarkFindToken looks a token up as every API request does: from memory (read
// less than a second ago) and from the database (the cache cleared before each).
//
//	go test -run '^$' -bench FindToken -benchmem -count 6 ./sqlite | benchstat -
func BenchmarkFindToken(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	a, _ := db.CreateAccount(ctx, "acme")
	id, _, hash := tidings.NewTokenSecret()
	tok := &tidings.Token{ID: id, AccountID: a.ID, Name: "ci", Access: "full",
		Roles: []string{tidings.RoleLog, tidings.RoleInsight}, Hash: hash}
	if err := db.CreateToken(ctx, tok); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		clear bool
	}{{"cached", false}, {"database", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if c.clear {
					db.tokens.Clear()
				}
				if _, err := db.FindToken(ctx, tok.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
