package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v83/webhook"

	"github.com/tidings-dev/tidings"
)

// TestHookStripe: a Stripe event, signed as Stripe signs it (stripe-go's
// GenerateTestSignedPayload), becomes "New payment" with its amount; Stripe's retry of
// the same event (a new timestamp, a new signature) stores nothing twice; a wrong secret
// or an old timestamp is a 401 that stores nothing.
func TestHookStripe(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, noLimits)
	const secret = "whsec_api_test_secret"
	path, h := e.hook(t, tidings.HookStripe, secret)
	body, err := os.ReadFile("../hooks/testdata/stripe/invoice.paid.json")
	if err != nil {
		t.Fatal(err)
	}
	send := func(secret string, at time.Time) hookResponse {
		sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
		return e.deliver(t, path, strings.NewReader(string(body)), "Stripe-Signature", sp.Header)
	}
	if r := send("whsec_wrong", time.Now()); r.status != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d %s", r.status, r.body)
	}
	if r := send(secret, time.Now().Add(-10*time.Minute)); r.status != http.StatusUnauthorized {
		t.Fatalf("old timestamp: %d %s", r.status, r.body)
	}
	first := send(secret, time.Now())
	if first.status != http.StatusOK {
		t.Fatalf("%d %s", first.status, first.body)
	}
	var a struct {
		Events []tidings.EventJSON `json:"events"`
	}
	if err := json.Unmarshal([]byte(first.body), &a); err != nil || len(a.Events) != 1 {
		t.Fatalf("answer %s: %v", first.body, err)
	}
	if ev := a.Events[0]; ev.Event != "New payment" || !strings.Contains(first.body, `"15.00"`) || ev.Channel != "payments" {
		t.Fatalf("event %s", first.body)
	}
	retry := send(secret, time.Now().Add(time.Second))
	if retry.status != http.StatusOK || retry.body != first.body {
		t.Fatalf("retry: %d %s", retry.status, retry.body)
	}
	if n := len(e.events(t)); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
	log := e.attempts(t, h)
	if len(log) != 4 || log[0].Events != 0 || log[1].Events != 1 || log[1].DeliveryID != "evt_1MtwBwLkdIwHu7ixaF1BTPvb" ||
		log[2].Status != 401 || log[3].Status != 401 {
		t.Fatalf("log %+v %+v %+v %+v", log[0], log[1], log[2], log[3])
	}
}

// TestHookGitHub: a GitHub delivery signed with X-Hub-Signature-256 becomes an event;
// its redelivery (the same X-GitHub-Delivery) stores nothing twice; a bad signature is
// a 401.
func TestHookGitHub(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, noLimits)
	const secret = "gh-secret"
	path, _ := e.hook(t, tidings.HookGitHub, secret)
	body, err := os.ReadFile("../hooks/testdata/github/star.created.json")
	if err != nil {
		t.Fatal(err)
	}
	send := func(secret string) hookResponse {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		return e.deliver(t, path, strings.NewReader(string(body)), "X-GitHub-Event", "star",
			"X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958", "X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	}
	if r := send("wrong"); r.status != http.StatusUnauthorized {
		t.Fatalf("bad signature: %d %s", r.status, r.body)
	}
	first := send(secret)
	if first.status != http.StatusOK || !strings.Contains(first.body, `"events":[{`) {
		t.Fatalf("%d %s", first.status, first.body)
	}
	if again := send(secret); again.status != http.StatusOK || again.body != first.body {
		t.Fatalf("redelivery: %d %s", again.status, again.body)
	}
	if n := len(e.events(t)); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
}
