package tidings

import "fmt"

// SchemaMismatch is why a store whose schema is at migration have cannot be opened
// read-only by a version whose last migration is want, and what to do about it; nil
// when they are the same. A read-only open does not migrate: upgrading is a write.
// Every store says it the same way.
func SchemaMismatch(have, want int64) error {
	switch {
	case have < want:
		return fmt.Errorf("the store's schema is at migration %d, this tidings expects %d: start `tidings serve` once "+
			"(it upgrades the schema), then run this command again", have, want)
	case have > want:
		return fmt.Errorf("the store's schema is at migration %d, newer than this tidings knows (%d): "+
			"use the version of tidings that serves it", have, want)
	}
	return nil
}
