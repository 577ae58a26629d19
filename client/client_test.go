package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
	return srv.URL, secret
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
	_, err = client.New(proxy.URL, token).Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "x"})
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
