package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/client"
	"github.com/tidings-dev/tidings/inmem"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

func TestMain(m *testing.M) { testbackend.Main(m) }

// server runs the API over a real store with an account acme, project my-saas and
// channel payments, and returns its URL and a full token.
func server(t *testing.T) (string, string) {
	t.Helper()
	url, token, _ := serverStore(t)
	return url, token
}

// serverStore is server with the store, and the account's events counted.
func serverStore(t *testing.T) (string, string, func() int) {
	t.Helper()
	ctx := context.Background()
	store := testbackend.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := api.New(api.Config{Store: store, Broker: inmem.NewBroker(0), Logger: log})
	mux := http.NewServeMux()
	a.Register(mux)
	mux.Handle("/", a.NotFound())
	srv := httptest.NewServer(api.Middleware(mux, log, nil))
	t.Cleanup(srv.Close)
	acme, err := store.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	store.CreateProject(ctx, acme.ID, "my-saas")
	store.CreateChannel(ctx, acme.ID, "my-saas", "payments")
	id, secret, hash := tidings.NewTokenSecret()
	if err := store.CreateToken(ctx, &tidings.Token{ID: id, AccountID: acme.ID, Access: tidings.AccessFull,
		Roles: []string{tidings.RoleLog, tidings.RoleInsight}, Hash: hash}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		n, err := store.CountEvents(ctx, acme.ID, "my-saas", "")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return srv.URL, secret, count
}

// TestClient: publish, read back and change an insight with the server's types; a
// refused request is a *Problem with its code and fields, and tidings.ErrorCode reads it.
func TestClient(t *testing.T) {
	t.Parallel()
	url, token := server(t)
	ctx := context.Background()
	c := client.New(url+"/", token)
	at := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	ev, err := c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Paid", Icon: "💰",
		Tags:   tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "Premium Plan"}, {Key: "seats", Kind: tidings.KindNumber, Value: "3"}},
		UserID: "user-1", Timestamp: at, Description: "**yes**", Parser: tidings.ParserMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID == "" || ev.Event != "Paid" || !ev.Timestamp.Equal(at) || len(ev.Tags) != 2 || ev.Tags[1].Kind != tidings.KindNumber || ev.UserID != "user-1" {
		t.Fatalf("published: %+v", ev)
	}
	page, err := c.Events(ctx, tidings.EventQuery{Project: "my-saas", Limit: 10}, `plan:"Premium Plan"`)
	if err != nil || len(page.Events) != 1 || page.Events[0].ID != ev.ID || page.Events[0].Parser != tidings.ParserMarkdown {
		t.Fatalf("read back: %+v %v", page, err)
	}
	in, err := c.Insight(ctx, &tidings.InsightChange{Project: "my-saas", Title: "Signups", Value: "2", ValueKind: tidings.KindNumber, Change: tidings.ChangeIncrement})
	if err != nil || in.Value != "2" {
		t.Fatalf("increment: %+v %v", in, err)
	}
	dollar := "$"
	in, err = c.Insight(ctx, &tidings.InsightChange{Project: "my-saas", Title: "Revenue", Value: "1205.50", ValueKind: tidings.KindNumber,
		Change: tidings.ChangeUpdate, Prefix: &dollar})
	if err != nil || in.Value != "1205.50" || in.Prefix != "$" {
		t.Fatalf("update: %+v %v", in, err)
	}

	_, err = c.Publish(ctx, &tidings.NewEvent{Project: "My SaaS", Event: "x", Icon: "ab"})
	var p *client.Problem
	if !errors.As(err, &p) || p.Status != 400 || p.Code != tidings.EValidation || len(p.Fields) != 3 || tidings.ErrorCode(err) != tidings.EValidation {
		t.Fatalf("a refused event: %#v", err)
	}
	_, err = client.New(url, "tds_nope_nope").Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "x"})
	if !errors.As(err, &p) || p.Status != 401 {
		t.Fatalf("a bad token: %v", err)
	}
	_, err = c.Events(ctx, tidings.EventQuery{Project: "my-saas", Limit: 1000}, "")
	if !errors.As(err, &p) || p.Code != tidings.EValidation || len(p.Fields) != 1 || p.Fields[0].Path != "limit" {
		t.Fatalf("a bad limit: %#v", err)
	}
	// An answer that is not a problem (a proxy's error page) still becomes one.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>502 Bad Gateway</html>", http.StatusBadGateway)
	}))
	defer proxy.Close()
	_, err = (&client.Client{URL: proxy.URL, Token: token, Attempts: 1}).Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "x"})
	if !errors.As(err, &p) || p.Status != 502 || tidings.ErrorCode(err) != tidings.EInternal {
		t.Fatalf("a proxy's page: %v", err)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("TIDINGS_TOKEN", "")
	if _, err := client.FromEnv(); err == nil {
		t.Fatal("no token, no error")
	}
	t.Setenv("TIDINGS_TOKEN", "tds_x_y")
	t.Setenv("TIDINGS_URL", "")
	if c, err := client.FromEnv(); err != nil || c.URL != client.DefaultURL {
		t.Fatalf("%+v %v", c, err)
	}
}

// flaky stands between the client and the server: it lets the server handle a request
// and then loses the answer (the connection drops) for the first lose requests, and
// answers 503 itself for the next busy ones.
func flaky(t *testing.T, target string, lose, busy int) (string, *atomic.Int32) {
	var seen atomic.Int32
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(seen.Add(1))
		switch {
		case n <= lose:
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r) // stored by the server…
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close() // …but its answer never arrives
			}
		case n <= lose+busy:
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"status":503,"title":"Service unavailable","code":"unavailable","detail":"busy"}`, 503)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &seen
}

// TestRetriesApplyOnce: a publish whose answers are lost, then refused with 503, is
// sent again with its key until it is answered, and is stored once.
func TestRetriesApplyOnce(t *testing.T) {
	t.Parallel()
	target, token, count := serverStore(t)
	ctx := context.Background()
	url, seen := flaky(t, target, 2, 1)
	c := &client.Client{URL: url, Token: token, Backoff: time.Millisecond}
	ev, err := c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Paid"})
	if err != nil || ev.Event != "Paid" {
		t.Fatalf("%+v %v", ev, err)
	}
	if n := count(); n != 1 || seen.Load() != 4 {
		t.Fatalf("%d events after %d attempts; want 1 after 4", n, seen.Load())
	}
	// A batch too, and an insight: one increment.
	url, _ = flaky(t, target, 1, 0)
	c.URL = url
	res, err := c.PublishBatch(ctx, []*tidings.NewEvent{{Project: "my-saas", Channel: "payments", Event: "a"},
		{Project: "my-saas", Channel: "nowhere", Event: "b"}})
	if err != nil || len(res) != 2 || res[0].Event == nil || tidings.ErrorCode(res[1].Err) != tidings.EChannelNotFound {
		t.Fatalf("batch: %+v %v", res, err)
	}
	var p *client.Problem
	if !errors.As(res[1].Err, &p) || p.Status != 404 || len(p.Fields) == 0 {
		t.Fatalf("the refused event's problem: %#v", res[1].Err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d events after the batch, want 2", n)
	}
	url, _ = flaky(t, target, 1, 0)
	c.URL = url
	in, err := c.Insight(ctx, &tidings.InsightChange{Project: "my-saas", Title: "Signups", Value: "1", ValueKind: tidings.KindNumber,
		Change: tidings.ChangeIncrement})
	if err != nil || in.Value != "1" {
		t.Fatalf("insight: %+v %v", in, err)
	}
	// The caller's key: a second call with it is the first one's answer.
	again, err := c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Paid"}, client.IdempotencyKey(ev.ID))
	if err != nil {
		t.Fatal(err)
	}
	replay, err := c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Paid"}, client.IdempotencyKey(ev.ID))
	if err != nil || replay.ID != again.ID || count() != 3 {
		t.Fatalf("the same key twice: %s, %s (%v), %d events", again.ID, replay.ID, err, count())
	}
}

// TestNoRetryOfRefusals: a refusal that will not change (400, 401, 404, 422) is
// returned at once, not sent again.
func TestNoRetryOfRefusals(t *testing.T) {
	t.Parallel()
	target, token, _ := serverStore(t)
	url, seen := flaky(t, target, 0, 0)
	c := &client.Client{URL: url, Token: token, Backoff: time.Millisecond}
	_, err := c.Publish(context.Background(), &tidings.NewEvent{Project: "my-saas", Channel: "nowhere", Event: "x"})
	if tidings.ErrorCode(err) != tidings.EChannelNotFound || seen.Load() != 1 {
		t.Fatalf("%v after %d attempts", err, seen.Load())
	}
}

// TestIntent: the client sends priority, url, actions and key, reads them back, and
// acknowledges and presses.
func TestIntent(t *testing.T) {
	t.Parallel()
	url, token := server(t)
	c := client.New(url, token)
	ctx := t.Context()
	actions := []tidings.Action{{Label: "Open PR", URL: "https://github.com/acme/app/pull/1"}, {Label: "Approve", ID: "approve"}}
	ev, err := c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Deploy 1432",
		Priority: "urgent", URL: "https://example.com/d/1432", Actions: actions, ThreadKey: "deploy-1432"})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Priority != tidings.PriorityUrgent || ev.URL != "https://example.com/d/1432" || ev.ThreadKey != "deploy-1432" ||
		len(ev.Actions) != 2 || ev.Actions[1] != actions[1] || ev.Ack != nil {
		t.Fatalf("published %+v", ev)
	}
	_, err = c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "x", Priority: "loud"})
	if tidings.ErrorCode(err) != tidings.EValidation {
		t.Fatalf("a bad priority: %v", err)
	}
	page, err := c.Events(ctx, tidings.EventQuery{Project: "my-saas"}, "priority:>=high")
	if err != nil || len(page.Events) != 1 || page.Events[0].ThreadKey != "deploy-1432" {
		t.Fatalf("priority:>=high: %+v %v", page, err)
	}
	acked, err := c.Acknowledge(ctx, ev.ID)
	if err != nil || acked.Ack == nil || acked.Ack.By == "" || acked.Ack.At.IsZero() {
		t.Fatalf("acknowledge: %+v %v", acked, err)
	}
	again, err := c.Acknowledge(ctx, ev.ID)
	if err != nil || *again.Ack != *acked.Ack {
		t.Fatalf("again: %+v %v", again, err)
	}
	_, press, err := c.Press(ctx, ev.ID, "approve")
	if err != nil || press.ActionID != "approve" || press.Label != "Approve" || press.Via != "API" || press.EventID != ev.ID {
		t.Fatalf("press: %+v %v", press, err)
	}
	if _, _, err := c.Press(ctx, ev.ID, "nope"); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("press of no action: %v", err)
	}
}
