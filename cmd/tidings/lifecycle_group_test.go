package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestGroupStopsInReverseOrder: the parts of the server stop last started first, each
// once the one after it has returned, also when the context they were started under
// ends (which alone stops none of them).
func TestGroupStopsInReverseOrder(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	g := newGroup(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var mu sync.Mutex
	var stopped []string
	for _, name := range []string{"flush", "delivery", "http"} {
		g.start(service{name: name, budget: time.Minute, run: func(ctx context.Context) error {
			<-ctx.Done()
			mu.Lock()
			stopped = append(stopped, name)
			mu.Unlock()
			return nil
		}})
	}
	cancel()
	time.Sleep(50 * time.Millisecond) // room for a service to stop wrongly on its own
	mu.Lock()
	early := slices.Clone(stopped)
	mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("the context's end stopped %v before stop was called", early)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"http", "delivery", "flush"}; !slices.Equal(stopped, want) {
		t.Fatalf("stopped in the order %v, want %v", stopped, want)
	}
}
