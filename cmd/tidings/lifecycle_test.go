package main

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestServeLeavesNoGoroutine: a server that has published events, delivered a webhook
// and kept a live feed open stops every goroutine it started when it is closed — the
// HTTP servers, the fan-out, the delivery runner, the purge, the usage flush and, on
// PostgreSQL, the relay and the heartbeat. Not parallel: it counts the process's
// goroutines.
func TestServeLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	loc := testbackend.Location(t)
	token := setupAccount(t, loc)
	if code, _, errs := runCLI(t, loc, "a long password\n", "user", "create", "ada@example.com"); code != 0 {
		t.Fatal(errs)
	}
	hooked := make(chan struct{}, 10)
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hooked <- struct{}{} }))
	defer rx.Close()
	if code, _, errs := runCLI(t, loc, "", "webhook", "create", "--project", "my-saas", "--url", rx.URL, "--events", "all", "--allow-private-targets"); code != 0 {
		t.Fatal(errs)
	}
	m := startServer(t, loc, func(c *Config) { c.MetricsAddr = "127.0.0.1:0"; c.AllowPrivateTargets = true })
	tr := &http.Transport{}
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, m.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b := new(strings.Builder)
		bufio.NewReader(res.Body).WriteTo(b)
		if res.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
		return b.String()
	}

	res, err := client.PostForm(m.URL()+"/login", url.Values{"email": {"ada@example.com"}, "password": {"a long password"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	req, _ := http.NewRequest("GET", m.URL()+"/p/my-saas/stream", nil)
	for _, c := range res.Cookies() {
		req.AddCookie(c)
	}
	stream, err := client.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("live feed: %v %v", stream, err)
	}
	defer stream.Body.Close()
	lines := bufio.NewScanner(stream.Body)
	send("POST", "/v1/log", `{"project":"my-saas","channel":"payments","event":"on its way"}`)
	for lines.Scan() && !strings.Contains(lines.Text(), "on its way") {
	}
	select {
	case <-hooked:
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook was never delivered")
	}

	if err := m.Close(); err != nil { // with the live feed still open
		t.Fatal(err)
	}
	for lines.Scan() { // the feed ends
	}
	stream.Body.Close()
	tr.CloseIdleConnections()
	rx.Close()
	goleak.VerifyNone(t, before)
}
