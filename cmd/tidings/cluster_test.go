package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/pgtest"
	"github.com/tidings-dev/tidings/internal/testbackend"
	"github.com/tidings-dev/tidings/internal/tokencache"
)

func clusterOnly(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the real binary")
	}
	if !testbackend.Postgres() {
		t.Skip("a cluster shares a PostgreSQL database: runs in the PostgreSQL run")
	}
}

func send(t *testing.T, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil, ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// TestTwoInstances runs two `tidings serve` processes on one database, as behind a
// load balancer: an event published on one reaches a dashboard on the other, increments split between them add up exactly, each webhook message
// is sent once although both run a delivery runner, and a revocation made with the
// CLI holds on both at once.
func TestTwoInstances(t *testing.T) {
	t.Parallel()
	clusterOnly(t)
	loc := testbackend.Location(t)
	token := setupAccount(t, loc)
	var mu sync.Mutex
	seen := map[string]int{}
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	defer rx.Close()
	if code, _, errs := runCLI(t, loc, "", "webhook", "create", "--project", "my-saas", "--url", rx.URL, "--events", "all", "--allow-private-targets"); code != 0 {
		t.Fatal(errs)
	}
	_, a := serveProcess(t, loc, "--allow-private-targets")
	_, b := serveProcess(t, loc, "--allow-private-targets")
	liveAcross(t, loc, a, b, token)

	var wg sync.WaitGroup
	for w := 0; w < 10; w++ {
		url := []string{a, b}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if status, _, body := send(t, "PATCH", url+"/v1/insight", token,
					`{"project":"my-saas","title":"Signups","value":{"$inc":1}}`); status != 200 {
					t.Errorf("increment: %d %s", status, body)
					return
				}
				if i%10 == 0 {
					if status, _, body := send(t, "POST", url+"/v1/log", token,
						fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"e-%d-%d"}`, w, i)); status != 200 {
						t.Errorf("publish: %d %s", status, body)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, url := range []string{a, b} {
		if _, _, body := send(t, "GET", url+"/v1/insights?project=my-saas", token, ""); !strings.Contains(body, `"value":"1000"`) {
			t.Fatalf("after 1,000 increments through two instances: %s", body)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 120 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // a second send would come now
	mu.Lock()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("webhook message %s sent %d times", id, n)
		}
	}
	if len(seen) != 120 { // 20 live ones, then 100
		t.Errorf("%d webhook messages for 120 events", len(seen))
	}
	mu.Unlock()

	code, out, errs := runCLI(t, loc, "", "token", "create", "--access", "full")
	if code != 0 {
		t.Fatal(errs)
	}
	second := strings.TrimSpace(out)
	id, _, _ := tidings.ParseTokenSecret(second)
	for _, url := range []string{a, b} {
		if status, _, _ := send(t, "GET", url+"/v1/insights?project=my-saas", second, ""); status != 200 {
			t.Fatalf("new token: %d", status)
		}
	}
	if code, _, errs := runCLI(t, loc, "", "token", "revoke", id); code != 0 {
		t.Fatal(errs)
	}
	// The CLI is another process: each instance trusts its copy of the token for at
	// most a second (tokencache.TTL), then must refuse it.
	revoked := time.Now()
	for _, url := range []string{a, b} {
		for {
			status, _, _ := send(t, "GET", url+"/v1/insights?project=my-saas", second, "")
			if status == 401 {
				break
			}
			if time.Since(revoked) > tokencache.TTL+30*time.Second { // the cache's TTL, and a loaded machine's slack
				t.Fatalf("revoked token on %s: still %d after %v", url, status, time.Since(revoked))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("revocation by the CLI effective on both instances after %v", time.Since(revoked).Round(time.Millisecond))
}

// liveAcross signs in to B's dashboard, opens the project's live feed there, and
// publishes on A: each event reaches B's feed (the test logs the median time; the
// postgres package's BenchmarkLiveAcrossInstances measures it).
func liveAcross(t *testing.T, loc, a, b, token string) {
	t.Helper()
	if code, _, errs := runCLI(t, loc, "a long password\n", "user", "create", "ada@example.com"); code != 0 {
		t.Fatal(errs)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.PostForm(b+"/login", url.Values{"email": {"ada@example.com"}, "password": {"a long password"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	req, _ := http.NewRequest("GET", b+"/p/my-saas/stream", nil)
	for _, c := range res.Cookies() {
		req.AddCookie(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("B's live feed: %v %v (sign-in: %s)", stream, err, res.Status)
	}
	defer stream.Body.Close()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var lat []time.Duration
	for i := 0; i < 20; i++ {
		start := time.Now()
		status, _, body := send(t, "POST", a+"/v1/log", token, fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"live %d"}`, i))
		if status != 200 {
			t.Fatalf("publish on A: %d %s", status, body)
		}
		id := strings.Split(strings.Split(body, `"id":"`)[1], `"`)[0]
		for found := false; !found; {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatal("B's live feed ended")
				}
				found = strings.Contains(line, id)
			case <-time.After(30 * time.Second):
				t.Fatalf("event %d published on A never reached B's dashboard", i)
			}
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	t.Logf("publish on A → B's dashboard feed: median %v, max %v", lat[len(lat)/2], lat[len(lat)-1])

	// Signing out on A ends the session's live feed on B within a second.
	out, _ := http.NewRequest("POST", a+"/logout", nil)
	for _, c := range res.Cookies() {
		out.AddCookie(c)
	}
	if r, err := noRedirect.Do(out); err != nil || r.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out on A: %v %v", r, err)
	}
	start := time.Now()
	for {
		select {
		case _, ok := <-lines:
			if !ok {
				t.Logf("B's feed ended %v after the sign-out on A", time.Since(start))
				return
			}
		case <-time.After(time.Second - time.Since(start)):
			t.Fatal("the session signed out on A still streams on B after a second")
		}
	}
}

// TestDatabaseOutage ends every connection of the server to PostgreSQL, three times,
// under load (as a database restart or a failover does): requests meanwhile get 200 or
// 503 with Retry-After (never a 500, never a hang), every event answered 200 is
// stored, and the service recovers by itself.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	clusterOnly(t)
	loc := testbackend.Location(t)
	token := setupAccount(t, loc)
	_, url := serveProcess(t, loc)

	stop := make(chan struct{})
	var mu sync.Mutex
	var acked []string
	statuses := map[int]int{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("POST", url+"/v1/log", strings.NewReader(
					fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":"e-%d-%d"}`, w, i)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := client.Do(req)
				if err != nil {
					t.Errorf("request failed (a hang or a dropped connection): %v", err)
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				mu.Lock()
				statuses[res.StatusCode]++
				switch res.StatusCode {
				case 200:
					acked = append(acked, strings.Split(strings.Split(string(b), `"id":"`)[1], `"`)[0])
				case 503:
					if res.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "unavailable") {
						t.Errorf("503 without Retry-After or code: %s", b)
					}
				default:
					t.Errorf("status %d during the outage: %s", res.StatusCode, b)
				}
				mu.Unlock()
				if res.StatusCode == 503 {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	ended := 0
	for i := 0; i < 3; i++ {
		time.Sleep(300 * time.Millisecond)
		ended += pgtest.Terminate(t, loc, "%")
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("ended %d connections; answers: %v", ended, statuses)
	if ended == 0 {
		t.Fatal("no connection was ended: the test did not test anything")
	}
	// The server recovers by itself: a client that retries as told is answered 200.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		status, _, body := send(t, "POST", url+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"after"}`)
		if status == 200 {
			break
		}
		if status != 503 || time.Now().After(deadline) {
			t.Fatalf("after the outage: %d %s", status, body)
		}
	}
	if res, err := http.Get(url + "/readyz"); err != nil || res.StatusCode != 200 {
		t.Fatalf("readyz after the outage: %v %v", res, err)
	}
	stored := storedIDs(t, loc)
	for _, id := range acked {
		if !stored[id] {
			t.Fatalf("event %s was answered 200 but is not stored", id)
		}
	}
	t.Logf("%d acknowledged events, all stored", len(acked))
}
