package connlimit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// server serves handler behind a Limiter of cfg on a loopback port.
func server(t *testing.T, cfg Config, handler http.HandlerFunc) (*Limiter, string) {
	t.Helper()
	l := New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ConnState: l.ConnState, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute}
	go srv.Serve(l.Listen(ln))
	t.Cleanup(func() { srv.Close() })
	return l, ln.Addr().String()
}

// client is one keep-alive connection that sends requests by hand.
type client struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c, bufio.NewReader(c)}
}

// get sends GET path and reads the answer's status; an error when the server closed
// the connection.
func (c *client) get(path string) (int, error) {
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return 0, err
	}
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

// closed tells whether the server has closed the connection (waiting up to 30 s).
func (c *client) closed() bool {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := c.r.ReadByte()
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (l *Limiter) quietLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := l.quiet.front(); c != nil; c = c.next {
		n++
	}
	return n
}

// reasons counts OnClose's calls by reason.
type reasons struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *reasons) add(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[reason]++
}

func (r *reasons) get(reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[reason]
}

func ok(w http.ResponseWriter, r *http.Request) {}

// TestOldestIdleMakesRoom: at the cap a new client is served, and the connection idle
// the longest is the one closed for it; the others stay usable.
func TestOldestIdleMakesRoom(t *testing.T) {
	t.Parallel()
	var closed reasons
	l, addr := server(t, Config{Max: 3, BusyIdle: time.Hour, OnClose: closed.add}, ok)
	var idle []*client
	for i := range 3 {
		c := dial(t, addr)
		if code, err := c.get("/"); err != nil || code != 200 {
			t.Fatalf("client %d: %d %v", i, code, err)
		}
		idle = append(idle, c)
		waitFor(t, "the connection to be idle", func() bool { return l.quietLen() == i+1 })
	}
	if n := l.Open(); n != 3 {
		t.Fatalf("open = %d, want 3", n)
	}
	fresh := dial(t, addr)
	if code, err := fresh.get("/"); err != nil || code != 200 {
		t.Fatalf("a new client at the cap: %d %v", code, err)
	}
	if !idle[0].closed() {
		t.Fatal("the oldest idle connection was not closed")
	}
	for i, c := range idle[1:] {
		if code, err := c.get("/"); err != nil || code != 200 {
			t.Fatalf("idle client %d lost its connection: %d %v", i+1, code, err)
		}
	}
	if n := l.Open(); n > 3 {
		t.Fatalf("open = %d above the cap", n)
	}
	if closed.get(Evicted) != 1 || closed.get(Refused) != 0 {
		t.Fatalf("closed: %v", closed.n)
	}
}

// TestActiveNeverClosed: with every connection under way, a new one is closed at once
// (not left in the backlog), and the requests under way finish.
func TestActiveNeverClosed(t *testing.T) {
	t.Parallel()
	var closed reasons
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	l, addr := server(t, Config{Max: 2, BusyIdle: time.Hour, OnClose: closed.add}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started <- struct{}{}
			<-release
		}
	})
	busy := make([]*client, 2)
	answers := make(chan error, 2)
	for i := range busy {
		busy[i] = dial(t, addr)
		go func(c *client) {
			code, err := c.get("/slow")
			if err == nil && code != 200 {
				err = io.ErrUnexpectedEOF
			}
			answers <- err
		}(busy[i])
		<-started
	}
	waitFor(t, "both to be under way", func() bool { return l.quietLen() == 0 && l.Open() == 2 })
	for range 3 {
		extra := dial(t, addr)
		if !extra.closed() {
			t.Fatal("a connection past the cap was not closed")
		}
	}
	waitFor(t, "the refusals to be counted", func() bool { return closed.get(Refused) == 3 })
	close(release)
	for range busy {
		if err := <-answers; err != nil {
			t.Fatalf("a request under way was cut: %v", err)
		}
	}
	if closed.get(Evicted) != 0 {
		t.Fatalf("closed: %v", closed.n)
	}
	// Room again once they are idle: the next client is served.
	waitFor(t, "idle", func() bool { return l.quietLen() == 2 })
	if code, err := dial(t, addr).get("/"); err != nil || code != 200 {
		t.Fatalf("after the busy ones: %d %v", code, err)
	}
}

// TestBusyIdle: above half the cap, connections idle longer than BusyIdle are closed,
// the longest idle first, until half the cap is left.
func TestBusyIdle(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var closed reasons
	l, addr := server(t, Config{Max: 4, BusyIdle: time.Hour, OnClose: closed.add, Now: clock}, ok)
	var idle []*client
	for i := range 3 {
		c := dial(t, addr)
		if _, err := c.get("/"); err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
		waitFor(t, "idle", func() bool { return l.quietLen() == i+1 })
		mu.Lock()
		now = now.Add(time.Minute)
		mu.Unlock()
	}
	l.sweep()
	if closed.get(Idle) != 0 {
		t.Fatal("closed before BusyIdle")
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	l.sweep()
	if !idle[0].closed() {
		t.Fatal("the longest idle was not closed")
	}
	if closed.get(Idle) != 1 || l.Open() != 2 {
		t.Fatalf("closed %v, open %d: want 1 closed, 2 open (half the cap)", closed.n, l.Open())
	}
	for _, c := range idle[1:] {
		if _, err := c.get("/"); err != nil {
			t.Fatalf("at half the cap a connection was closed: %v", err)
		}
	}
}

func TestDefaultMax(t *testing.T) {
	for _, c := range []struct{ nofile, reserve, want int }{
		{256, 200, 128},         // the reserve takes at most half
		{1024, 200, 824},        // the usual soft limit
		{1 << 20, 200, Ceiling}, // a container's
		{0, 200, Ceiling},       // unknown
		{1, 200, 1},             // never 0
		{100000, 1000, Ceiling}, // above the ceiling
		{10000, 1000, 10000 - 1000},
	} {
		if got := DefaultMax(c.nofile, c.reserve); got != c.want {
			t.Errorf("DefaultMax(%d, %d) = %d, want %d", c.nofile, c.reserve, got, c.want)
		}
	}
}
