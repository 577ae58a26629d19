package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/internal/tokencache"
	"github.com/tidings-dev/tidings/sqlite"
)

// startServer runs a server on port 0 over data, with the contract's default limits.
func startServer(t *testing.T, data string, mod func(*Config)) *Main {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Addr, cfg.MetricsAddr = "127.0.0.1:0", ""
	cfg.Passwords = password.Params{Memory: 64, Passes: 1, Threads: 1} // cheap: the production cost is tested in internal/password
	if testbackend.IsURL(data) {
		cfg.DatabaseURL = data
	} else {
		cfg.Data = data
	}
	if mod != nil {
		mod(&cfg)
	}
	m := &Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestServeWithCLI is the newcomer's path: a server runs, the management CLI sets up
// an account beside it on the same data, the API accepts the token, and a revocation
// from the CLI takes effect on the running server at once.
func TestServeWithCLI(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	m := startServer(t, data, nil)
	for _, args := range [][]string{
		{"account", "create", "acme"},
		{"project", "create", "my-saas", "--account", "acme"},
		{"channel", "create", "my-saas", "payments", "--account", "acme"},
	} {
		if code, _, errs := runCLI(t, data, "", args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
	}
	_, tok, _ := runCLI(t, data, "", "token", "create", "--account", "acme", "--access", "public", "--project", "my-saas", "--channel", "payments")
	tok = strings.TrimSpace(tok)
	body := `{"project":"my-saas","channel":"payments","event":"New Subscription","icon":"💰","notify":true,"tags":{"plan":"premium"}}`
	status, resp := post(t, m.URL()+"/v1/log", tok, body)
	if status != 200 {
		t.Fatalf("publish: %d %s", status, resp)
	}
	var ev struct{ ID, Event string }
	json.Unmarshal([]byte(resp), &ev)
	if ev.ID == "" || ev.Event != "New Subscription" {
		t.Fatalf("response %s", resp)
	}

	id := strings.Split(strings.TrimPrefix(tok, "tds_"), "_")[0]
	if code, _, errs := runCLI(t, data, "", "token", "revoke", id, "--account", "acme"); code != 0 {
		t.Fatal(errs)
	}
	// On SQLite the CLI's revocation counts from the next request. On PostgreSQL the
	// server hears of it by a notification, and in any case within tokencache.TTL: a
	// request that begins later than that after the revocation must be refused. (The
	// request's start counts, not its end: on a busy machine a request that found the
	// token cached just before the TTL ran out may answer after it.)
	revoked := time.Now()
	for {
		began := time.Now()
		status, resp := post(t, m.URL()+"/v1/log", tok, body)
		if status == 401 && strings.Contains(resp, "revoked") {
			break
		}
		if !testbackend.Postgres() || began.Sub(revoked) > tokencache.TTL {
			t.Fatalf("after revoke: %d %s (request began %v after the revocation)", status, resp, began.Sub(revoked))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The server records last use on shutdown at the latest.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	_, list, _ := runCLI(t, data, "", "token", "list")
	if strings.Contains(list, "never-used") {
		t.Fatalf("last use not recorded: %s", list)
	}
}

func TestMetricsListener(t *testing.T) {
	t.Parallel()
	m := startServer(t, testbackend.Location(t), func(c *Config) { c.MetricsAddr = "127.0.0.1:0" })
	post(t, m.URL()+"/v1/log", "", "{}") // one request to count
	res, err := http.Get("http://" + m.metricsLn.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`tidings_http_requests_total{route="POST /v1/log",status="401"} 1`,
		"tidings_commit_batch_size_bucket", "tidings_commit_queue_depth", "tidings_http_request_duration_seconds_bucket",
		`tidings_http_connections_open{listener="public"}`, `tidings_http_connections_max{listener="metrics"} 32`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("/metrics lacks %q", want)
		}
	}
	res, err = http.Get("http://" + m.metricsLn.Addr().String() + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("profiles on the metrics listener: %d", res.StatusCode)
	}
	// The command line (which may hold --database with a password) is not served.
	res, err = http.Get("http://" + m.metricsLn.Addr().String() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || strings.Contains(string(b), os.Args[0]) {
		t.Fatalf("/debug/pprof/cmdline: %d %q", res.StatusCode, b)
	}
	// The main listener exposes neither metrics nor profiles.
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/heap"} {
		res, err = http.Get(m.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Fatalf("%s on the public listener: %d", path, res.StatusCode)
		}
	}
}

func TestShutdownRefusesNothingAcknowledged(t *testing.T) {
	t.Parallel()
	m := startServer(t, testbackend.Location(t), nil)
	done := make(chan error, 1)
	go func() { done <- m.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(ShutdownTimeout):
		t.Fatal("shutdown took longer than 10 s")
	}
}

// TestShutdownEndsOpenStreams: a dashboard tab left open does not hold a graceful
// shutdown up; the stream ends and Close returns at once without error.
func TestShutdownEndsOpenStreams(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	m := startServer(t, data, nil)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	form := url.Values{"account": {"acme"}, "email": {"ada@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}}
	if res, err := c.PostForm(m.URL()+"/signup", form); err != nil || res.StatusCode != 200 {
		t.Fatalf("sign-up: %v %v", res, err)
	}
	if res, err := c.PostForm(m.URL()+"/settings/projects", url.Values{"name": {"my-saas"}}); err != nil || res.StatusCode != 200 {
		t.Fatalf("project: %v %v", res, err)
	}
	res, err := c.Get(m.URL() + "/p/my-saas/stream")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("stream: %v %v", res, err)
	}
	defer res.Body.Close()
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Fatalf("Close with an open stream: %v", err)
	}
	if d := time.Since(start); d > ShutdownTimeout+30*time.Second { // its drain's limit, and a loaded machine's slack
		t.Fatalf("Close took %v with an open stream", d)
	}
}

// TestSlowClientsAreCutOff: a client that trickles its headers, or its body, loses the
// connection when the timeouts run out instead of holding it forever.
func TestSlowClientsAreCutOff(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	cfg := DefaultConfig()
	cfg.Addr, cfg.Data = "127.0.0.1:0", t.TempDir()
	m := &Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Timeouts: Timeouts{ReadHeader: 300 * time.Millisecond, Read: 600 * time.Millisecond, Idle: time.Second}}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	addr := strings.TrimPrefix(m.URL(), "http://")
	for name, start := range map[string]string{
		"headers never finish": "POST /v1/log HTTP/1.1\r\nHost: x\r\n",
		"body never finishes":  "POST /v1/log HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"pro",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.Write([]byte(start))
			began := time.Now()
			conn.SetReadDeadline(time.Now().Add(time.Minute))
			_, err = io.Copy(io.Discard, conn) // returns when the server closes (or resets) the connection
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the server held a slow client for %v (%v)", time.Since(began), err)
			}
		})
	}
}

// TestOneServerPerDataFolder: a second server on the same data folder refuses to start
// and says which process holds it; management commands still work; once the first
// stops, a new one starts.
func TestOneServerPerDataFolder(t *testing.T) {
	t.Parallel()
	testbackend.SQLiteOnly(t)
	data := t.TempDir()
	first := startServer(t, data, nil)
	cfg := DefaultConfig()
	cfg.Addr, cfg.Data = "127.0.0.1:0", data
	second := &Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	err := second.Run(context.Background())
	if err == nil {
		second.Close()
		t.Fatal("a second server started on the same data folder")
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(err.Error(), data) {
		t.Fatalf("the refusal does not say who holds the folder: %v", err)
	}
	if code, _, errs := runCLI(t, data, "", "account", "create", "acme"); code != 0 {
		t.Fatalf("management command beside a server: %s", errs)
	}
	first.Close()
	third := startServer(t, data, nil)
	third.Close()
}

// TestBackupWhileServing: `tidings backup --to FILE` copies the embedded store while a
// server writes to it; the copy opens as a store with everything acknowledged before.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	testbackend.SQLiteOnly(t)
	data := t.TempDir()
	token := setupAccount(t, data)
	m := startServer(t, data, nil)
	for i := 0; i < 20; i++ {
		if status, _ := post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"before"}`); status != 200 {
			t.Fatal(status)
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // publishing goes on during the backup
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default: // not post(): t.Fatal belongs to the test's goroutine
				req, _ := http.NewRequest("POST", m.URL()+"/v1/log", strings.NewReader(`{"project":"my-saas","channel":"payments","event":"during"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				if res, err := http.DefaultClient.Do(req); err == nil {
					res.Body.Close()
				}
			}
		}
	}()
	copyDir := t.TempDir()
	file := filepath.Join(copyDir, sqlite.FileName)
	code, out, errs := runCLI(t, data, "", "backup", "--to", file)
	close(stop)
	<-done
	if code != 0 || !strings.Contains(out, "backed up") {
		t.Fatalf("backup: %d %s %s", code, out, errs)
	}
	if code, _, errs := runCLI(t, data, "", "backup", "--to", file); code == 0 || !strings.Contains(errs, "exists") {
		t.Fatalf("backup over an existing file: %d %s", code, errs)
	}
	copied, err := sqlite.Open(context.Background(), copyDir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	acme, err := copied.FindAccount(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	n, err := copied.CountEvents(context.Background(), acme.ID, "my-saas", "")
	if err != nil || n < 20 {
		t.Fatalf("the copy holds %d events (%v), want at least the 20 acknowledged before", n, err)
	}
}

// The server purges what a project keeps no longer, in the background, from its start.
func TestServeRetentionPurge(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	ctx := context.Background()
	s := testbackend.Open(t, loc)
	a, _ := s.CreateAccount(ctx, "acme")
	s.CreateProject(ctx, a.ID, "shop")
	s.CreateChannel(ctx, a.ID, "shop", "payments")
	now := time.Now()
	for i := range 30 {
		if _, err := s.PublishEvent(ctx, a.ID, &tidings.NewEvent{Project: "shop", Channel: "payments", Event: "Paid",
			Parser: tidings.ParserText, Timestamp: now.Add(-time.Duration(i)*24*time.Hour + time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetRetention(ctx, a.ID, "shop", 7); err != nil {
		t.Fatal(err)
	}
	startServer(t, loc, nil)
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := s.CountEvents(ctx, a.ID, "shop", "")
		if err != nil {
			t.Fatal(err)
		}
		if n == 8 { // today and the 7 days before
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events left 5 s after the start, want 8", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPrivateTargetsWarned: a server started with --allow-private-targets says in its
// log what that opens; one without says nothing of it.
func TestPrivateTargetsWarned(t *testing.T) {
	t.Parallel()
	testbackend.Once(t)
	for _, allow := range []bool{true, false} {
		var buf bytes.Buffer
		cfg := DefaultConfig()
		cfg.Addr, cfg.MetricsAddr, cfg.Data, cfg.AllowPrivateTargets = "127.0.0.1:0", "", t.TempDir(), allow
		m := &Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &buf}, nil))}
		if err := m.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		m.Close()
		if warned := strings.Contains(buf.String(), "level=WARN") && strings.Contains(buf.String(), "--allow-private-targets"); warned != allow {
			t.Fatalf("allow-private-targets %t: warned %t:\n%s", allow, warned, buf.String())
		}
	}
}

// TestAnswersCompressed: pages, assets and JSON go out compressed to a client that takes
// gzip, but not a single write's answer; a live stream never is, and its events still
// arrive one by one.
func TestAnswersCompressed(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	if code, _, errs := runCLI(t, data, "a long password\n", "user", "create", "ada@example.com"); code != 0 {
		t.Fatal(errs)
	}
	m := startServer(t, data, nil)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: &http.Transport{DisableCompression: true}}
	if res, err := c.PostForm(m.URL()+"/login", url.Values{"email": {"ada@example.com"}, "password": {"a long password"}}); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	get := func(path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", m.URL()+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := c.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: %v %v", path, res, err)
		}
		return res
	}
	feed := get("/p/my-saas")
	body, _ := io.ReadAll(feed.Body)
	feed.Body.Close()
	if feed.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("the feed page: Content-Encoding %q", feed.Header.Get("Content-Encoding"))
	}
	css := regexp.MustCompile(`/static/app\.[0-9a-f]+\.css`).Find(mustGunzip(t, body))
	for _, path := range []string{string(css), "/v1/openapi.yaml"} {
		res := get(path)
		res.Body.Close()
		if path == "" || res.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%q: Content-Encoding %q", path, res.Header.Get("Content-Encoding"))
		}
	}

	// A single write's answer is one object, sent as it is; a batch's is compressed.
	long := strings.Repeat("a long description ", 60)
	for _, w := range []struct{ path, body, want string }{
		{"/v1/log", `{"project":"my-saas","channel":"payments","event":"plain","description":"` + long + `"}`, ""},
		{"/api/v1/log", `{"project":"my-saas","channel":"payments","event":"plain","description":"` + long + `"}`, ""},
		{"/v1/log/batch", `{"events":[{"project":"my-saas","channel":"payments","event":"zipped","description":"` + long + `"}]}`, "gzip"},
	} {
		req, _ := http.NewRequest("POST", m.URL()+w.path, strings.NewReader(w.body))
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != w.want {
			t.Fatalf("POST %s: status %d, Content-Encoding %q, want %q", w.path, res.StatusCode, res.Header.Get("Content-Encoding"), w.want)
		}
		if w.want == "gzip" {
			b = mustGunzip(t, b)
		}
		if !strings.Contains(string(b), long) {
			t.Fatalf("POST %s: answer %.200s", w.path, b)
		}
	}

	stream := get("/p/my-saas/stream")
	defer stream.Body.Close()
	if ce := stream.Header.Get("Content-Encoding"); ce != "" {
		t.Fatalf("the live stream is compressed (%s): events would wait in the compressor", ce)
	}
	lines := bufio.NewScanner(stream.Body)
	for i := 0; i < 3; i++ {
		event := fmt.Sprintf("one by one %d", i)
		post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"`+event+`"}`)
		for lines.Scan() && !strings.Contains(lines.Text(), event) {
		}
		if lines.Err() != nil {
			t.Fatal(lines.Err())
		}
	}
}

func mustGunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServeExpiresIdempotencyKeys: the server deletes idempotency keys older than they
// are kept, in the background: clients' keys after tidings.IdempotencyKeep, hooks'
// delivery ids after tidings.HookKeyKeep.
func TestServeExpiresIdempotencyKeys(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	ctx := context.Background()
	s := testbackend.Open(t, loc)
	fx := testbackend.Seed(t, s, "acme")
	hookKey := tidings.HookKeyPrefix + "hook_0a1b2c3d4e5f:evt_1"
	for _, k := range []string{"k0", "k1", "k2", hookKey} {
		if _, err := s.PublishEvent(ctx, fx.Account.ID, &tidings.NewEvent{Project: "my-saas", Channel: "payments", Event: "Paid",
			Parser: tidings.ParserText, Key: &tidings.Keyed[*tidings.Event]{Key: k, Fingerprint: "f", Status: 200,
				Render: func(*tidings.Event) ([]byte, error) { return []byte("{}"), nil }}}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	cfg.Addr, cfg.MetricsAddr = "127.0.0.1:0", ""
	if testbackend.IsURL(loc) {
		cfg.DatabaseURL = loc
	} else {
		cfg.Data = loc
	}
	// serveAhead runs a server whose clock is ahead by d until key is gone.
	serveAhead := func(d time.Duration, key string) {
		t.Helper()
		later := func() time.Time { return time.Now().Add(d) }
		m := &Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: later}
		if err := m.Run(ctx); err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := s.FindAnswer(ctx, fx.Account.ID, key)
			if tidings.ErrorCode(err) == tidings.ENotFound {
				break
			}
			if err != nil || time.Now().After(deadline) {
				t.Fatalf("the key %s is still kept 30 s after the start (%v)", key, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A day and an hour ahead: clients' keys are expired, a hook's delivery id is not
	// (one purge deletes both kinds, so it was looked at when k2 went).
	serveAhead(tidings.IdempotencyKeep+time.Hour, "k2")
	if _, err := s.FindAnswer(ctx, fx.Account.ID, hookKey); err != nil {
		t.Fatalf("a hook's delivery id a day and an hour old: %v (kept %s)", err, tidings.HookKeyKeep)
	}
	serveAhead(tidings.HookKeyKeep+time.Hour, hookKey)
}
