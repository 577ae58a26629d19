package postgres_test

import (
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/storetest"
)

// TestHooks runs the shared suite of inbound hooks and their delivery logs.
func TestHooks(t *testing.T) {
	t.Parallel()
	storetest.Hooks(t, func(t *testing.T) tidings.Store { return open(t) })
}
