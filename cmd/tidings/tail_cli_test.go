package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// tailWait polls cond until it holds, failing after a generous deadline.
func tailWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}

// sseServer speaks GET /v1/events/stream as the contract says, with faults: the first
// connection drops after two events, the second resends the event named by
// Last-Event-ID (a duplicate tail must not print) before the rest.
type sseServer struct {
	mu       sync.Mutex
	events   []tidings.EventJSON
	requests []*http.Request
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	n := len(s.requests)
	s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer tds_good" {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(401)
		fmt.Fprint(w, `{"status":401,"title":"Unauthorized","code":"invalid_token","detail":"the token is unknown or revoked","message":"the token is unknown or revoked"}`)
		return
	}
	if r.URL.Path != "/v1/events/stream" || r.URL.Query().Get("project") != "my-saas" || r.Header.Get("Accept") != "text/event-stream" {
		http.Error(w, "bad request "+r.URL.String(), 400)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fmt.Fprint(w, ": hello\n\n")
	fl.Flush()
	from := 0
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		from = slices.IndexFunc(s.events, func(e tidings.EventJSON) bool { return e.ID == last }) // resent: a duplicate
	}
	to := len(s.events)
	if n == 1 {
		to = 2
	}
	for _, e := range s.events[from:to] {
		b, _ := json.Marshal(e)
		fmt.Fprintf(w, "id: %s\ndata: %s\n\n", e.ID, b)
		fmt.Fprint(w, ": heartbeat\n\n")
		fl.Flush()
	}
	if n == 1 {
		return // the connection drops
	}
	<-r.Context().Done()
}

// TestTailResumes: tail prints each event once, in order, across a dropped connection
// (it resumes with Last-Event-ID and ignores what the server sends twice); --json prints
// the events' JSON lines; the filters reach the server as query parameters.
func TestTailResumes(t *testing.T) {
	t.Parallel()
	s := &sseServer{}
	for i := range 5 {
		s.events = append(s.events, tidings.EventJSON{ID: fmt.Sprintf("01a2-%d", i), Project: "my-saas", Channel: "payments",
			Event: fmt.Sprintf("Paid %d", i), Icon: "💰", Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "pro plus"},
				{Key: "seats", Kind: tidings.KindNumber, Value: "3"}}, Parser: "text", Timestamp: 1795323692 + int64(i), Priority: "default"})
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	for _, asJSON := range []bool{false, true} {
		t.Run(fmt.Sprint("json=", asJSON), func(t *testing.T) {
			s.mu.Lock()
			s.requests = nil
			s.mu.Unlock()
			var out, log syncBuffer
			tl := &tailer{URL: srv.URL + "/v1/events/stream?project=my-saas&tag=plan%3Apro", Token: "tds_good", JSON: asJSON,
				Out: &out, Log: &log, Backoff: 10 * time.Millisecond}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tl.Run(ctx) }()
			tailWait(t, "five events", func() bool { return strings.Count(out.String(), "\n") >= 5 })
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Run after cancel: %v", err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != 5 {
				t.Fatalf("%d lines, want 5:\n%s", len(lines), out.String())
			}
			for i, line := range lines {
				e := s.events[i]
				if asJSON {
					var got tidings.EventJSON
					if err := json.Unmarshal([]byte(line), &got); err != nil || got.ID != e.ID || got.Event != e.Event {
						t.Errorf("line %d: %s (%v), want event %s", i, line, err, e.ID)
					}
					continue
				}
				want := time.Unix(e.Timestamp, 0).Local().Format("2006-01-02 15:04:05") + "  💰 #payments  " + e.Event + `  plan="pro plus"  seats=3`
				if line != want {
					t.Errorf("line %d:\n got %q\nwant %q", i, line, want)
				}
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.requests) < 2 || s.requests[0].Header.Get("Last-Event-ID") != "" || s.requests[1].Header.Get("Last-Event-ID") != s.events[1].ID {
				t.Errorf("the reconnect did not resume after %s: %d requests", s.events[1].ID, len(s.requests))
			}
			if got := s.requests[0].URL.Query()["tag"]; !slices.Equal(got, []string{"plan:pro"}) {
				t.Errorf("tag: %q", got)
			}
			if !strings.Contains(log.String(), "connecting again") {
				t.Errorf("the reconnect was not said on standard error: %q", log.String())
			}
		})
	}
}

// TestTailRefused: a refused token is one line and exit 1, with no retry; a missing
// project or token is said before connecting.
func TestTailRefused(t *testing.T) {
	s := &sseServer{}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	code, out, errs := runCLI(t, "", "", "tail", "--url", srv.URL, "--token", "tds_bad", "-p", "my-saas")
	if code != 1 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "the token is unknown or revoked (401 invalid_token)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if len(s.requests) != 1 {
		t.Errorf("%d requests: a 401 must not be retried", len(s.requests))
	}
	t.Setenv("TIDINGS_TOKEN", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tail", "--url", srv.URL, "--token", "tds_good"}, "-p/--project is required"},
		{[]string{"tail", "--url", srv.URL, "-p", "my-saas"}, "no token"},
	} {
		code, out, errs := runCLI(t, "", "", c.args...)
		if code != 1 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", c.args, code, out, errs, c.want)
		}
	}
}

// TestTailIdle: a connection on which nothing arrives (not even a heartbeat) is given up
// and made again.
func TestTailIdle(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	var out, log syncBuffer
	tl := &tailer{URL: srv.URL + "/v1/events/stream?project=my-saas", Token: "tds_good", Out: &out, Log: &log,
		Backoff: 10 * time.Millisecond, Idle: 100 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tl.Run(ctx) }()
	tailWait(t, "a second connection", func() bool { mu.Lock(); defer mu.Unlock(); return n >= 2 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "nothing arrived for 100ms") {
		t.Errorf("standard error: %q", log.String())
	}
}

// TestEventLineIsPrintable: a terminal's escape sequences in an event never reach it.
func TestEventLineIsPrintable(t *testing.T) {
	line := eventLine(&tidings.EventJSON{Channel: "ops", Event: "a\x1b[2Jb", Tags: tidings.Tags{{Key: "k", Value: "\x07"}}})
	if strings.ContainsAny(line, "\x1b\x07") {
		t.Fatalf("%q", line)
	}
}
