package charts

import (
	"context"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func TestGate(t *testing.T) {
	g := NewGate(1, 2)
	ctx := context.Background()
	a1, err := g.Enter(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter(ctx, 1); tidings.ErrorCode(err) != tidings.ERateLimited {
		t.Fatalf("a second question of account 1: %v", err)
	}
	b1, err := g.Enter(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Both slots taken: account 3 waits, and gives up with its context.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := g.Enter(short, 3); err == nil {
		t.Fatal("a third question entered a gate of two")
	}
	done := make(chan error)
	go func() {
		leave, err := g.Enter(ctx, 3)
		if err == nil {
			leave()
		}
		done <- err
	}()
	a1()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b1()
	if n := g.Accounts(); n != 0 {
		t.Fatalf("%d accounts remembered", n)
	}
	// Many accounts come and go: the map holds only those under way.
	for id := int64(0); id < 10_000; id++ {
		leave, err := g.Enter(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		leave()
	}
	if n := g.Accounts(); n != 0 {
		t.Fatalf("%d accounts remembered", n)
	}
}
