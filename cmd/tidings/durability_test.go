package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds the real tidings command once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tidings-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tidings")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// serveProcess starts `tidings serve` as its own process and waits until it answers.
func serveProcess(t *testing.T, data string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return serveAt(t, data, addr, flags...)
}

// serveAt is serveProcess on a given address: a server started again where clients
// look for it.
func serveAt(t *testing.T, data, addr string, flags ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--addr", addr, "--token-rate", "0", "--public-ip-rate", "0"}, append(storeArgs(data), flags...)...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return cmd, url
			}
		}
	}
	t.Fatal("server did not become ready")
	return nil, ""
}

func setupAccount(t *testing.T, data string) string {
	t.Helper()
	for _, args := range [][]string{{"account", "create", "acme"}, {"project", "create", "my-saas"}, {"channel", "create", "my-saas", "payments"}} {
		if code, _, errs := runCLI(t, data, "", args...); code != 0 {
			t.Fatal(errs)
		}
	}
	_, tok, _ := runCLI(t, data, "", "token", "create", "--access", "full")
	return strings.TrimSpace(tok)
}

// publishUntil publishes from several clients until stop is closed or the server is
// gone, and returns the IDs of every event the server acknowledged with 200. After
// the ackedBefore-th acknowledgement it closes ready (nil: none).
func publishUntil(url, token string, stop <-chan struct{}, ackedBefore int, ready chan<- struct{}) []string {
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"e-%d-%d"}`, w, i)
				req, _ := http.NewRequest("POST", url+"/v1/log", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				var ev struct{ ID string }
				json.NewDecoder(res.Body).Decode(&ev)
				res.Body.Close()
				if res.StatusCode == 200 {
					mu.Lock()
					acked = append(acked, ev.ID)
					if len(acked) == ackedBefore && ready != nil {
						close(ready)
					}
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	return acked
}

// storedIDs opens the data folder as a fresh process would and lists every event's ID.
func storedIDs(t *testing.T, data string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, ev := range storedEvents(t, data) {
		ids[ev.ID] = true
	}
	return ids
}

// storedEvents opens the data folder as a fresh process would and reads every event of
// acme's my-saas.
func storedEvents(t *testing.T, data string) []*tidings.Event {
	t.Helper()
	db := testbackend.Open(t, data)
	a, err := db.FindAccount(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var events []*tidings.Event
	before := ""
	for {
		p, err := db.ListEvents(context.Background(), a.ID, tidings.EventQuery{Project: "my-saas", Before: before, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, p.Events...)
		if p.Next == "" {
			return events
		}
		before = p.Next
	}
}

// TestKilledServerLosesNoAcknowledgedEvent kills the server with SIGKILL in the middle
// of a stream of publishes: every event it answered 200 for is in the store afterwards.
func TestKilledServerLosesNoAcknowledgedEvent(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the real binary")
	}
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	cmd, url := serveProcess(t, data)
	// The kill comes once 100 events are acknowledged, while the clients go on.
	stop, ready := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-ready:
		case <-time.After(time.Minute): // the check below says how few were acknowledged
		}
		cmd.Process.Signal(syscall.SIGKILL)
		close(stop)
	}()
	acked := publishUntil(url, token, stop, 100, ready)
	cmd.Wait()
	if len(acked) < 100 {
		t.Fatalf("only %d events acknowledged before the kill: the test proves nothing", len(acked))
	}
	events := storedEvents(t, data)
	stored := map[string]*tidings.Event{}
	for _, ev := range events {
		stored[ev.ID] = ev
	}
	for _, id := range acked {
		if stored[id] == nil {
			t.Fatalf("acknowledged event %s lost after SIGKILL (%d acked, %d stored)", id, len(acked), len(stored))
		}
	}
	// The full-text index trails the events: the newest were likely not indexed when
	// the server died. Search still finds them (the store indexes from its watermark).
	var sample []string
	for i, id := range acked {
		if i%10 == 0 || i >= len(acked)-30 {
			sample = append(sample, id)
		}
	}
	db := testbackend.Open(t, data)
	a, err := db.FindAccount(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range sample {
		s, err := tidings.ParseSearch(`"`+stored[id].Event+`"`, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		q := tidings.EventQuery{Project: "my-saas", Limit: 10}
		q.AddSearch(s)
		p, err := db.ListEvents(t.Context(), a.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Events) != 1 || p.Events[0].ID != id {
			t.Fatalf("search for %q after SIGKILL: %d events, want the acknowledged %s", stored[id].Event, len(p.Events), id)
		}
	}
	if r, err := db.Check(t.Context()); err != nil || !r.OK() {
		t.Fatalf("check after SIGKILL: %v %+v", err, r)
	}
	t.Logf("%d acknowledged, %d stored after SIGKILL, %d found by search", len(acked), len(stored), len(sample))
}

// TestSIGTERMDrainsAndExits: on SIGTERM the server answers what is in flight, commits
// it, and exits 0 within the shutdown timeout.
func TestSIGTERMDrainsAndExits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the real binary")
	}
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	cmd, url := serveProcess(t, data)
	stop := make(chan struct{})
	exited := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		select {
		case <-ready: // SIGTERM comes in the middle of a stream of publishes
		case <-time.After(time.Minute):
		}
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			exited <- err
		case <-time.After(ShutdownTimeout + time.Minute): // the drain's limit, and a loaded machine's slack
			cmd.Process.Kill()
			exited <- fmt.Errorf("still running %v after SIGTERM", ShutdownTimeout+time.Minute)
		}
		close(stop)
	}()
	acked := publishUntil(url, token, stop, 50, ready)
	if err := <-exited; err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	stored := storedIDs(t, data)
	for _, id := range acked {
		if !stored[id] {
			t.Fatalf("acknowledged event %s lost in a graceful stop", id)
		}
	}
}
