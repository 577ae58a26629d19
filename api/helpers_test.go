package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/inmem"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// env is a running API on a real store (SQLite, then PostgreSQL: testbackend) with account "acme" (project my-saas,
// channel payments) and a full-access token.
type env struct {
	t      testing.TB
	store  tidings.Store
	broker *inmem.Broker
	api    *api.Server
	srv    *httptest.Server
	acme   *tidings.Account
	full   string // full-access token of acme, no limits
}

func newEnv(t testing.TB, limits api.Limits) *env {
	t.Helper()
	return newEnvClock(t, limits, nil)
}

// newEnvClock runs the API with its own clock (nil: the real one).
func newEnvClock(t testing.TB, limits api.Limits, now func() time.Time) *env {
	t.Helper()
	return newEnvWith(t, limits, now, nil)
}

// newEnvWith runs the API on the store as wrap makes it of the real one (nil: as it is);
// opts change its Config further.
func newEnvWith(t testing.TB, limits api.Limits, now func() time.Time, wrap func(tidings.Store) tidings.Store, opts ...func(*api.Config)) *env {
	t.Helper()
	store := testbackend.New(t)
	e := &env{t: t, store: store, broker: inmem.NewBroker(0)}
	served := tidings.Store(store)
	if wrap != nil {
		served = wrap(store)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := api.Config{Store: served, Broker: e.broker, Logger: log, Limits: limits, Now: now}
	for _, o := range opts {
		o(&cfg)
	}
	e.api = api.New(cfg)
	mux := http.NewServeMux()
	e.api.Register(mux)
	mux.Handle("/", e.api.NotFound())
	e.srv = httptest.NewServer(api.Middleware(mux, cfg.Logger, nil))
	t.Cleanup(e.srv.Close)
	e.acme = e.account("acme")
	e.full = e.token(e.acme, tidings.AccessFull, "", "")
	return e
}

func TestMain(m *testing.M) { testbackend.Main(m) }

// noLimits turns rate limiting off for tests that are not about it.
var noLimits = api.Limits{}

func (e *env) account(name string) *tidings.Account {
	e.t.Helper()
	return testbackend.Seed(e.t, e.store, name).Account
}

// in is the env for subtest t: a helper's failure is reported as the subtest's (with
// the parent's t, a table's failing case would read "subtest may have called FailNow
// on a parent test").
func (e *env) in(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) token(a *tidings.Account, access, project, channel string, roles ...string) string {
	e.t.Helper()
	return (&testbackend.Fixture{Store: e.store, Account: a}).Token(e.t, access, project, channel, roles...)
}

type response struct {
	status  int
	header  http.Header
	body    string
	method  string
	problem struct {
		Status     int    `json:"status"`
		Code       string `json:"code"`
		Detail     string `json:"detail"`
		Message    string `json:"message"`
		Validation struct {
			Body  []tidings.FieldError `json:"body"`
			Query []tidings.FieldError `json:"query"`
		} `json:"validation"`
	}
}

// has reports whether the problem names path with the given type: under
// validation.query for GET and DELETE, validation.body otherwise.
func (r *response) has(path, typ string) bool {
	fields := r.problem.Validation.Body
	if r.method == "GET" || r.method == "DELETE" {
		if len(fields) > 0 {
			return false // a query's problems are not the body's
		}
		fields = r.problem.Validation.Query
	}
	for _, f := range fields {
		if f.Path == path && (typ == "" || f.Type == typ) {
			return true
		}
	}
	return false
}

// do sends a request; header pairs follow the body. Content-Type is JSON unless set.
func (e *env) do(method, path, token, body string, header ...string) *response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	e.must(err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := e.srv.Client().Do(req)
	e.must(err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	conform(e.t, req, body, res, b)
	r := &response{status: res.StatusCode, header: res.Header, body: string(b), method: method}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") {
		e.must(json.Unmarshal(b, &r.problem))
		if r.problem.Status != r.status || r.problem.Code == "" || r.problem.Detail == "" {
			e.t.Fatalf("malformed problem for %d: %s", r.status, b)
		}
		// LogSnag's Python and Ruby SDKs print only a top-level message.
		if r.problem.Message != r.problem.Detail {
			e.t.Fatalf("problem %d: message %q is not its detail %q: %s", r.status, r.problem.Message, r.problem.Detail, b)
		}
		// The LogSnag SDKs print validation.body[].message and nothing else: every
		// error says there what it is (a query's field errors say it under query).
		fields := append(r.problem.Validation.Body, r.problem.Validation.Query...)
		if len(fields) == 0 || fields[0].Message == "" {
			e.t.Fatalf("problem %d without a message in validation.body, where the LogSnag SDKs read it: %s", r.status, b)
		}
		if r.problem.Code != tidings.EValidation && len(r.problem.Validation.Body) == 1 && r.problem.Validation.Body[0].Message != r.problem.Detail {
			e.t.Fatalf("problem %d: validation.body says %q, detail %q", r.status, r.problem.Validation.Body[0].Message, r.problem.Detail)
		}
	}
	return r
}

// wantField checks the answer to a body built for one field rule: 200 when path is "",
// otherwise 400 validation_failed with a problem of type typ at path.
func wantField(t *testing.T, r *response, path, typ string) {
	t.Helper()
	if path == "" {
		if r.status != http.StatusOK {
			t.Fatalf("got %d: %s", r.status, r.body)
		}
		return
	}
	if r.status != http.StatusBadRequest || r.problem.Code != "validation_failed" {
		t.Fatalf("got %d %s, want 400 validation_failed: %s", r.status, r.problem.Code, r.body)
	}
	if !r.has(path, typ) {
		t.Fatalf("no %s problem at %q: %s", typ, path, r.body)
	}
}

func (e *env) want(r *response, status int, code string) {
	e.t.Helper()
	if r.status != status || r.problem.Code != code {
		e.t.Fatalf("got %d %q, want %d %q: %s", r.status, r.problem.Code, status, code, r.body)
	}
}

func decode[T any](t *testing.T, r *response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

// merge overlays extra JSON members onto a base object (a key with value nil is removed).
func merge(base map[string]any, extra map[string]any) string {
	m := map[string]any{}
	for k, v := range base {
		m[k] = v
	}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}
