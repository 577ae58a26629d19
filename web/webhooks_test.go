package web_test

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// TestWebhooksPage: owners add a webhook (its signing secret shown once), send a test,
// see its attempts and delete it; private addresses are refused with a reason; members
// and other accounts cannot touch it.
func TestWebhooksPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	owner := e.owner()
	acme := e.account("acme")
	owner.get("/settings/webhooks").want(t, 200, "Add a webhook", "my-saas")

	owner.post("/settings/webhooks", "url", "http://127.0.0.1:9/hook", "project", "my-saas", "format", "standard", "events", "all").
		want(t, 400, "loopback or private address")
	owner.post("/settings/webhooks", "url", "ftp://example.com", "project", "my-saas").want(t, 400, "http:// or https://")
	owner.post("/settings/webhooks", "url", "https://example.com/x", "project", "nope").want(t, 400, "nope")

	if r := owner.post("/settings/webhooks", "name", "audit", "url", "https://hooks.example.com/tidings", "project", "my-saas",
		"channel", "payments", "format", "standard", "events", "notify"); r.status != 303 || !strings.HasPrefix(r.location, "/settings/webhooks/wh_") {
		t.Fatalf("creating a webhook: %d to %q", r.status, r.location)
	}
	hooks, err := e.store.ListWebhooks(context.Background(), acme.ID)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("stored %v %v", hooks, err)
	}
	hook := hooks[0]
	// The webhook's own page shows its signing secret, once.
	p := owner.get("/settings/webhooks/" + hook.ID)
	p.want(t, 200, "whsec_", "audit", "my-saas #payments", "Danger zone")
	owner.get("/settings/webhooks").want(t, 200, "audit", "my-saas #payments", `href="/settings/webhooks/`+hook.ID+`"`, "nothing sent yet")
	if !strings.Contains(html.UnescapeString(p.body), hook.Secret) {
		t.Fatal("the new secret is not shown")
	}
	if strings.Contains(html.UnescapeString(owner.get("/settings/webhooks/"+hook.ID).body), hook.Secret) {
		t.Fatal("the secret is shown again")
	}

	owner.post("/settings/webhooks/"+hook.ID+"/test").redirects(t, "/settings/webhooks/"+hook.ID+"#deliveries")
	if n, _, _ := e.store.PendingDeliveries(context.Background()); n != 1 {
		t.Fatalf("the test queued %d deliveries", n)
	}
	// The test failed twice and is retried: one line, its attempts folded under it.
	retries, err := e.store.WebhookRetries(context.Background(), acme.ID, hook.ID)
	if err != nil || len(retries) != 1 {
		t.Fatalf("pending retries %v %v", retries, err)
	}
	for msg := range retries {
		for try := 1; try <= 2; try++ {
			e.store.RecordWebhookAttempt(context.Background(), &tidings.WebhookAttempt{WebhookID: hook.ID, MessageID: msg,
				EventID: "test", Attempt: try, Status: 503, Error: "503 Service Unavailable", Duration: 42 * time.Millisecond, At: time.Now()})
		}
	}
	p = owner.get("/settings/webhooks/" + hook.ID)
	p.want(t, 200, "test message is on its way", "Test message", "failed 2 times: 503 Service Unavailable, next retry now", "42 ms", "Attempt 2", "Attempt 1")
	if n := strings.Count(p.body, `class="delivery `); n != 1 {
		t.Fatalf("%d lines in the delivery log for one message, want 1", n)
	}
	owner.get("/settings/webhooks").want(t, 200, "↻ retrying")

	m, _ := e.member(acme, "bob@example.com")
	m.get("/settings/webhooks").want(t, 403)
	m.get("/settings/webhooks/"+hook.ID).want(t, 403)
	m.post("/settings/webhooks/"+hook.ID+"/delete").want(t, 403)

	other := newEnvOtherAccount(t, e)
	other.post("/settings/webhooks/"+hook.ID+"/delete").want(t, 404)
	other.post("/settings/webhooks/"+hook.ID+"/test").want(t, 404)
	other.get("/settings/webhooks/"+hook.ID).want(t, 404)

	owner.post("/settings/webhooks/"+hook.ID+"/delete").redirects(t, "/settings/webhooks")
	owner.get("/settings/webhooks").want(t, 200, "Webhook “audit” deleted")
	if hooks, _ := e.store.ListWebhooks(context.Background(), acme.ID); len(hooks) != 0 {
		t.Fatalf("after delete: %v", hooks)
	}
}

// newEnvOtherAccount signs in the owner of a second account on the same server.
func newEnvOtherAccount(t *testing.T, e *env) *client {
	t.Helper()
	a, err := e.store.CreateAccount(context.Background(), "globex")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := e.user(a, "eve@globex.example", tidings.UserOwner)
	return c
}

// TestWebhookLogNamesEvents: the deliveries of a webhook name the event they carried,
// linked to its page; a test message says so.
func TestWebhookLogNamesEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	owner := e.owner()
	acme := e.account("acme")
	owner.post("/settings/webhooks", "name", "audit", "url", "https://hooks.example.com/tidings", "project", "my-saas",
		"format", "standard", "events", "all")
	hooks, _ := e.store.ListWebhooks(context.Background(), acme.ID)
	ev := e.publish(acme, tidings.NewEvent{Event: "Invoice paid"})
	for _, id := range []string{ev.ID, "01a209b5-f533-751e-9fea-000000000000"} {
		if err := e.store.RecordWebhookAttempt(context.Background(), &tidings.WebhookAttempt{WebhookID: hooks[0].ID, MessageID: "msg_" + id,
			EventID: id, Attempt: 1, Status: 200, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	owner.get("/settings/webhooks/"+hooks[0].ID).want(t, 200, `<a href="/p/my-saas/events/`+ev.ID+`">Invoice paid</a>`, "A deleted event")
	// The event's page lists what the webhooks did with it.
	owner.get("/p/my-saas/events/"+ev.ID).want(t, 200, "<dt>Webhook audit</dt>", `<li class="ok">✓ 200 · attempt 1`)
}
