package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// hookAnswerIDs are the ids of the events a hook's 200 answer names.
func hookAnswerIDs(t *testing.T, body []byte) []string {
	t.Helper()
	var a struct{ Events []struct{ ID string } }
	if err := json.Unmarshal(body, &a); err != nil {
		t.Errorf("a hook's answer %q: %v", body, err)
	}
	var ids []string
	for _, e := range a.Events {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestKilledServerRetriedHookDeliveriesStoreEachOnce: GitHub delivers to a hook and
// retries what it got no 200 for, with the same X-GitHub-Delivery; the server is killed
// with SIGKILL in the middle and started again. Some deliveries are committed by the
// server that is killed and their answers lost on the way (a proxy drops them: GitHub
// sees a 502), so that the case is there whatever the timing of the kill: their retries
// after the restart are answered as replays (Idempotent-Replayed, the same event), and
// every delivery has exactly one event.
func TestKilledServerRetriedHookDeliveriesStoreEachOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	data := testbackend.Location(t)
	setupAccount(t, data)
	const secret = "kill-test-secret"
	db := testbackend.Open(t, data)
	acme, err := db.FindAccount(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	secretPath, hash := tidings.NewHookPath()
	hook := &tidings.Hook{PathHash: hash, AccountID: acme.ID, Project: "my-saas",
		Channel: "payments", Source: tidings.HookGitHub, Secret: secret, Name: "kill test", CreatedAt: time.Now()}
	if err := db.CreateHook(context.Background(), hook); err != nil {
		t.Fatal(err)
	}
	path := "/hooks/" + secretPath
	cmd, serverURL := serveProcess(t, data)

	const workers, each, lostAnswers = 16, 12, 3
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// delivery is GitHub's n-th star delivery: its id, and a body whose stars tag is n.
	delivery := func(n int) (string, []byte) {
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", n), fmt.Appendf(nil, `{"action":"created","starred_at":"2026-11-25T10:00:00Z",`+
			`"repository":{"id":1296269,"name":"Hello-World","full_name":"octocat/Hello-World","html_url":"https://github.com/octocat/Hello-World","stargazers_count":%d},`+
			`"sender":{"login":"user-%d","id":%d}}`, n, n, n)
	}
	post := func(base, id string, body []byte) (*http.Response, []byte, error) {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		req, _ := http.NewRequestWithContext(ctx, "POST", base+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "GitHub-Hookshot/test")
		req.Header.Set("X-GitHub-Event", "star")
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
		res, err := hc.Do(req)
		if err != nil {
			return nil, nil, err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, b, nil
	}

	// Committed, answer lost: the proxy lets the server answer, keeps what it answered,
	// and gives GitHub a 502 instead. GitHub retries these only after the restart.
	target, _ := url.Parse(serverURL)
	var mu sync.Mutex
	committed := map[string][]string{} // delivery id → the events the killed server stored for it
	errLost := errors.New("the answer is lost")
	lossy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ModifyResponse: func(res *http.Response) error {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || res.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("the first delivery of %s: %d %s %s", res.Request.Header.Get("X-GitHub-Delivery"), res.StatusCode, res.Header, b)
			}
			mu.Lock()
			committed[res.Request.Header.Get("X-GitHub-Delivery")] = hookAnswerIDs(t, b)
			mu.Unlock()
			return errLost
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) },
	})
	defer lossy.Close()
	for n := range lostAnswers {
		id, body := delivery(workers*each + n)
		res, _, err := post(lossy.URL, id, body)
		if err != nil || res.StatusCode != http.StatusBadGateway {
			t.Fatalf("through the lossy proxy: %v %v", res, err)
		}
		if ids := committed[id]; len(ids) != 1 {
			t.Fatalf("delivery %s: the server answered events %v, want one", id, ids)
		}
	}
	// They are in the store before the kill.
	before := map[string]bool{}
	for _, ev := range storedEvents(t, data) {
		before[ev.ID] = true
	}
	for id, evs := range committed {
		if !before[evs[0]] {
			t.Fatalf("delivery %s: event %s was answered but is not in the store", id, evs[0])
		}
	}

	// Meanwhile GitHub delivers many more, retrying each until it gets a 200; the
	// server is killed after 60 of them were acknowledged.
	var acked, replays atomic.Int32
	killAt := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	failures := make(chan error, workers)
	deliver := func(id string, body []byte) error {
		for ctx.Err() == nil {
			res, b, err := post(serverURL, id, body)
			if err == nil {
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
				if err := deliver(delivery(w*each + i)); err != nil {
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
	serveAt(t, data, target.Host) // the deliveries are retried until it answers again
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Fatal(err)
	}

	// GitHub retries the deliveries whose answers were lost: each is answered as a
	// replay of what the killed server stored, and the hook's log says so.
	for n := range lostAnswers {
		id, body := delivery(workers*each + n)
		res, b, err := post(serverURL, id, body)
		if err != nil || res.StatusCode != 200 || res.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the retry of %s after the restart: %v %v %s, want 200 with Idempotent-Replayed: true", id, res, err, b)
		}
		if got := hookAnswerIDs(t, b); len(got) != 1 || got[0] != committed[id][0] {
			t.Errorf("the retry of %s answers events %v, want %v: the one the killed server stored", id, got, committed[id])
		}
	}
	// The log is written after the answer: wait for it.
	replayed := func() (missing string) {
		log, err := db.ListHookAttempts(context.Background(), acme.ID, hook.ID)
		if err != nil {
			t.Fatal(err)
		}
		for n := range lostAnswers {
			id, _ := delivery(workers*each + n)
			if !slices.ContainsFunc(log, func(a *tidings.HookAttempt) bool { return a.DeliveryID == id && a.Status == 200 && a.Events == 0 }) {
				return id
			}
		}
		return ""
	}
	for deadline := time.Now().Add(20 * time.Second); replayed() != ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's log has no replay of %s (200, no event stored)", replayed())
		}
	}

	// Every delivery has exactly one event: the stars tag says which delivery made it.
	events := storedEvents(t, data)
	seen := map[string]int{}
	for _, ev := range events {
		stars, _ := ev.Tags.Get("stars")
		seen[stars.Value]++
	}
	for n := range workers*each + lostAnswers {
		if got := seen[fmt.Sprint(n)]; got != 1 {
			t.Errorf("delivery %d has %d events, want exactly 1", n, got)
		}
	}
	if len(events) != workers*each+lostAnswers {
		t.Fatalf("%d events for %d deliveries, want one each", len(events), workers*each+lostAnswers)
	}
	t.Logf("%d deliveries, each stored once; %d committed with their answers lost, replayed after the restart; %d more answers were replays of a delivery kept before the kill",
		workers*each+lostAnswers, lostAnswers, replays.Load())
}
