package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
)

func (e *env) countEvents(a *tidings.Account) int {
	e.t.Helper()
	n, err := e.store.CountEvents(context.Background(), a.ID, "my-saas", "")
	e.must(err)
	return n
}

func replayed(r *response) bool { return r.header.Get("Idempotent-Replayed") == "true" }

// TestIdempotentPublish: a publish sent again with its key is answered with the first
// answer, byte for byte, and stores nothing more; the key with another body is refused.
func TestIdempotentPublish(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	sub := e.broker.Subscribe(e.acme.ID)
	defer sub.Close()
	body := merge(goodLog, map[string]any{"notify": true})
	first := e.do("POST", "/v1/log", e.full, body, "Idempotency-Key", "order-1001")
	if first.status != 200 || replayed(first) {
		t.Fatalf("first: %d %v %s", first.status, first.header, first.body)
	}
	for _, path := range []string{"/v1/log", "/api/v1/log"} { // the alias is the same endpoint
		again := e.do("POST", path, e.full, body, "Idempotency-Key", "order-1001")
		if again.status != 200 || !replayed(again) || again.body != first.body {
			t.Fatalf("%s again: %d %v\n%s\nfirst:\n%s", path, again.status, again.header, again.body, first.body)
		}
	}
	if n := e.countEvents(e.acme); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
	<-sub.C() // the first publish's notice; the replays sent none
	select {
	case n := <-sub.C():
		t.Fatalf("a replay published a notice: %+v", n)
	default:
	}
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, map[string]any{"event": "Another"}), "Idempotency-Key", "order-1001")
	e.want(r, 422, "idempotency_key_reused")
	r = e.do("PATCH", "/v1/insight", e.full, `{"project":"my-saas","title":"t","value":{"$inc":1}}`, "Idempotency-Key", "order-1001")
	e.want(r, 422, "idempotency_key_reused")
	// Another account's same key is its own.
	globex := e.account("globex")
	r = e.do("POST", "/v1/log", e.token(globex, tidings.AccessFull, "", ""), body, "Idempotency-Key", "order-1001")
	if r.status != 200 || replayed(r) || e.countEvents(globex) != 1 {
		t.Fatalf("globex: %d %v", r.status, r.header)
	}
	// Without a key, the same body is a new event each time.
	e.do("POST", "/v1/log", e.full, body)
	e.do("POST", "/v1/log", e.full, body)
	if n := e.countEvents(e.acme); n != 3 {
		t.Fatalf("%d events, want 3", n)
	}
}

// TestIdempotencyNotKeptForFailures: an answer that changed nothing is not kept: the
// same key runs again once the request can succeed.
func TestIdempotencyNotKeptForFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	body := merge(goodLog, map[string]any{"channel": "deploys"})
	e.want(e.do("POST", "/v1/log", e.full, body, "Idempotency-Key", "k1"), 404, "channel_not_found")
	_, err := e.store.CreateChannel(context.Background(), e.acme.ID, "my-saas", "deploys")
	e.must(err)
	if r := e.do("POST", "/v1/log", e.full, body, "Idempotency-Key", "k1"); r.status != 200 || replayed(r) {
		t.Fatalf("after the channel exists: %d %s", r.status, r.body)
	}
	// A 400 is not kept either: the key then serves a good body.
	e.want(e.do("POST", "/v1/log", e.full, `{"project":"my-saas"}`, "Idempotency-Key", "k2"), 400, "validation_failed")
	if r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "k2"); r.status != 200 {
		t.Fatalf("k2: %d %s", r.status, r.body)
	}
	// Nor a 403, nor a 401.
	limited := e.token(e.acme, tidings.AccessFull, "my-saas", "deploys")
	e.want(e.do("POST", "/v1/log", limited, merge(goodLog, nil), "Idempotency-Key", "k3"), 403, "forbidden")
	e.want(e.do("POST", "/v1/log", "tds_nope_nope", merge(goodLog, nil), "Idempotency-Key", "k3"), 401, "invalid_token")
	if r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "k3"); r.status != 200 || replayed(r) {
		t.Fatalf("k3: %d %s", r.status, r.body)
	}
}

// TestIdempotencyKeyRules: the header's rules, each with a bad key.
func TestIdempotencyKeyRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	for _, key := range []string{"", strings.Repeat("k", 256), "tab\there", "ключ"} {
		r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", key)
		e.want(r, 400, "validation_failed")
		if !strings.Contains(r.problem.Detail, "Idempotency-Key") {
			t.Fatalf("%q: %s", key, r.problem.Detail)
		}
	}
	if r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", strings.Repeat("~", 255)); r.status != 200 {
		t.Fatalf("255 printable characters: %d %s", r.status, r.body)
	}
	if n := e.countEvents(e.acme); n != 1 {
		t.Fatalf("%d events, want 1 (refused keys store nothing)", n)
	}
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/log", strings.NewReader(merge(goodLog, nil)))
	req.Header.Set("Authorization", "Bearer "+e.full)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Idempotency-Key", "a")
	req.Header.Add("Idempotency-Key", "b")
	res, err := http.DefaultClient.Do(req)
	e.must(err)
	res.Body.Close()
	if res.StatusCode != 400 {
		t.Fatalf("two keys: %d", res.StatusCode)
	}
}

// gated holds the first keyed publish until the test lets it through.
type gated struct {
	tidings.Store
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (g *gated) PublishEvent(ctx context.Context, account int64, e *tidings.NewEvent) (*tidings.Event, error) {
	if e.Key != nil {
		g.once.Do(func() {
			g.entered <- struct{}{}
			<-g.release
		})
	}
	return g.Store.PublishEvent(ctx, account, e)
}

// TestIdempotencyInFlight: the key of a request still under way answers 409 with
// Retry-After: 1, and its answer once it is done.
func TestIdempotencyInFlight(t *testing.T) {
	t.Parallel()
	g := &gated{entered: make(chan struct{}), release: make(chan struct{})}
	e := newEnvWith(t, noLimits, nil, func(s tidings.Store) tidings.Store { g.Store = s; return g })
	first := make(chan *response, 1)
	go func() { first <- e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "slow") }()
	<-g.entered
	r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "slow")
	e.want(r, 409, "idempotency_in_progress")
	if r.header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	close(g.release)
	f := <-first
	if f.status != 200 {
		t.Fatalf("first: %d %s", f.status, f.body)
	}
	if r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "slow"); !replayed(r) || r.body != f.body {
		t.Fatalf("after: %d %v %s", r.status, r.header, r.body)
	}
}

// TestIdempotentInsightAndPeople: an increment, identify and group replayed change
// nothing more.
func TestIdempotentInsightAndPeople(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	inc := `{"project":"my-saas","title":"Signups","value":{"$inc":1}}`
	set := `{"project":"my-saas","title":"Plan","value":"pro","change":"update"}`
	identify := `{"project":"my-saas","user_id":"u1","properties":{"plan":"pro"}}`
	group := `{"project":"my-saas","group_id":"g1","user_id":"u1"}`
	for i := 0; i < 3; i++ {
		for _, c := range []struct{ method, path, body, key string }{
			{"PATCH", "/v1/insight", inc, "i1"}, {"POST", "/v1/insight", set, "i2"},
			{"POST", "/v1/identify", identify, "p1"}, {"POST", "/v1/group", group, "g1"},
		} {
			r := e.do(c.method, c.path, e.full, c.body, "Idempotency-Key", c.key)
			if r.status != 200 || replayed(r) != (i > 0) {
				t.Fatalf("%s %s #%d: %d %v %s", c.method, c.path, i, r.status, r.header, r.body)
			}
		}
	}
	hist, err := e.store.InsightHistory(context.Background(), e.acme.ID, "my-saas", "Signups", 10)
	e.must(err)
	if len(hist) != 1 || hist[0].Value != "1" {
		t.Fatalf("history %+v: one increment", hist)
	}
}

func batchOf(events ...string) string { return `{"events":[` + strings.Join(events, ",") + `]}` }

type batchResults struct {
	Results []struct {
		Status int `json:"status"`
		Event  *struct {
			ID    string `json:"id"`
			Event string `json:"event"`
		} `json:"event"`
		Error *struct {
			Code       string `json:"code"`
			Validation struct {
				Body []tidings.FieldError `json:"body"`
			} `json:"validation"`
		} `json:"error"`
	} `json:"results"`
}

// TestBatch: each event of a batch is validated, authorised and stored on its own; the
// answer says each one's outcome in order.
func TestBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ev := func(channel, name string) string {
		return fmt.Sprintf(`{"project":"my-saas","channel":%q,"event":%q}`, channel, name)
	}
	r := e.do("POST", "/v1/log/batch", e.full, batchOf(ev("payments", "one"), `{"project":"my-saas"}`, ev("nowhere", "three"),
		`"not an object"`, ev("payments", "five")))
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	got := decode[batchResults](t, r)
	want := []string{"200", "400 validation_failed", "404 channel_not_found", "400 invalid_json", "200"}
	if len(got.Results) != len(want) {
		t.Fatalf("%d results: %s", len(got.Results), r.body)
	}
	for i, res := range got.Results {
		s := fmt.Sprint(res.Status)
		if res.Error != nil {
			s += " " + res.Error.Code
			if len(res.Error.Validation.Body) == 0 {
				t.Fatalf("result %d: no validation.body", i)
			}
		}
		if s != want[i] || (res.Status == 200) != (res.Event != nil) {
			t.Fatalf("result %d: %s, want %s: %s", i, s, want[i], r.body)
		}
	}
	if got.Results[0].Event.Event != "one" || got.Results[4].Event.Event != "five" || e.countEvents(e.acme) != 2 {
		t.Fatalf("stored: %s", r.body)
	}
	// A channel-limited token: its other channels' events are refused one by one.
	limited := e.token(e.acme, tidings.AccessPublic, "my-saas", "payments")
	got = decode[batchResults](t, e.do("POST", "/v1/log/batch", limited, batchOf(ev("payments", "ok"), ev("deploys", "no"))))
	if got.Results[0].Status != 200 || got.Results[1].Status != 403 || got.Results[1].Error.Code != "forbidden" {
		t.Fatalf("limited: %+v", got)
	}
	// The limits of the batch itself.
	e.want(e.do("POST", "/v1/log/batch", e.full, batchOf()), 400, "validation_failed")
	many := make([]string, api.MaxBatchEvents+1)
	for i := range many {
		many[i] = ev("payments", "x")
	}
	r = e.do("POST", "/v1/log/batch", e.full, batchOf(many...))
	e.want(r, 400, "validation_failed")
	if !strings.Contains(r.problem.Detail, "1 to 100 events (got 101)") {
		t.Fatalf("the limit is not named: %s", r.problem.Detail)
	}
	e.want(e.do("POST", "/v1/log/batch", e.full, `{"events":{}}`), 400, "validation_failed")
	e.want(e.do("POST", "/v1/log/batch", e.full, `{"events":[],"extra":1}`), 400, "validation_failed")
	e.want(e.do("POST", "/v1/log/batch", e.full, `[]`), 400, "invalid_json")
	big := fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"big","description":%q}`, strings.Repeat("x", 9000))
	bigs := make([]string, 100)
	for i := range bigs {
		bigs[i] = big
	}
	r = e.do("POST", "/v1/log/batch", e.full, batchOf(bigs[:50]...)) // about 450 KiB: more than a single publish takes
	if r.status != 200 {
		t.Fatalf("a 450 KiB batch: %d %s", r.status, r.problem.Detail)
	}
	r = e.do("POST", "/v1/log/batch", e.full, batchOf(strings.Repeat(`{"project":"my-saas","channel":"payments","event":"`+strings.Repeat("y", 9000)+`"},`, 116)+big))
	e.want(r, 413, "payload_too_large")
	if !strings.Contains(r.problem.Detail, "1024 KiB") {
		t.Fatalf("413 detail %q", r.problem.Detail)
	}
}

// TestBatchKeyed: a keyed batch is replayed whole; one that stored nothing keeps no key.
func TestBatchKeyed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	body := batchOf(`{"project":"my-saas","channel":"payments","event":"a"}`, `{"project":"my-saas","channel":"nope","event":"b"}`)
	first := e.do("POST", "/v1/log/batch", e.full, body, "Idempotency-Key", "batch-1")
	again := e.do("POST", "/v1/log/batch", e.full, body, "Idempotency-Key", "batch-1")
	if first.status != 200 || !replayed(again) || again.body != first.body || e.countEvents(e.acme) != 1 {
		t.Fatalf("first %s\nagain %v %s", first.body, again.header, again.body)
	}
	nothing := batchOf(`{"project":"my-saas","channel":"nope","event":"b"}`)
	for i := 0; i < 2; i++ {
		if r := e.do("POST", "/v1/log/batch", e.full, nothing, "Idempotency-Key", "batch-2"); r.status != 200 || replayed(r) {
			t.Fatalf("a batch that stored nothing, #%d: %v %s", i, r.header, r.body)
		}
	}
	e.want(e.do("POST", "/v1/log/batch", e.full, batchOf(`{"project":"my-saas","channel":"payments","event":"c"}`),
		"Idempotency-Key", "batch-1"), 422, "idempotency_key_reused")
}

// TestBatchRateLimitedPerEvent: each event of a batch spends from the token's bucket;
// those over it are refused with 429 one by one, the others stored.
func TestBatchRateLimitedPerEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, api.Limits{TokenRate: 0.001, TokenBurst: 5})
	events := make([]string, 8)
	for i := range events {
		events[i] = fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"e%d"}`, i)
	}
	r := e.do("POST", "/v1/log/batch", e.full, batchOf(events...))
	got := decode[batchResults](t, r)
	var statuses []int
	for _, res := range got.Results {
		statuses = append(statuses, res.Status)
	}
	if fmt.Sprint(statuses) != "[200 200 200 200 200 429 429 429]" || e.countEvents(e.acme) != 5 {
		t.Fatalf("statuses %v, %d stored: %s", statuses, e.countEvents(e.acme), r.body)
	}
	if got.Results[5].Error.Code != "rate_limited" || r.header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("%v %s", r.header, r.body)
	}
	e.want(e.do("POST", "/v1/log/batch", e.full, batchOf(events[0])), 429, "rate_limited")
}

// TestIdempotencyNotKeptForLimits: a 413 or a 429 changed nothing, so its key is not
// kept: the same key goes through once the request fits.
func TestIdempotencyNotKeptForLimits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnvClock(t, api.Limits{TokenRate: 1, TokenBurst: 1}, clock)
	huge := merge(goodLog, map[string]any{"description": strings.Repeat("x", api.MaxBodyBytes)})
	e.want(e.do("POST", "/v1/log", e.full, huge, "Idempotency-Key", "big"), 413, "payload_too_large")
	mu.Lock()
	now = now.Add(time.Minute) // the 413 was answered before the token was read; refill anyway
	mu.Unlock()
	if r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "big"); r.status != 200 || replayed(r) {
		t.Fatalf("after the 413: %d %s", r.status, r.body)
	}
	// The bucket is empty now (burst 1), and the clock stands still.
	e.want(e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "limited"), 429, "rate_limited")
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if r := e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "limited"); r.status != 200 || replayed(r) {
		t.Fatalf("after the 429: %d %s", r.status, r.body)
	}
	if n := e.countEvents(e.acme); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}
