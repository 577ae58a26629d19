package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/hooks"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestKilledServerRetriedHookDeliveriesStoreEachOnce: GitHub delivers to a hook and
// retries what it got no 200 for, with the same X-GitHub-Delivery; the server is killed
// with SIGKILL in the middle and started again. Every delivery then has exactly one
// event: one committed before the kill, whose answer never left, is answered from its
// key on the retry, not stored twice.
func TestKilledServerRetriedHookDeliveriesStoreEachOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	data := testbackend.Location(t)
	setupAccount(t, data)
	if hooks.For(tidings.HookGitHub) == nil {
		t.Skip("the github source is not in package hooks yet")
	}
	const secret = "kill-test-secret"
	db := testbackend.Open(t, data)
	acme, err := db.FindAccount(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	secretPath, hash := tidings.NewHookPath()
	if err := db.CreateHook(context.Background(), &tidings.Hook{PathHash: hash, AccountID: acme.ID, Project: "my-saas",
		Channel: "payments", Source: tidings.HookGitHub, Secret: secret, Name: "kill test", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	path := "/hooks/" + secretPath
	cmd, url := serveProcess(t, data)

	const workers, each = 16, 12
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var acked, replays atomic.Int32
	killAt := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	failures := make(chan error, workers)
	deliver := func(id string, body []byte) error {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		sig := "sha256=" + hex.EncodeToString(m.Sum(nil))
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, "POST", url+path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", "GitHub-Hookshot/test")
			req.Header.Set("X-GitHub-Event", "star")
			req.Header.Set("X-GitHub-Delivery", id)
			req.Header.Set("X-Hub-Signature-256", sig)
			res, err := hc.Do(req)
			if err == nil {
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				switch {
				case res.StatusCode == 200:
					if res.Header.Get("Idempotent-Replayed") == "true" {
						replays.Add(1)
					}
					return nil
				case res.StatusCode < 500 && res.StatusCode != 409 && res.StatusCode != 429:
					return fmt.Errorf("delivery %s: %d %s", id, res.StatusCode, b)
				}
			}
			time.Sleep(20 * time.Millisecond) // GitHub retries too, later
		}
		return ctx.Err()
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", w, i)
				body := fmt.Appendf(nil, `{"action":"created","starred_at":"2026-11-25T10:00:00Z",`+
					`"repository":{"id":1296269,"name":"Hello-World","full_name":"octocat/Hello-World","html_url":"https://github.com/octocat/Hello-World","stargazers_count":%d},`+
					`"sender":{"login":"user-%d-%d","id":%d}}`, w*each+i, w, i, w*each+i)
				if err := deliver(id, body); err != nil {
					failures <- err
					return
				}
				if acked.Add(1) == 60 {
					once.Do(func() { close(killAt) })
				}
			}
		}()
	}
	select {
	case <-killAt:
	case <-ctx.Done():
		t.Fatal("60 deliveries were not acknowledged")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	serveAt(t, data, url[len("http://"):]) // the deliveries are retried until it answers again
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Fatal(err)
	}
	events := storedEvents(t, data)
	if len(events) != workers*each {
		t.Fatalf("%d events for %d deliveries, want one each", len(events), workers*each)
	}
	t.Logf("%d deliveries, each stored once; %d answers were replays of a delivery kept before the kill", workers*each, replays.Load())
}
