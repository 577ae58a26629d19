package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestBatchReplayAuthorised: a token replaying a kept batch must be allowed every event
// it stored; a token limited to one channel could otherwise read another channel's
// events by sending a wider token's bytes with its key.
func TestBatchReplayAuthorised(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for _, ch := range []string{"secret", "pub"} {
		_, err := e.store.CreateChannel(context.Background(), e.acme.ID, "my-saas", ch)
		e.must(err)
	}
	ev := func(channel string) string {
		return fmt.Sprintf(`{"project":"my-saas","channel":%q,"event":"in %s"}`, channel, channel)
	}
	body := batchOf(ev("secret"), ev("pub"))
	first := e.do("POST", "/v1/log/batch", e.full, body, "Idempotency-Key", "K")
	kept := decode[batchResults](t, first)
	if first.status != 200 || kept.Results[0].Status != 200 || kept.Results[1].Status != 200 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	secretID := kept.Results[0].Event.ID
	for _, c := range []struct{ name, token string }{
		{"channel pub, public", e.token(e.acme, tidings.AccessPublic, "my-saas", "pub")},
		{"channel pub, full", e.token(e.acme, tidings.AccessFull, "my-saas", "pub")},
		{"channel secret", e.token(e.acme, tidings.AccessFull, "my-saas", "secret")},
		{"no log role", e.token(e.acme, tidings.AccessFull, "", "", tidings.RoleInsight)},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.in(t)
			r := e.do("POST", "/v1/log/batch", c.token, body, "Idempotency-Key", "K")
			if replayed(r) || strings.Contains(r.body, kept.Results[1].Event.ID) || strings.Contains(r.body, secretID) {
				t.Fatalf("a token outside the batch's limits got its answer: %v %s", r.header, r.body)
			}
			if r.status == 403 && r.problem.Code != "forbidden" {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
	if again := e.do("POST", "/v1/log/batch", e.full, body, "Idempotency-Key", "K"); !replayed(again) || again.body != first.body {
		t.Fatalf("the full token's own replay: %v %s", again.header, again.body)
	}
	// The refusal names the limit, and no more is stored.
	r := e.do("POST", "/v1/log/batch", e.token(e.acme, tidings.AccessPublic, "my-saas", "pub"), body, "Idempotency-Key", "K")
	e.want(r, 403, "forbidden")
	if !strings.Contains(r.problem.Detail, `limited to channel "pub"`) || !strings.Contains(r.problem.Detail, "events[0]") {
		t.Fatalf("403 says %q", r.problem.Detail)
	}
	if n, err := e.store.CountEvents(context.Background(), e.acme.ID, "my-saas", ""); err != nil || n != 2 {
		t.Fatalf("%d events stored (%v), want 2", n, err)
	}
	// A channel-limited token replaying its own batch, of which one event was refused
	// for it, gets its answer.
	pub := e.token(e.acme, tidings.AccessPublic, "my-saas", "pub")
	own := e.do("POST", "/v1/log/batch", pub, body, "Idempotency-Key", "K2")
	got := decode[batchResults](t, own)
	if got.Results[0].Status != 403 || got.Results[1].Status != 200 {
		t.Fatalf("own batch: %s", own.body)
	}
	if again := e.do("POST", "/v1/log/batch", pub, body, "Idempotency-Key", "K2"); !replayed(again) || again.body != own.body {
		t.Fatalf("own replay: %v %s", again.header, again.body)
	}
}

// TestReplayOutsideLimits: on every keyed endpoint, a token outside the limits of the
// one that used the key cannot obtain the kept answer by sending the same request.
func TestReplayOutsideLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := context.Background()
	_, err := e.store.CreateProject(ctx, e.acme.ID, "other")
	e.must(err)
	_, err = e.store.CreateChannel(ctx, e.acme.ID, "my-saas", "deploys")
	e.must(err)
	otherProject := e.token(e.acme, tidings.AccessFull, "other", "")
	for _, c := range []struct {
		name, method, path, body string
		outside                  map[string]string // name → token
	}{
		{"log", "POST", "/v1/log", `{"project":"my-saas","channel":"payments","event":"Paid","tags":{"card":"4242"}}`,
			map[string]string{"channel": e.token(e.acme, tidings.AccessFull, "my-saas", "deploys"), "project": otherProject,
				"role": e.token(e.acme, tidings.AccessFull, "", "", tidings.RoleInsight)}},
		{"insight", "POST", "/v1/insight", `{"project":"my-saas","title":"MRR","value":"9100","change":"update"}`,
			map[string]string{"project": otherProject, "role": e.token(e.acme, tidings.AccessPublic, "", "", tidings.RoleLog)}},
		{"increment", "PATCH", "/v1/insight", `{"project":"my-saas","title":"Sales","value":{"$inc":9100}}`,
			map[string]string{"project": otherProject, "role": e.token(e.acme, tidings.AccessPublic, "", "", tidings.RoleLog)}},
		{"identify", "POST", "/v1/identify", `{"project":"my-saas","user_id":"u9","properties":{"email":"u9@example.com"}}`,
			map[string]string{"project": otherProject, "role": e.token(e.acme, tidings.AccessFull, "", "", tidings.RoleInsight)}},
		{"group", "POST", "/v1/group", `{"project":"my-saas","group_id":"g9","user_id":"u9","properties":{"plan":"gold"}}`,
			map[string]string{"project": otherProject, "role": e.token(e.acme, tidings.AccessFull, "", "", tidings.RoleInsight)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.in(t)
			key := "replay-" + c.name
			first := e.do(c.method, c.path, e.full, c.body, "Idempotency-Key", key)
			if first.status != 200 {
				t.Fatalf("first: %d %s", first.status, first.body)
			}
			for limit, tok := range c.outside {
				r := e.do(c.method, c.path, tok, c.body, "Idempotency-Key", key)
				e.want(r, 403, "forbidden")
				if replayed(r) || strings.Contains(r.body, strings.TrimSpace(first.body)) {
					t.Fatalf("outside its %s limit: %v %s", limit, r.header, r.body)
				}
			}
			if r := e.do(c.method, c.path, e.full, c.body, "Idempotency-Key", key); !replayed(r) || r.body != first.body {
				t.Fatalf("the first token's replay: %v %s", r.header, r.body)
			}
		})
	}
}
