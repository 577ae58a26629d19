package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/client"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// countReplays counts the answers that were replays of a kept key.
type countReplays struct {
	next    http.RoundTripper
	replays atomic.Int32
}

func (c *countReplays) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(r)
	if err == nil && res.Header.Get("Idempotent-Replayed") == "true" {
		c.replays.Add(1)
	}
	return res, err
}

// TestKilledServerRetriedWithKeysStoresEachOnce: clients publish with idempotency keys
// and retry on errors; the server is killed with SIGKILL in the middle and started
// again. Afterwards every key has exactly one event: a publish committed before the
// kill, whose answer never left, is answered by its key on the retry, not stored twice.
func TestKilledServerRetriedWithKeysStoresEachOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	cmd, url := serveProcess(t, data)
	const workers, each = 32, 12
	rt := &countReplays{next: &http.Transport{}}
	c := &client.Client{URL: url, Token: token, HTTP: &http.Client{Transport: rt, Timeout: 10 * time.Second},
		Attempts: 1000, Backoff: 20 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var acked atomic.Int32
	killAt := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("k-%d-%d", w, i)
				_, err := c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: key}, client.IdempotencyKey(key))
				if err != nil {
					errs <- fmt.Errorf("%s: %w", key, err)
					return
				}
				if acked.Add(1) == 100 {
					once.Do(func() { close(killAt) })
				}
			}
		}()
	}
	select {
	case <-killAt:
	case <-ctx.Done():
		t.Fatal("100 events were not acknowledged")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	serveAt(t, data, url[len("http://"):]) // the clients retry until it answers again
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ev := range storedEvents(t, data) {
		seen[ev.Event]++
	}
	for w := range workers {
		for i := range each {
			if key := fmt.Sprintf("k-%d-%d", w, i); seen[key] != 1 {
				t.Errorf("key %s has %d events, want exactly 1", key, seen[key])
			}
		}
	}
	if len(seen) != workers*each {
		t.Errorf("%d distinct events, want %d", len(seen), workers*each)
	}
	t.Logf("%d keys, each stored once; %d answers were replays of a key kept before the kill", workers*each, rt.replays.Load())
}
