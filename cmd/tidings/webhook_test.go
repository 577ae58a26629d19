package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-dev/tidings/deliver"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestWebhookDeliveredAfterKill: an event answered 200 reaches its webhook even when the
// process is killed (SIGKILL) before it could deliver; the message is signed with the
// secret `webhook create` printed.
func TestWebhookDeliveredAfterKill(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	var up atomic.Bool
	refused := make(chan struct{}, 10)
	got := make(chan *http.Request, 10)
	bodies := make(chan []byte, 10)
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable) // down while the first process lives
			refused <- struct{}{}
			return
		}
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
	}))
	defer rx.Close()
	code, out, errs := runCLI(t, data, "", "webhook", "create", "--project", "my-saas", "--url", rx.URL, "--events", "all", "--name", "audit log")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "wh_") || !strings.HasPrefix(lines[1], "whsec_") {
		t.Fatalf("webhook create: %d %q %s", code, out, errs)
	}
	// The receiver is on loopback: the CLI warns that a server refuses it by default.
	if !strings.Contains(errs, "warning: "+rx.URL+" is a loopback or private address") || !strings.Contains(errs, "--allow-private-targets") {
		t.Fatalf("webhook create to %s: no warning: %q", rx.URL, errs)
	}
	if _, list, _ := runCLI(t, data, "", "webhook", "list"); !strings.Contains(list, lines[0]) || !strings.Contains(list, "audit log") ||
		strings.Contains(list, lines[1]) {
		t.Fatalf("webhook list: %q", list)
	}

	cmd, url := serveProcess(t, data, "--allow-private-targets")
	status, resp := post(t, url+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"Paid","notify":true}`)
	if status != 200 {
		t.Fatalf("publish: %d %s", status, resp)
	}
	var ev struct{ ID string }
	json.Unmarshal([]byte(resp), &ev)
	// Killed once its first attempt failed, so that the job waits for a retry rather than
	// for a lease: a process killed in the middle of an attempt holds the job for the
	// lease's 2 minutes on PostgreSQL, whose instances share the outbox (and the test's
	// 20 s would end first; CI hit that once under load).
	select {
	case <-refused:
	case <-time.After(20 * time.Second):
		t.Fatal("the first process never tried to deliver")
	}
	time.Sleep(time.Second) // its failed attempt is recorded
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	up.Store(true)
	serveProcess(t, data, "--allow-private-targets")
	select {
	case r := <-got:
		body := <-bodies
		ts, _ := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
		want, _ := deliver.Sign(lines[1], r.Header.Get("webhook-id"), ts, body)
		if r.Header.Get("webhook-signature") != want || !strings.Contains(string(body), ev.ID) {
			t.Fatalf("delivered %s with signature %q, want %q", body, r.Header.Get("webhook-signature"), want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the acknowledged event never reached its webhook after the restart")
	}
}
