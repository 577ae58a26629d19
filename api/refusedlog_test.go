package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log the timer's flush and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// refusingMux answers POST /v1/log with 401, POST /v1/insight with 429 and GET /ok with 200.
func refusingMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/log", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) })
	mux.HandleFunc("POST /v1/insight", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) })
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) {})
	return mux
}

// flood sends the refusals: 10,000 401s and 500 429s from one client, then
// one 401 from each of 1,000 others. It returns how many.
func flood(h http.Handler) int {
	n := 0
	send := func(method, path, addr string) {
		r := httptest.NewRequest(method, path, nil)
		r.RemoteAddr = addr
		h.ServeHTTP(httptest.NewRecorder(), r)
		n++
	}
	for i := range 10000 {
		send("POST", "/v1/log", fmt.Sprintf("203.0.113.9:%d", 1024+i%50000))
	}
	for range 500 {
		send("POST", "/v1/insight", "203.0.113.9:5000")
	}
	for i := range 1000 {
		send("POST", "/v1/log", fmt.Sprintf("10.0.%d.%d:4000", i/250, i%250))
	}
	return n
}

var countAttr = regexp.MustCompile(` count=(\d+)`)

// tally reads a text log: the requests logged one by one (by status), the summary
// lines and the refusals they count.
func tally(t *testing.T, log string) (single map[string]int, summaries, counted int, byClient map[string]int) {
	t.Helper()
	single, byClient = map[string]int{}, map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		switch {
		case strings.Contains(line, "msg=request "):
			single[regexp.MustCompile(`status=(\d+)`).FindStringSubmatch(line)[1]]++
		case strings.Contains(line, `msg="refused requests"`):
			summaries++
			m := countAttr.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("a summary without its count: %s", line)
			}
			n, _ := strconv.Atoi(m[1])
			counted += n
			client := regexp.MustCompile(`client=(\S+)`).FindStringSubmatch(line)[1]
			byClient[client] += n
		case line != "":
			t.Fatalf("unexpected line: %s", line)
		}
	}
	return
}

// TestRefusedRequestsAggregated: within one period the first refusal of each kind is
// logged in full, the others are counted per client (the clients past the bound as
// "other"), and the counts add up.
func TestRefusedRequestsAggregated(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	rl := newRefusedLog(log.Handler(), time.Now, time.Hour) // one period: flushed below
	h := middleware(refusingMux(), log, nil, rl, nil)
	sent := flood(h)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/ok", nil))
	rl.flush()
	single, summaries, counted, byClient := tally(t, buf.String())
	if single["401"] != 1 || single["429"] != 1 || single["200"] != 1 {
		t.Fatalf("logged one by one: %v; want the first 401, the first 429 and the 200", single)
	}
	if single["401"]+single["429"]+counted != sent {
		t.Fatalf("%d logged and %d counted of %d refusals", single["401"]+single["429"], counted, sent)
	}
	// Client 203.0.113.9: both kinds; 63 more clients apart; the rest as one line.
	if summaries != refusedClients+1 {
		t.Fatalf("%d summary lines, want %d", summaries, refusedClients+1)
	}
	if byClient["203.0.113.9"] != 9999+499 || byClient["other"] != 1000-(refusedClients-2) {
		t.Fatalf("counts by client: 203.0.113.9 %d, other %d", byClient["203.0.113.9"], byClient["other"])
	}
	// A new period logs the first of each kind again.
	buf.b.Reset()
	r := httptest.NewRequest("POST", "/v1/log", nil)
	h.ServeHTTP(httptest.NewRecorder(), r)
	if single, _, _, _ := tally(t, buf.String()); single["401"] != 1 {
		t.Fatalf("the first refusal of a new period: %v", single)
	}
	rl.flush()
}

// TestRefusedRequestsBoundTheLog is the flood through the server's middleware,
// on the real clock: the log stays a few lines per period, whatever the flood's size.
// Before, it was one line per refusal (85,356 401s wrote 12.2 MB in 3 s).
func TestRefusedRequestsBoundTheLog(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	h := Middleware(refusingMux(), slog.New(slog.NewTextHandler(&buf, nil)), nil)
	began := time.Now()
	sent := flood(h)
	// The counts arrive at the end of each period.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		single, _, counted, _ := tally(t, buf.String())
		if single["401"]+single["429"]+counted == sent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d logged and %d counted of %d refusals", single["401"]+single["429"], counted, sent)
		}
	}
	// Each period the flood spans writes at most a line per kind and per client counted.
	periods := int(time.Since(began)/refusedPeriod) + 2
	lines := strings.Count(buf.String(), "\n")
	if max := periods * (2 + refusedClients + 2); lines > max {
		t.Fatalf("%d refusals wrote %d lines (%d bytes) in %d periods: want at most %d", sent, lines, len(buf.String()), periods, max)
	}
	t.Logf("%d refusals: %d lines, %d bytes", sent, lines, len(buf.String()))
}

// TestRefusedAnonymousAndBehindProxy: a scanner's 404s on paths that name nothing are
// refusals too (anonymous, as fast as it can send), and behind a trusted proxy each
// client is counted by its X-Forwarded-For address, not the proxy's.
func TestRefusedAnonymousAndBehindProxy(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	rl := newRefusedLog(log.Handler(), time.Now, time.Hour)
	proxy := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	h := middleware(refusingMux(), log, nil, rl, proxy)
	const n = 2000
	for i := range n {
		r := httptest.NewRequest("GET", fmt.Sprintf("/wp-login-%d.php", i), nil)
		r.RemoteAddr = "127.0.0.1:4000"
		r.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i%2))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	rl.flush()
	single, summaries, counted, byClient := tally(t, buf.String())
	if single["404"] != 1 || single["404"]+counted != n {
		t.Fatalf("%d 404s logged one by one and %d counted, of %d", single["404"], counted, n)
	}
	if summaries != 2 || byClient["198.51.100.0"]+byClient["198.51.100.1"] != n-1 || byClient["127.0.0.1"] != 0 {
		t.Fatalf("%d summary lines, by client %v: want the two clients behind the proxy", summaries, byClient)
	}
}

// TestRefusedLogClose: a server that stops writes the counts of the period under way,
// and its timer writes nothing after.
func TestRefusedLogClose(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	rl := newRefusedLog(log.Handler(), time.Now, time.Hour)
	h := middleware(refusingMux(), log, nil, rl, nil)
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/log", nil))
	}
	rl.close()
	single, summaries, counted, _ := tally(t, buf.String())
	if single["401"] != 1 || summaries != 1 || counted != 2 {
		t.Fatalf("at close: %v logged one by one, %d summaries counting %d; want the first 401 and one line of 2", single, summaries, counted)
	}
	// After close a refusal is logged in full, and no period starts.
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/log", nil))
	rl.mu.Lock()
	open := rl.open
	rl.mu.Unlock()
	if single, _, _, _ := tally(t, buf.String()); single["401"] != 2 || open {
		t.Fatalf("after close: %v logged one by one, a period open: %v", single, open)
	}
}
