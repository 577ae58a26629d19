package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/inmem"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/web"
)

type env struct {
	t      *testing.T
	store  tidings.Store
	broker *inmem.Broker
	srv    *httptest.Server
	dash   *web.Server
}

// TestMain runs the dashboard's tests on SQLite, then on PostgreSQL.
func TestMain(m *testing.M) { testbackend.Main(m) }

// cheapPasswords are argon2id costs for tests: 64 KiB and one pass instead of 64 MiB and
// three, which under -race took about a second per sign-up and sign-in.
var cheapPasswords = password.Params{Memory: 64, Passes: 1, Threads: 1}

func newEnv(t *testing.T, openSignup bool) *env {
	t.Helper()
	return newEnvWith(t, web.Config{OpenSignup: openSignup})
}

// newEnvWith runs the dashboard with cfg on a fresh store (Store, Broker and Logger are filled in).
func newEnvWith(t *testing.T, cfg web.Config) *env {
	t.Helper()
	return newEnvOn(t, cfg, testbackend.New(t))
}

// newEnvOn runs the dashboard with cfg on store, which may wrap a fresh one.
func newEnvOn(t *testing.T, cfg web.Config, store tidings.Store) *env {
	t.Helper()
	e := &env{t: t, store: store, broker: inmem.NewBroker(0)}
	cfg.Store, cfg.Broker = store, e.broker
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Passwords == (password.Params{}) {
		cfg.Passwords = cheapPasswords // the production cost is kept by internal/password's test
	}
	s, err := web.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.dash = s
	mux := http.NewServeMux()
	s.Register(mux)
	mux.Handle("/", s.NotFound())
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

// client is one browser: its own cookies, redirects not followed so they can be checked.
type client struct {
	e   *env
	c   *http.Client
	jar *cookiejar.Jar
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{e: e, jar: jar, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status   int
	location string
	body     string
	header   http.Header
}

func (c *client) do(method, path string, form url.Values, header ...string) *page {
	c.e.t.Helper()
	if form == nil {
		return c.request(method, path, "", nil, header...)
	}
	return c.request(method, path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()), header...)
}

// request sends a body of a content type, with extra headers (name, value, …).
func (c *client) request(method, path, contentType string, body io.Reader, header ...string) *page {
	c.e.t.Helper()
	req, _ := http.NewRequest(method, c.e.srv.URL+path, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.c.Do(req)
	if err != nil {
		c.e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &page{status: res.StatusCode, location: res.Header.Get("Location"), body: string(b), header: res.Header}
}

func (c *client) get(path string) *page { return c.do("GET", path, nil) }

func (c *client) post(path string, kv ...string) *page {
	f := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Add(kv[i], kv[i+1])
	}
	return c.do("POST", path, f)
}

func (p *page) want(t *testing.T, status int, contains ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d (location %q): %s", p.status, status, p.location, excerpt(p.body))
	}
	for _, s := range contains {
		if !strings.Contains(p.body, s) {
			t.Fatalf("page lacks %q: %s", s, excerpt(p.body))
		}
	}
}

func (p *page) redirects(t *testing.T, to string) {
	t.Helper()
	if p.status != http.StatusSeeOther && p.status != http.StatusFound || p.location != to {
		t.Fatalf("got %d to %q, want a redirect to %q: %s", p.status, p.location, to, excerpt(p.body))
	}
}

var tags = regexp.MustCompile(`(?s)<head>.*</head>`)

func excerpt(s string) string {
	s = tags.ReplaceAllString(s, "")
	if len(s) > 1500 {
		s = s[:1500] + "…"
	}
	return s
}

// owner signs up a fresh install's first account "acme" with project my-saas and
// channel payments, and returns the owner's browser.
func (e *env) owner() *client {
	e.t.Helper()
	c := e.client()
	c.post("/signup", "account", "acme", "email", "ada@example.com", "password", "correct horse", "password2", "correct horse").
		redirects(e.t, "/")
	c.post("/settings/projects", "name", "my-saas").redirects(e.t, "/settings/projects/my-saas")
	c.post("/settings/projects/my-saas/channels", "name", "payments").redirects(e.t, "/settings/projects/my-saas")
	return c
}

func (e *env) account(name string) *tidings.Account {
	e.t.Helper()
	a, err := e.store.FindAccount(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) publish(account *tidings.Account, ev tidings.NewEvent) *tidings.Event {
	e.t.Helper()
	if ev.Project == "" {
		ev.Project, ev.Channel = "my-saas", "payments"
	}
	if ev.Parser == "" {
		ev.Parser = tidings.ParserText
	}
	stored, err := e.store.PublishEvent(context.Background(), account.ID, &ev)
	if err != nil {
		e.t.Fatal(err)
	}
	e.broker.Publish(tidings.Notice{AccountID: account.ID, Event: stored})
	return stored
}
