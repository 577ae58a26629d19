// Package connlimit caps the connections an HTTP server holds open, below the process's
// file limit: 20,000 anonymous clients that each sent one request and then stayed idle
// for the whole IdleTimeout took every file descriptor, and accept4 failed with "too
// many open files" for everyone else (health checks and publishes timed out).
//
// At the cap the listener never stops accepting, which would leave new clients in the
// kernel's backlog until they time out: it closes the connection that has been quiet
// (idle between requests, or new and silent) the longest to make room, and only when
// every connection is busy with a request does it close the new one at once. Above half
// the cap, a connection idle for longer than BusyIdle is closed, instead of after the
// server's IdleTimeout. A connection under way is never closed.
//
// Wire both halves: the server's ConnState hook (srv.ConnState = l.ConnState) and its
// listener (srv.Serve(l.Listen(ln))); TLS may wrap the listener Listen returns.
package connlimit

import (
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Reasons a connection is closed by the limiter, as OnClose receives them.
const (
	Evicted = "evicted" // the longest quiet one, to make room at the cap
	Refused = "refused" // a new one, at the cap with every connection busy
	Idle    = "idle"    // idle longer than BusyIdle while above half the cap
)

// DefaultBusyIdle is how long a connection may stay idle while above half the cap.
const DefaultBusyIdle = 5 * time.Second

// Config is a Limiter's.
type Config struct {
	Max      int           // connections open at once; at least 1
	BusyIdle time.Duration // zero: DefaultBusyIdle
	// OnClose, if set, learns of each connection the limiter closes (Evicted, Refused,
	// Idle): a counter for operators.
	OnClose func(reason string)
	Now     func() time.Time // zero: time.Now
}

// Limiter counts the connections of one listener and tracks which are quiet.
type Limiter struct {
	max      int
	busyIdle time.Duration
	onClose  func(string)
	now      func() time.Time

	mu    sync.Mutex
	open  int
	quiet list // new or idle connections, the longest quiet first
	stop  chan struct{}
	once  sync.Once
}

// New returns a Limiter of c.Max connections.
func New(c Config) *Limiter {
	l := &Limiter{max: max(c.Max, 1), busyIdle: c.BusyIdle, onClose: c.OnClose, now: c.Now, stop: make(chan struct{})}
	if l.busyIdle <= 0 {
		l.busyIdle = DefaultBusyIdle
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.onClose == nil {
		l.onClose = func(string) {}
	}
	return l
}

// Max is the cap.
func (l *Limiter) Max() int { return l.max }

// Open is the number of connections open now.
func (l *Limiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Listen wraps ln: its connections are counted and capped. Closing it stops the
// limiter's sweeps of idle connections.
func (l *Limiter) Listen(ln net.Listener) net.Listener {
	go l.sweepEvery(max(l.busyIdle/4, 100*time.Millisecond))
	return &listener{Listener: ln, l: l}
}

type listener struct {
	net.Listener
	l *Limiter
}

func (ln *listener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc := ln.l.admit(c); tc != nil {
			return tc, nil
		}
		// Refused and closed: the next one may find room. The loop never waits, so the
		// backlog keeps draining.
	}
}

func (ln *listener) Close() error {
	ln.l.once.Do(func() { close(ln.l.stop) })
	return ln.Listener.Close()
}

// admit counts c in, closing the longest quiet connection at the cap; with none, it
// closes c and returns nil.
func (l *Limiter) admit(c net.Conn) *conn {
	l.mu.Lock()
	var victim *conn
	if l.open >= l.max {
		victim = l.quiet.front()
		if victim == nil {
			l.mu.Unlock()
			c.Close()
			l.onClose(Refused)
			return nil
		}
		l.releaseLocked(victim)
	}
	tc := &conn{Conn: c, l: l}
	l.open++
	// Quiet from the start: a client that connects and sends nothing is as idle as one
	// between requests (the server's ReadHeaderTimeout ends it too).
	l.quiet.pushBack(tc, l.now())
	l.mu.Unlock()
	if victim != nil {
		victim.Conn.Close() // its server goroutine sees the error and ends
		l.onClose(Evicted)
	}
	return tc
}

// ConnState is the server's hook: it tells the limiter which connections are quiet.
func (l *Limiter) ConnState(nc net.Conn, state http.ConnState) {
	c := unwrap(nc)
	if c == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.released {
		return
	}
	switch state {
	case http.StateIdle:
		l.quiet.remove(c)
		l.quiet.pushBack(c, l.now())
	case http.StateActive, http.StateHijacked:
		l.quiet.remove(c) // never closed by the limiter while under way
	case http.StateClosed:
		l.releaseLocked(c)
	}
}

// unwrap finds the limiter's connection under a TLS one.
func unwrap(nc net.Conn) *conn {
	for range 4 {
		switch v := nc.(type) {
		case *conn:
			return v
		case interface{ NetConn() net.Conn }:
			nc = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

func (l *Limiter) releaseLocked(c *conn) {
	if !c.released {
		c.released = true
		l.open--
		l.quiet.remove(c)
	}
}

func (l *Limiter) sweepEvery(d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.sweep()
		}
	}
}

// sweep closes, while above half the cap, the connections idle for longer than
// BusyIdle. Each holds a file descriptor, a goroutine and its buffers (20,000 idle
// ones took the process from 40 to 490 MB).
func (l *Limiter) sweep() {
	var closing []*conn
	l.mu.Lock()
	cutoff := l.now().Add(-l.busyIdle)
	for l.open > l.max/2 {
		c := l.quiet.front()
		if c == nil || c.since.After(cutoff) {
			break
		}
		l.releaseLocked(c)
		closing = append(closing, c)
	}
	l.mu.Unlock()
	for _, c := range closing {
		c.Conn.Close()
		l.onClose(Idle)
	}
}

// conn is a counted connection; it is also its own element in the quiet list.
type conn struct {
	net.Conn
	l *Limiter
	// Guarded by l.mu.
	released   bool
	inList     bool
	since      time.Time // quiet since
	prev, next *conn
}

func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

var (
	_ io.ReaderFrom                   = (*conn)(nil)
	_ interface{ CloseWrite() error } = (*conn)(nil) // net/http looks for it by this shape
)

// CloseWrite keeps net/http's graceful close (a 413 with Connection: close reaches the
// client before the connection ends, rather than a reset).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// ReadFrom keeps the TCP connection's sendfile and splice for files.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// list is a doubly linked list of connections in the order they became quiet: moving
// one in or out is O(1), and the longest quiet is at the front.
type list struct{ head, tail *conn }

func (q *list) front() *conn { return q.head }

func (q *list) pushBack(c *conn, now time.Time) {
	c.since, c.inList, c.prev, c.next = now, true, q.tail, nil
	if q.tail != nil {
		q.tail.next = c
	} else {
		q.head = c
	}
	q.tail = c
}

func (q *list) remove(c *conn) {
	if !c.inList {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		q.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		q.tail = c.prev
	}
	c.prev, c.next, c.inList = nil, nil, false
}

// Ceiling bounds the default cap however high the file limit (often a million in
// containers): an idle connection costs about 22 KiB (20,000 took 450 MB).
const Ceiling = 16384

// DefaultMax is the cap for a file limit of nofile descriptors, reserve of them kept
// for everything else (the store, outbound connections, log files), at most half of
// them; at most Ceiling, and Ceiling when the limit is unknown (0).
func DefaultMax(nofile, reserve int) int {
	if nofile <= 0 {
		return Ceiling
	}
	return min(max(nofile-min(reserve, nofile/2), 1), Ceiling)
}
