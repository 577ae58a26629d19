package api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/hooks"
)

// testSource is a small source for the API's own tests: X-Test-Signature is the hex
// HMAC-SHA256 of the body with the hook's secret; the body is
// {"id":"delivery id","events":[{"event":…,"tags":{…}}]}.
type testSource struct{}

func sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func (testSource) Verify(h *tidings.Hook, r *hooks.Request) error {
	got := r.Header.Get("X-Test-Signature")
	if got == "" {
		return hooks.Unauthorized("no X-Test-Signature header")
	}
	if !hmac.Equal([]byte(got), []byte(sign(h.Secret, r.Body))) {
		return hooks.Unauthorized("the X-Test-Signature header does not match the body")
	}
	return nil
}

func (testSource) Map(h *tidings.Hook, r *hooks.Request) (*hooks.Delivery, error) {
	var b struct {
		ID     string `json:"id"`
		Events []struct {
			Event string            `json:"event"`
			Tags  map[string]string `json:"tags"`
		} `json:"events"`
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		return nil, hooks.BadBody("the body is not the test source's JSON")
	}
	d := &hooks.Delivery{ID: b.ID}
	for _, e := range b.Events {
		ne := &tidings.NewEvent{Event: e.Event}
		for k, v := range e.Tags {
			ne.Tags = append(ne.Tags, tidings.Tag{Key: k, Value: v})
		}
		d.Events = append(d.Events, ne)
	}
	return d, nil
}

// hookStore is the store the API serves (the real one: hooks are kept by both stores).
type hookStore struct {
	tidings.Store
}

type hookEnv struct {
	*env
	hooks *hookStore
}

func newHookEnv(t testing.TB, limits api.Limits) *hookEnv {
	t.Helper()
	var hs *hookStore
	e := newEnvWith(t, limits, nil, func(s tidings.Store) tidings.Store {
		hs = &hookStore{Store: s}
		return hs
	}, func(c *api.Config) {
		c.HookSources = func(name string) hooks.Source {
			if name == tidings.HookJSON {
				return testSource{}
			}
			return hooks.For(name)
		}
	})
	return &hookEnv{env: e, hooks: hs}
}

// hook creates a hook of source (json: the test source) for my-saas #payments and
// returns its path.
func (e *hookEnv) hook(t testing.TB, source, secret string) (path string, h *tidings.Hook) {
	t.Helper()
	p, hash := tidings.NewHookPath()
	h = &tidings.Hook{PathHash: hash, AccountID: e.acme.ID, Project: "my-saas", Channel: "payments", Source: source,
		Secret: secret, Name: "test", CreatedAt: time.Now()}
	if source == tidings.HookJSON {
		h.Template = &tidings.HookTemplate{Event: "{{.event}}"}
	}
	if err := e.hooks.CreateHook(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	return "/hooks/" + p, h
}

type hookResponse struct {
	status int
	header http.Header
	body   string
}

// deliver posts body to path with header pairs, as a provider does (no token).
func (e *hookEnv) deliver(t *testing.T, path string, body io.Reader, header ...string) hookResponse {
	t.Helper()
	req, err := http.NewRequest("POST", e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return hookResponse{res.StatusCode, res.Header, string(b)}
}

func (e *hookEnv) signed(t *testing.T, path, secret, body string) hookResponse {
	t.Helper()
	return e.deliver(t, path, strings.NewReader(body), "X-Test-Signature", sign(secret, []byte(body)))
}

// events returns the project's stored events, newest first.
func (e *hookEnv) events(t *testing.T) []*tidings.Event {
	t.Helper()
	page, err := e.store.ListEvents(context.Background(), e.acme.ID, tidings.EventQuery{Project: "my-saas", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Events
}

func (e *hookEnv) attempts(t *testing.T, h *tidings.Hook) []*tidings.HookAttempt {
	t.Helper()
	as, err := e.hooks.ListHookAttempts(context.Background(), e.acme.ID, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// TestHookDelivery: a signed delivery becomes events, answered as /v1/log answers them
// and announced to live streams; a retried delivery answers the same and stores
// nothing twice; each attempt is in the hook's log.
func TestHookDelivery(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, noLimits)
	path, h := e.hook(t, tidings.HookJSON, "s3cret")
	ls := e.openStream(t, "/v1/events/stream?project=my-saas", e.full)

	body := `{"id":"evt_1","events":[{"event":"New payment","tags":{"amount":"12.50"}},{"event":"Second"}]}`
	r := e.signed(t, path, "s3cret", body)
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var a struct {
		Events []tidings.EventJSON `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.body), &a); err != nil || len(a.Events) != 2 {
		t.Fatalf("answer %s: %v", r.body, err)
	}
	if ev := a.Events[0]; ev.Event != "New payment" || ev.Project != "my-saas" || ev.Channel != "payments" || ev.ID == "" {
		t.Fatalf("event %+v", ev)
	}
	if got := ls.next(); got.id != a.Events[0].ID {
		t.Fatalf("streamed %+v", got)
	}

	again := e.signed(t, path, "s3cret", body)
	if again.status != http.StatusOK || again.body != r.body || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry: %d %q %s, first %s", again.status, again.header.Get("Idempotent-Replayed"), again.body, r.body)
	}
	if n := len(e.events(t)); n != 2 {
		t.Fatalf("%d events stored, want 2", n)
	}
	// A client cannot take a hook's key.
	e.want(e.do("POST", "/v1/log", e.full, merge(goodLog, nil), "Idempotency-Key", "hook:"+h.ID+":evt_9"), http.StatusBadRequest, tidings.EValidation)

	// Without a delivery id every request stores its events.
	for range 2 {
		if r := e.signed(t, path, "s3cret", `{"events":[{"event":"No id"}]}`); r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	if n := len(e.events(t)); n != 4 {
		t.Fatalf("%d events stored, want 4", n)
	}

	log := e.attempts(t, h)
	if len(log) != 4 {
		t.Fatalf("%d attempts logged, want 4", len(log))
	}
	first, retry := log[3], log[2]
	if first.Status != 200 || first.Events != 2 || first.DeliveryID != "evt_1" || first.HookID != h.ID {
		t.Fatalf("first attempt %+v", first)
	}
	if retry.Status != 200 || retry.Events != 0 || retry.DeliveryID != "evt_1" {
		t.Fatalf("the retry's attempt %+v", retry)
	}
}

// TestHookRefusals: a bad signature is a 401, a body that does not parse a 400, a body
// over 1 MiB a 413: nothing stored, each in the log without the body; an unknown or
// malformed path is a 404, the same answer for both, and so is a hook whose channel went.
func TestHookRefusals(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, noLimits)
	path, h := e.hook(t, tidings.HookJSON, "s3cret")

	body := `{"id":"evt_2","events":[{"event":"SECRET-BODY-TEXT"}]}`
	r := e.deliver(t, path, strings.NewReader(body), "X-Test-Signature", sign("wrong", []byte(body)))
	if r.status != http.StatusUnauthorized || !strings.Contains(r.body, "does not match") {
		t.Fatalf("bad signature: %d %s", r.status, r.body)
	}
	if r := e.deliver(t, path, strings.NewReader(body)); r.status != http.StatusUnauthorized {
		t.Fatalf("no signature: %d %s", r.status, r.body)
	}
	if r := e.signed(t, path, "s3cret", `{"id":`); r.status != http.StatusBadRequest {
		t.Fatalf("unparsable: %d %s", r.status, r.body)
	}
	if r := e.signed(t, path, "s3cret", `{"events":[{"event":""}]}`); r.status != http.StatusBadRequest {
		t.Fatalf("an event without a name: %d %s", r.status, r.body)
	}
	huge := bytes.Repeat([]byte("x"), tidings.MaxHookBody+1)
	if r := e.deliver(t, path, bytes.NewReader(huge)); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("too large: %d %s", r.status, r.body)
	}
	// Chunked, no Content-Length.
	if r := e.deliver(t, path, io.MultiReader(bytes.NewReader(huge))); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("too large, chunked: %d %s", r.status, r.body)
	}
	if n := len(e.events(t)); n != 0 {
		t.Fatalf("%d events stored", n)
	}
	log := e.attempts(t, h)
	var statuses []int
	for _, a := range log {
		statuses = append(statuses, a.Status)
		if strings.Contains(a.Error, "SECRET-BODY-TEXT") || a.Error == "" {
			t.Fatalf("attempt %+v", a)
		}
	}
	if want := []int{413, 413, 400, 400, 401, 401}; !equalInts(statuses, want) {
		t.Fatalf("logged %v, want %v", statuses, want)
	}

	unknown := e.signed(t, "/hooks/hk_"+strings.Repeat("a", 52), "s3cret", body)
	malformed := e.signed(t, "/hooks/nothing", "s3cret", body)
	if unknown.status != http.StatusNotFound || malformed.status != http.StatusNotFound {
		t.Fatalf("unknown %d, malformed %d", unknown.status, malformed.status)
	}
	if strip(unknown.body) != strip(malformed.body) {
		t.Fatalf("unknown %s, malformed %s", unknown.body, malformed.body)
	}

	e.must(e.store.DeleteChannel(context.Background(), e.acme.ID, "my-saas", "payments"))
	if r := e.signed(t, path, "s3cret", body); r.status != http.StatusNotFound {
		t.Fatalf("channel deleted: %d %s", r.status, r.body)
	}
}

// strip drops a problem's request id, which differs between answers.
func strip(body string) string {
	var m map[string]any
	json.Unmarshal([]byte(body), &m)
	delete(m, "request_id")
	b, _ := json.Marshal(m)
	return string(b)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHookRateLimit: each hook has the per-token rate limit as its own.
func TestHookRateLimit(t *testing.T) {
	t.Parallel()
	e := newHookEnv(t, api.Limits{TokenRate: 0.001, TokenBurst: 2})
	path, h := e.hook(t, tidings.HookJSON, "s3cret")
	otherPath, _ := e.hook(t, tidings.HookJSON, "s3cret")
	for i := range 2 {
		if r := e.signed(t, path, "s3cret", `{"events":[{"event":"ok"}]}`); r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := e.signed(t, path, "s3cret", `{"events":[{"event":"one too many"}]}`)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r := e.signed(t, otherPath, "s3cret", `{"events":[{"event":"another hook"}]}`); r.status != http.StatusOK {
		t.Fatalf("another hook: %d %s", r.status, r.body)
	}
	if log := e.attempts(t, h); len(log) != 3 || log[0].Status != http.StatusTooManyRequests {
		t.Fatalf("log %+v", log)
	}
}
