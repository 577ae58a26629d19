package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	body := merge(goodLog, nil)

	r := e.do("POST", "/v1/log", "", body)
	e.want(r, 401, "missing_token")
	if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="tidings"` {
		t.Fatalf("WWW-Authenticate = %q", got)
	}
	good := e.full
	for name, auth := range map[string]string{
		"unknown token":       "Bearer " + strings.Replace(good, good[4:8], "zzzz", 1),
		"wrong secret":        "Bearer " + good[:len(good)-4] + "aaaa",
		"not a tidings token": "Bearer hello",
		"basic scheme":        "Basic " + good,
		"no scheme":           good,
	} {
		t.Run(name, func(t *testing.T) {
			e := e.in(t) // its failures are the subtest's
			r := e.do("POST", "/v1/log", "", body, "Authorization", auth)
			e.want(r, 401, "invalid_token")
		})
	}
	if r := e.do("POST", "/v1/log", "", body, "Authorization", "bearer "+good); r.status != 200 {
		t.Fatalf("lower-case scheme refused: %d", r.status)
	}
}

// TestRevocationWhileServing: a revoked token is refused from the next request on.
func TestRevocationWhileServing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	secret := e.token(e.acme, tidings.AccessPublic, "my-saas", "payments")
	if r := e.do("POST", "/v1/log", secret, merge(goodLog, nil)); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	id, _, _ := tidings.ParseTokenSecret(secret)
	e.must(e.store.RevokeToken(t.Context(), e.acme.ID, id, time.Now()))
	r := e.do("POST", "/v1/log", secret, merge(goodLog, nil))
	e.want(r, 401, "invalid_token")
	if !strings.Contains(r.problem.Detail, "revoked") {
		t.Fatalf("detail = %q", r.problem.Detail)
	}
}

func TestTokenLimitsAndRoles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := t.Context()
	_, err := e.store.CreateChannel(ctx, e.acme.ID, "my-saas", "deploys")
	e.must(err)
	_, err = e.store.CreateProject(ctx, e.acme.ID, "other")
	e.must(err)
	_, err = e.store.CreateChannel(ctx, e.acme.ID, "other", "payments")
	e.must(err)

	chanPublic := e.token(e.acme, tidings.AccessPublic, "my-saas", "payments")
	projFull := e.token(e.acme, tidings.AccessFull, "my-saas", "")
	chanFull := e.token(e.acme, tidings.AccessFull, "my-saas", "payments")
	logOnly := e.token(e.acme, tidings.AccessFull, "", "", tidings.RoleLog)
	insight := `{"project":"my-saas","title":"Signups","value":1,"change":"increment"}`

	for _, c := range []struct {
		name, token, method, path, body string
		status                          int
		detail                          string
	}{
		{"channel token, own channel", chanPublic, "POST", "/v1/log", merge(goodLog, nil), 200, ""},
		{"channel token, other channel", chanPublic, "POST", "/v1/log", merge(goodLog, map[string]any{"channel": "deploys"}), 403, `channel "payments"`},
		{"channel token, other project", chanPublic, "POST", "/v1/log", merge(goodLog, map[string]any{"project": "other"}), 403, `project "my-saas"`},
		{"channel token, insight of its project", chanPublic, "POST", "/v1/insight", insight, 200, ""},
		{"channel token, insight elsewhere", chanPublic, "POST", "/v1/insight", strings.Replace(insight, "my-saas", "other", 1), 403, `project "my-saas"`},
		{"public token reads events", chanPublic, "GET", "/v1/events?project=my-saas&channel=payments", "", 403, "full access"},
		{"public token reads insights", chanPublic, "GET", "/v1/insights?project=my-saas", "", 403, "full access"},
		{"project token reads its project", projFull, "GET", "/v1/events?project=my-saas", "", 200, ""},
		{"project token reads another", projFull, "GET", "/v1/events?project=other", "", 403, `project "my-saas"`},
		{"project token reads other insights", projFull, "GET", "/v1/insights?project=other", "", 403, `project "my-saas"`},
		{"channel full token, all channels", chanFull, "GET", "/v1/events?project=my-saas", "", 403, "channel=payments"},
		{"channel full token, its channel", chanFull, "GET", "/v1/events?project=my-saas&channel=payments", "", 200, ""},
		{"channel full token, other channel", chanFull, "GET", "/v1/events?project=my-saas&channel=deploys", "", 403, `channel "payments"`},
		{"log role only, log", logOnly, "POST", "/v1/log", merge(goodLog, nil), 200, ""},
		{"log role only, insight", logOnly, "POST", "/v1/insight", insight, 403, `"insight" role`},
		{"log role only, PATCH", logOnly, "PATCH", "/v1/insight", `{"project":"my-saas","title":"A","value":{"$inc":1}}`, 403, `"insight" role`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.in(t) // its failures are the subtest's
			r := e.do(c.method, c.path, c.token, c.body)
			if r.status != c.status {
				t.Fatalf("got %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.status == 403 && (r.problem.Code != "forbidden" || !strings.Contains(r.problem.Detail, c.detail)) {
				t.Fatalf("problem %q %q does not say %q", r.problem.Code, r.problem.Detail, c.detail)
			}
		})
	}
}

// TestTenancy: two accounts with a project of the same name never see each other.
func TestTenancy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	globex := e.account("globex")
	globexFull := e.token(globex, tidings.AccessFull, "", "")
	globexLimited := e.token(globex, tidings.AccessFull, "my-saas", "payments")

	r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": "acme secret"}))
	if r.status != 200 {
		t.Fatal(r.body)
	}
	e.do("POST", "/v1/insight", e.full, `{"project":"my-saas","title":"Revenue","value":100,"change":"update"}`)
	for _, tok := range []string{globexFull, globexLimited} {
		r = e.do("GET", "/v1/events?project=my-saas&channel=payments", tok, "")
		if r.status != 200 || strings.Contains(r.body, "acme secret") {
			t.Fatalf("globex reads acme's events: %s", r.body)
		}
		r = e.do("GET", "/v1/insights?project=my-saas", tok, "")
		if r.status != 200 || strings.Contains(r.body, "Revenue") {
			t.Fatalf("globex reads acme's insights: %s", r.body)
		}
	}
	// Globex's increment of "Revenue" starts from 0 in its own project.
	r = e.do("POST", "/v1/insight", globexFull, `{"project":"my-saas","title":"Revenue","value":1,"change":"increment"}`)
	if v := decode[struct{ Value string }](t, r).Value; v != "1" {
		t.Fatalf("globex increment = %s", v)
	}
	// A project only acme has is not found for globex, and acme's event ID is no cursor for it.
	_, err := e.store.CreateProject(t.Context(), e.acme.ID, "acme-only")
	e.must(err)
	r = e.do("GET", "/v1/events?project=acme-only", globexFull, "")
	e.want(r, 404, "project_not_found")
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	// A stopped clock: buckets refill only when the test says so, however slow the machine.
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	e := newEnvClock(t, api.Limits{TokenRate: 1, TokenBurst: 3, PublicIPRate: 1, PublicIPBurst: 2}, func() time.Time { return now })
	body := merge(goodLog, nil)
	// Full token: the per-token bucket (burst 3).
	for i := 0; i < 3; i++ {
		r := e.do("POST", "/v1/log", e.full, body)
		if r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
		if r.header.Get("RateLimit-Limit") != "3" || r.header.Get("RateLimit-Remaining") != string(rune('2'-i)) {
			t.Fatalf("request %d: RateLimit-Limit %q Remaining %q", i, r.header.Get("RateLimit-Limit"), r.header.Get("RateLimit-Remaining"))
		}
	}
	r := e.do("POST", "/v1/log", e.full, body)
	e.want(r, 429, "rate_limited")
	if r.header.Get("Retry-After") != "1" || r.header.Get("RateLimit-Remaining") != "0" || r.header.Get("RateLimit-Reset") == "" {
		t.Fatalf("429 headers: %v", r.header)
	}
	// Public token: the tighter per-(token, IP) bucket (burst 2) applies first.
	pub := e.token(e.acme, tidings.AccessPublic, "", "")
	for i := 0; i < 2; i++ {
		if r := e.do("POST", "/v1/log", pub, body); r.status != 200 {
			t.Fatalf("public request %d: %d", i, r.status)
		}
	}
	r = e.do("POST", "/v1/log", pub, body)
	e.want(r, 429, "rate_limited")
	if r.header.Get("RateLimit-Limit") != "2" {
		t.Fatalf("public 429 names limit %q, want the per-IP 2", r.header.Get("RateLimit-Limit"))
	}
	// It says why, where the SDKs print it: a public token's limit per visitor, and what
	// server code uses instead.
	if msg := r.problem.Validation.Body[0].Message; !strings.Contains(msg, "this public token's per-visitor limit is reached") ||
		!strings.Contains(msg, "public tokens are limited per visitor address (1/s, burst 2)") ||
		!strings.Contains(msg, "server code should use a full-access token instead") {
		t.Fatalf("public 429 says %q", msg)
	}
	// A second later one request's worth has come back.
	now = now.Add(time.Second)
	if r := e.do("POST", "/v1/log", pub, body); r.status != 200 {
		t.Fatalf("after a second: %d", r.status)
	}
	e.want(e.do("POST", "/v1/log", pub, body), 429, "rate_limited")
}

func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for i := 0; i < 50; i++ {
		if r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil)); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for _, path := range []string{"/v1/log", "/v1/insight", "/api/v1/log", "/api/v1/insight", "/v1/log/batch"} {
		r := e.do("OPTIONS", path, "", "", "Origin", "https://shop.example", "Access-Control-Request-Method", "POST")
		if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" ||
			r.header.Get("Access-Control-Allow-Methods") != "POST, PATCH, OPTIONS" ||
			r.header.Get("Access-Control-Allow-Headers") != "Authorization, Content-Type, Idempotency-Key" ||
			r.header.Get("Access-Control-Max-Age") == "" || r.header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("%s preflight: %d %v", path, r.status, r.header)
		}
	}
	r := e.do("POST", "/v1/log", "", merge(goodLog, nil), "Origin", "https://shop.example")
	if r.status != 401 || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("errors must carry CORS headers too, or browsers hide them: %v", r.header)
	}
	r = e.do("GET", "/v1/events?project=my-saas", e.full, "", "Origin", "https://shop.example")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("read endpoints must not be open to browsers")
	}
}

func TestRequestIDAndHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	r := e.do("GET", "/healthz", "", "")
	if r.status != 200 || len(r.header.Get("X-Request-Id")) != 16 {
		t.Fatalf("healthz: %d %v", r.status, r.header)
	}
	if r := e.do("GET", "/readyz", "", ""); r.status != 200 {
		t.Fatalf("readyz: %d", r.status)
	}
	r = e.do("POST", "/v1/log", "", "{}")
	if !strings.Contains(r.body, r.header.Get("X-Request-Id")) {
		t.Fatal("problem does not carry the request id")
	}
	e.store.Close()
	r = e.do("GET", "/readyz", "", "")
	e.want(r, 503, "unavailable")
	r = e.do("POST", "/v1/log", e.full, merge(goodLog, nil))
	if r.status < 500 || strings.Contains(r.body, "sql") {
		t.Fatalf("closed store: %d %s", r.status, r.body)
	}
}

func TestLastUsedRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	e.do("POST", "/v1/log", e.full, merge(goodLog, nil))
	id, _, _ := tidings.ParseTokenSecret(e.full)
	// As the token list shows it (FindToken may answer from its one-second memory).
	lastUsed := func() time.Time {
		tok, err := e.store.FindToken(t.Context(), id)
		e.must(err)
		list, err := e.store.ListTokens(t.Context(), tok.AccountID)
		e.must(err)
		for _, l := range list {
			if l.ID == id {
				return l.LastUsedAt
			}
		}
		t.Fatal("token not listed")
		return time.Time{}
	}
	if !lastUsed().IsZero() {
		t.Fatal("last used written per request; it must be batched")
	}
	e.must(e.api.FlushUsage(t.Context()))
	if at := lastUsed(); time.Since(at) > time.Minute {
		t.Fatalf("last used = %v", at)
	}
}

// TestLimitsShared: in a cluster of two each instance allows half of every burst and
// rate, so the cluster as a whole allows the configured limit.
func TestLimitsShared(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	e := newEnvClock(t, api.Limits{TokenRate: 1, TokenBurst: 6, PublicIPRate: 1, PublicIPBurst: 4}, func() time.Time { return now })
	body := merge(goodLog, nil)
	e.do("POST", "/v1/log", e.full, body) // a bucket that exists before the cluster grows
	e.api.ShareLimits(2)
	ok := 0
	for i := 0; i < 10; i++ {
		if r := e.do("POST", "/v1/log", e.full, body); r.status == 200 {
			ok++
		} else if r.header.Get("RateLimit-Limit") != "3" {
			t.Fatalf("RateLimit-Limit %q, want this instance's half, 3", r.header.Get("RateLimit-Limit"))
		}
	}
	if ok != 3 { // the bucket is cut to the new burst
		t.Fatalf("%d requests allowed, want 3", ok)
	}
	pub := e.token(e.acme, tidings.AccessPublic, "", "")
	ok = 0
	for i := 0; i < 10; i++ {
		if r := e.do("POST", "/v1/log", pub, body); r.status == 200 {
			ok++
		}
	}
	if ok != 2 {
		t.Fatalf("public token: %d allowed, want 2 (half of 4)", ok)
	}
	e.api.ShareLimits(1)
	now = now.Add(10 * time.Second)
	ok = 0
	for i := 0; i < 10; i++ {
		if r := e.do("POST", "/v1/log", pub, body); r.status == 200 {
			ok++
		}
	}
	if ok != 4 {
		t.Fatalf("alone again: %d allowed, want 4", ok)
	}
}
